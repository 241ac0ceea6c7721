"""A real OpenTelemetry collector for the tests: rotel (PyPI ``rotel``, test-only) on loopback ports,
printing what it receives with its detailed debug log, behind a small proxy that checks every body
baton sends against the official protobuf schema (``opentelemetry-proto``'s ``json_format.Parse``)
and the exact ``Content-Type``, then forwards it unchanged. Given ``required`` headers, the proxy
answers 401 to a request without them, as a collector behind an authenticating gateway does.

``parse_debug`` reads rotel's debug dump (the OpenTelemetry debug exporter's text layout) back into
metrics (name, type, unit, resource, points with attributes and value) and log records.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple


def rotel_agent() -> Path:
    import rotel  # test-only: pinned in dev/requirements-test.txt

    return Path(rotel.__file__).parent / "rotel-agent"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def validate(path: str, raw: bytes) -> str:
    """Parse ``raw`` as the OTLP request for ``path`` with protobuf's strict JSON parser; '' when valid."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    message = ExportMetricsServiceRequest() if path.endswith("/v1/metrics") else ExportLogsServiceRequest()
    try:
        json_format.Parse(raw.decode("utf-8"), message)
    except (json_format.ParseError, UnicodeDecodeError) as exc:
        return str(exc)
    return ""


class Rotel:
    """rotel-agent with the blackhole exporter and its debug log in a file (never a pipe: a full pipe
    blocks it). ``endpoint`` is the checking proxy in front of it."""

    def __init__(self, required: Optional[Dict[str, str]] = None) -> None:
        self.required = {k.lower(): v for k, v in (required or {}).items()}
        self.dir = Path(tempfile.mkdtemp(prefix="baton-rotel-"))
        self.http_port, self.grpc_port = free_port(), free_port()
        self.out = self.dir / "stdout.txt"
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.bodies: List[Tuple[str, str, bytes, str]] = []  # (path, content type, body, protobuf error)
        self.answers: List[int] = []
        self.headers: List[Tuple[str, Dict[str, str]]] = []  # (path, the request's headers, lower-case names)
        self.proxy = _proxy(self)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.proxy.server_address[1]}"

    def start(self) -> Rotel:
        args = [str(rotel_agent()), "start", "--exporter", "blackhole",
                "--otlp-http-endpoint", f"127.0.0.1:{self.http_port}",
                "--otlp-grpc-endpoint", f"127.0.0.1:{self.grpc_port}",  # it always binds gRPC too
                "--debug-log", "metrics", "--debug-log", "logs", "--debug-log-verbosity", "detailed",
                "--log-format", "json", "--pid-file", str(self.dir / "pid"), "--log-file", str(self.dir / "log"),
                "--batch-timeout", "50ms"]
        with open(self.out, "ab") as sink:
            self.proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "NO_COLOR": "1"}, start_new_session=True)
        deadline = time.monotonic() + 15
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rotel exited with {self.proc.returncode}: {self.out.read_text()[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.http_port), timeout=0.2):
                    return self
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def close(self) -> None:
        self.stop()
        self.proxy.shutdown()
        self.proxy.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def text(self) -> str:
        return self.out.read_text("utf-8", "replace")

    def wait_for(self, needle: str, count: int = 1, timeout: float = 20.0) -> Dict[str, List[Dict[str, Any]]]:
        """The parsed dump once ``needle`` appears ``count`` times in it."""
        deadline = time.monotonic() + timeout
        while self.text().count(needle) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{needle!r} x{count} not in rotel's output after {timeout}s:\n"
                                   f"{self.text()[-3000:]}")
            time.sleep(0.05)
        return parse_debug(self.text())


def _proxy(collector: Rotel) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            ctype = str(self.headers.get("content-type"))
            given = {k.lower(): v for k, v in self.headers.items()}
            collector.headers.append((self.path, given))
            if any(given.get(k) != v for k, v in collector.required.items()):
                collector.answers.append(401)
                self.send_response(401)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            collector.bodies.append((self.path, ctype, raw, validate(self.path, raw)))
            forward = urllib.request.Request(f"http://127.0.0.1:{collector.http_port}{self.path}", data=raw,
                                             method="POST", headers={"Content-Type": ctype})
            try:
                with urllib.request.urlopen(forward, timeout=10) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read()
            except OSError:
                status, body = 503, b""
            collector.answers.append(status)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


_ATTR = re.compile(r"^\s+-> ([^:]+): (\w+)\((.*)\)$")
_FIELD = re.compile(r"^\s+-> (Name|Description|Unit|DataType|IsMonotonic|AggregationTemporality): ?(.*)$")


def _typed(kind: str, raw: str) -> Any:
    return {"Int": int, "Double": float, "Bool": lambda s: s == "true"}.get(kind, str)(raw)


def parse_debug(text: str) -> Dict[str, List[Dict[str, Any]]]:
    """rotel's detailed debug dump as ``{"metrics": [...], "logs": [...]}``."""
    metrics: List[Dict[str, Any]] = []
    logs: List[Dict[str, Any]] = []
    resource: Dict[str, Any] = {}
    target: Optional[Dict[str, Any]] = None
    metric: Optional[Dict[str, Any]] = None
    point: Optional[Dict[str, Any]] = None
    record: Optional[Dict[str, Any]] = None
    for line in text.splitlines():
        if line.startswith(("ResourceMetrics #", "ResourceLog #")):
            resource, target, metric, record = {}, None, None, None
        elif line == "Resource attributes:":
            target = resource
        elif line.startswith("Metric #"):
            metric = {"resource": resource, "points": []}
            metrics.append(metric)
            target, record = metric, None
        elif line.startswith("NumberDataPoints #") and metric is not None:
            point = {"attributes": {}, "value": None}
            metric["points"].append(point)
            target = None
        elif line == "Data point attributes:" and point is not None:
            target = point["attributes"]
        elif line.startswith("Value: ") and point is not None:
            raw = line[len("Value: "):]
            point["value"] = float(raw) if any(c in raw for c in ".eEn") else int(raw)
        elif line.startswith("LogRecord #"):
            record = {"resource": resource, "attributes": {}}
            logs.append(record)
            target, metric = None, None
        elif record is not None and line.startswith(("SeverityText: ", "EventName: ", "Timestamp: ")):
            key, value = line.split(": ", 1)
            record[key] = value
        elif record is not None and line.startswith("Body: "):
            match = re.match(r"Body: (\w+)\((.*)\)$", line)
            record["body"] = _typed(match.group(1), match.group(2)) if match else line[6:]
        elif line == "Attributes:" and record is not None:
            target = record["attributes"]
        else:
            field = _FIELD.match(line)
            if field and metric is not None and target is metric:
                key = {"Name": "name", "DataType": "type"}.get(field.group(1), field.group(1).lower())
                metric[key] = field.group(2)
                continue
            attr = _ATTR.match(line)
            if attr and target is not None and target is not metric:
                target[attr.group(1)] = _typed(attr.group(2), attr.group(3))
    return {"metrics": metrics, "logs": logs}


def points(dump: Dict[str, List[Dict[str, Any]]], name: str) -> List[Dict[str, Any]]:
    """Every data point received for metric ``name``, across all exports, in order."""
    return [p for m in dump["metrics"] if m.get("name") == name for p in m["points"]]


def latest(dump: Dict[str, List[Dict[str, Any]]], name: str, **attrs: Any) -> Any:
    """The value of the last point of ``name`` whose attributes include ``attrs``."""
    found = [p["value"] for p in points(dump, name) if all(p["attributes"].get(k) == v for k, v in attrs.items())]
    assert found, f"no point of {name} with {attrs}"
    return found[-1]


def json_bodies(collector: Rotel) -> List[Dict[str, Any]]:
    return [json.loads(raw) for _, _, raw, _ in collector.bodies]
