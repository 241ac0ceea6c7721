"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a pipe, stdlib only.

``Browser`` starts Chromium with ``--remote-debugging-pipe`` (commands on its fd 3, replies and
events on fd 4, each JSON message ended by a NUL byte), attaches to its page, and offers
``goto``, ``eval``, ``screenshot`` and the console messages and exceptions the page produced. Every
flag that would reach the network is off; the profile lives in a temporary folder removed at close.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--no-default-browser-check", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
         "--disable-features=Translate,MediaRouter,OptimizationHints", "--metrics-recording-only"]


def chromium() -> Optional[str]:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page, its viewport pinned to ``width`` x ``height``."""

    def __init__(self, width: int = 1100, height: int = 900) -> None:
        exe = chromium()
        if exe is None:
            raise RuntimeError("chromium is not installed (dev/test installs it: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="baton-chromium-")
        commands_r, self.commands = os.pipe()
        self.replies, replies_w = os.pipe()

        def pipes() -> None:  # in the child: the pipe ends Chromium expects on fds 3 and 4
            a, b = os.dup(commands_r), os.dup(replies_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        # close_fds=False: CPython would close fds 3 and 4 after preexec_fn; every fd Python opens is
        # close-on-exec anyway, so nothing else leaks into Chromium
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
                                      "about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=pipes,
                                     start_new_session=True)
        os.close(commands_r)
        os.close(replies_w)
        self.buffer, self.next_id = b"", 0
        self.events: List[Dict[str, Any]] = []
        try:
            page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})[
                "sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                             "deviceScaleFactor": 1, "mobile": False}, session=True)
        except BaseException:
            self.close()
            raise

    def _receive(self, timeout: float) -> Optional[Dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                return None
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed its debugging pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        message: Dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = False,
             timeout: float = 20) -> Dict[str, Any]:
        self.next_id += 1
        message: Dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline - time.monotonic())
            if reply is None:
                raise TimeoutError(f"no reply to {method} within {timeout}s")
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: Dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def goto(self, url: str, timeout: float = 20) -> None:
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            event = self._receive(deadline - time.monotonic())
            if event is None:
                raise TimeoutError(f"{url} did not load within {timeout}s")
            if "method" in event:
                self.events.append(event)

    def pump(self, seconds: float) -> None:
        """Collect events for a while (errors thrown by timers after the load, say)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            event = self._receive(deadline - time.monotonic())
            if event and "method" in event:
                self.events.append(event)

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        params: Dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size["width"],
                                                            "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def console(self) -> List[Dict[str, str]]:
        """Console calls, uncaught exceptions and browser log entries (failed loads, blocked requests)."""
        out = []
        for event in self.events:
            p = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                out.append({"source": "console", "level": p.get("type", ""), "text": text})
            elif event["method"] == "Runtime.exceptionThrown":
                details = p.get("exceptionDetails", {})
                out.append({"source": "exception", "level": "error",
                            "text": str(details.get("exception", {}).get("description") or details.get("text"))})
            elif event["method"] == "Log.entryAdded":
                entry = p.get("entry", {})
                out.append({"source": f"log:{entry.get('source')}", "level": str(entry.get("level")),
                            "text": str(entry.get("text"))})
        return out

    def errors(self) -> List[Dict[str, str]]:
        return [m for m in self.console() if m["level"] in ("error", "warning")]

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (TimeoutError, EOFError, OSError, RuntimeError, AttributeError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: the renderer and zygote go too
            self.proc.wait()
        for fd in (self.commands, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
