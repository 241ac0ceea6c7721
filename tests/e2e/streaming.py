"""One running `claude -p` session fed prompt after prompt, as the Agent SDK drives the CLI.

`--input-format stream-json` keeps a single CLI process (one session, one SessionStart) alive
while the test sends user messages one at a time; `send()` waits for that prompt's `result`
message. This is how a test reaches a session that is already running when the job changes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from .driver import Claude, kill_group


class Session:
    """A CLI process reading prompts from stdin; use as a context manager."""

    def __init__(self, claude: Claude, project: Path, plugin: Path) -> None:
        command = [str(claude.exe), "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                   "--verbose", "--permission-mode", "acceptEdits", "--allowedTools", "Bash",
                   "--plugin-dir", str(plugin)]
        self.proc = subprocess.Popen(command, cwd=project, env=claude.env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def send(self, prompt: str) -> dict[str, Any]:
        """Send one prompt; return its `result` message (the CLI's answer to it)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"type": "user", "message": {"role": "user", "content": prompt}}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            event = json.loads(line)
            if event.get("type") == "result":
                return dict(event)
        errors = self.proc.stderr.read() if self.proc.stderr else ""
        raise AssertionError(f"the CLI ended before answering {prompt!r}: {errors}")

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            self.proc.wait()
        finally:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()
