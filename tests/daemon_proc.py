"""Start ``batchd serve`` as a real process for tests, and talk to it over its Unix socket."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from batchclient.transport import UnixHTTPConnection

ROOT = Path(__file__).resolve().parent.parent


def call(sock: str | Path, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = UnixHTTPConnection(str(sock), timeout=10.0)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        ctype = resp.getheader("Content-Type", "")
        return resp.status, json.loads(raw) if "json" in ctype else raw.decode()
    finally:
        conn.close()


def write_tokens(path: Path) -> str:
    """A token file (0600) giving this process's user a new token; the token."""
    token = secrets.token_hex(16)
    path.write_text(f"{pwd.getpwuid(os.getuid()).pw_name}:{token}\n")
    path.chmod(0o600)
    return token


class Daemon:
    """One ``batchd serve`` process; stop() sends SIGTERM, crash() SIGKILL.

    ``piped``: its output reaches the log file through a pipe that the test drains, so
    a file-size limit set on the daemon does not stop its logging. ``env``: more
    environment variables.
    """

    def __init__(
        self,
        tmp: Path,
        *args: str,
        config: str = "conf/hpcline96.toml",
        piped: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tmp = tmp
        self.piped = piped
        self.env = dict(env or {})
        self.socket = tmp / "batchd.sock"
        self.state = tmp / "state.db"
        self.log = tmp / "daemon.log"
        self.argv = [
            sys.executable, "-m", "batchd.cli", "serve",
            "--config", str(ROOT / config),
            "--socket", str(self.socket),
            "--state", str(self.state),
            *args,
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> Daemon:
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.env)
        if self.piped:
            self.proc = subprocess.Popen(
                self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT
            )
            threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True).start()
        else:
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen(self.argv, stdout=log, stderr=log, env=env, cwd=ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"batchd exited with {self.proc.returncode}: {self.log_text()}")
            try:
                if call(self.socket, "GET", "/healthz")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"batchd did not answer within {timeout} s: {self.log_text()}")

    def _drain(self, pipe: Any) -> None:
        with open(self.log, "ab") as log:
            for line in pipe:
                log.write(line)
                log.flush()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return call(self.socket, method, path, body)

    def stop(self, timeout: float = 15.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(timeout)

    def crash(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
