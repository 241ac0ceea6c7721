"""A sandboxed command's network, limited to allowed hosts: an HTTP proxy outside, no network inside.

Run as a program (by the rewritten command, only for a step whose network is an allowlist) as
``python3 -I -S netproxy.py SOCKET INSIDE_SOCKET BWRAP GROUP... -- BWRAP_ARGS...``: it listens on the
unix socket ``SOCKET`` (in the job's private /tmp, where the sandbox sees it as ``INSIDE_SOCKET``),
starts bwrap (whose arguments give the command no network of its own, ``--unshare-net``) with
``HTTP_PROXY``/``HTTPS_PROXY`` pointing at a forwarder the inner shell starts on 127.0.0.1:3128, and
relays CONNECT tunnels and plain HTTP requests only to the allowed hosts. Each GROUP is a
comma-separated list of host patterns (the step's ``sandbox.network.allow_hosts``, or one
``allow_hosts`` rule); a host must match a pattern of every group, compared as the rules compare
hosts (``store.plan.hosts``: ``pypi.org``, ``*.github.com`` for its subdomains, addresses).
Anything that ignores the proxy variables has no network at all. It lives exactly as long as the
command; it is the one case where a second interpreter starts.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import socketserver
import subprocess
import sys
import threading

if __name__ == "__main__":  # run as a program (-I: its folder is not on sys.path): store/ is three folders up
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from store.base import descriptors  # noqa: E402 - after the path above
from store.plan.hostnames import normal_host  # noqa: E402
from store.plan.hosts import host_matches  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Tuple

PORT = 3128
FORWARDER = (  # runs inside the sandbox: 127.0.0.1:3128 -> the proxy's unix socket
    "import socket, sys, threading\n"
    "def pipe(a, b):\n"
    "    try:\n"
    "        while True:\n"
    "            d = a.recv(65536)\n"
    "            if not d: break\n"
    "            b.sendall(d)\n"
    "    except OSError: pass\n"
    "    finally:\n"
    "        for s in (a, b):\n"
    "            try: s.shutdown(socket.SHUT_RDWR)\n"
    "            except OSError: pass\n"
    "srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "srv.bind(('127.0.0.1', 3128)); srv.listen(64); print('ready', flush=True)\n"
    "while True:\n"
    "    c, _ = srv.accept(); u = socket.socket(socket.AF_UNIX); u.connect(sys.argv[1])\n"
    "    for a, b in ((c, u), (u, c)): threading.Thread(target=pipe, args=(a, b), daemon=True).start()\n")


def allowed(host: str, groups: Sequence[str]) -> bool:
    """``host`` matches a pattern of every group (each group: patterns joined by commas)."""
    host = normal_host(host)
    return bool(groups) and all(any(host_matches(host, p) for p in group.split(",") if p) for group in groups)


def target_of(head: bytes) -> Optional[Tuple[str, str, int, bytes]]:
    """(method, host, port, the request line to send upstream) of a proxy request, or ``None``."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    try:
        method, target, version = line.split(" ", 2)
    except ValueError:
        return None
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (method, host, int(port), b"") if port.isdigit() else None
    if not target.startswith("http://"):
        return None
    hostport, _, path = target[7:].partition("/")
    host, _, port = hostport.partition(":")
    return method, host, int(port or 80), f"{method} /{path} {version}".encode("latin-1")


def _relay(a: socket.socket, b: socket.socket) -> None:
    sockets = [a, b]
    try:
        while True:
            ready, _, _ = select.select(sockets, [], [])
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        pass
    finally:
        a.close()
        b.close()


def handler(groups: Sequence[str]) -> type:
    class Proxy(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            client: socket.socket = self.request
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            found = target_of(head)
            if found is None or not allowed(found[1], groups):
                host = found[1] if found else "?"
                body = (f"baton: {host} is not an allowed host (the job's allow_hosts rules, the step's sandbox "
                        "network)\n").encode()
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                               % (len(body), body))
                return
            method, host, port, first = found
            try:
                upstream = socket.create_connection((host, port), timeout=30)
            except OSError as exc:
                client.sendall(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}\n".encode())
                return
            rest = head.split(b"\r\n\r\n", 1)[1] if method == "CONNECT" else head.split(b"\r\n", 1)[1]
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                rest = first + b"\r\n" + rest
            if rest:
                upstream.sendall(rest)
            _relay(client, upstream)

    return Proxy


def serve(path: str, groups: Sequence[str]) -> socketserver.ThreadingUnixStreamServer:
    if os.path.exists(path):
        os.unlink(path)
    os.chdir(os.path.dirname(path))  # bound by its short name: a socket's path may not pass ~100 bytes
    server = socketserver.ThreadingUnixStreamServer(os.path.basename(path), handler(groups))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def bwrap_argv(bwrap: str, inside_socket: str, rest: List[str]) -> List[str]:
    """bwrap's command line: the proxy variables (and what the inner shell needs to start the
    forwarder to ``inside_socket``), then ``rest`` as the rewritten command gave it."""
    proxy = f"http://127.0.0.1:{PORT}"
    env = [a for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
           for a in ("--setenv", name, proxy)]
    env += ["--setenv", "NO_PROXY", "", "--setenv", "no_proxy", "", "--setenv", "__baton_proxy", inside_socket,
            "--setenv", "__baton_python", sys.executable, "--setenv", "__baton_forwarder", FORWARDER]
    return [bwrap, *env, *rest]


def main(argv: List[str]) -> int:
    """``SOCKET INSIDE_SOCKET BWRAP GROUP... -- REST...``: bwrap run with the proxy alive; its exit status."""
    split = argv.index("--")
    sock, inside, bwrap, groups, rest = argv[0], argv[1], argv[2], argv[3:split], argv[split + 1:]
    server = serve(sock, groups)
    try:
        keep = tuple(fd for fd in (4, 7) if descriptors.is_open(fd))  # the report pipe and bwrap's arguments
        proc = subprocess.Popen(bwrap_argv(bwrap, inside, rest), pass_fds=keep)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda number, _frame: proc.send_signal(number))
        code = proc.wait()
    finally:  # the serving thread is a daemon: it ends with this process (shutdown() would wait half a second)
        server.server_close()
        if os.path.exists(sock):
            os.unlink(sock)
    return descriptors.shell_status(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
