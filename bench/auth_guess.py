"""How fast one TCP connection can guess bearer tokens of a live batchd daemon.

A fresh ``batchd serve`` runs as a subprocess on ``conf/hpcline96.toml`` with a TCP
listener on loopback and a token file of one user. One client sends ``GET /server``
with a wrong token (a new random one each time) over one keep-alive connection
(``http.client``), as fast as the answers come, for ``--seconds``. It counts the
answers: 401 (the token was checked: a guess), 429 (refused unread: no guess), and
shows the guesses per second, over the whole run and in its first second. Then a
correct token from another address (``127.0.0.2``) must still be answered 200 at
once. The daemon's log must not hold any of the tokens sent.

    .venv/bin/python bench/auth_guess.py                  # 10 s
    .venv/bin/python bench/auth_guess.py --seconds 70     # past the failure window
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"batchd exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("batchd did not start")


def guess(port: int, seconds: float) -> tuple[list[float], list[str], int]:
    """Times of the 401 answers (from the start), the tokens sent, and the 429s."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.monotonic()
    checked: list[float] = []
    sent: list[str] = []
    refused = 0
    while time.monotonic() - start < seconds:
        token = secrets.token_hex(16)
        sent.append(token)
        conn.request("GET", "/server", headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        resp.read()
        if resp.status == 401:
            checked.append(time.monotonic() - start)
        elif resp.status == 429:
            refused += 1
        else:
            raise SystemExit(f"unexpected answer {resp.status} to a wrong token")
    return checked, sent, refused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="batchd-auth-") as folder:
        tmp = Path(folder)
        good = secrets.token_hex(16)
        tokens = tmp / "tokens"
        tokens.write_text(f"alice:{good}\n")
        tokens.chmod(0o600)
        port = free_port()
        log = tmp / "daemon.log"
        argv = [
            sys.executable, "-m", "batchd.cli", "serve", "--config",
            str(ROOT / "conf/hpcline96.toml"), "--socket", str(tmp / "s.sock"),
            "--state", str(tmp / "state.db"), "--listen", f"127.0.0.1:{port}",
            "--token-file", str(tokens),
        ]  # fmt: skip
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=out, env=dict(os.environ))
        try:
            wait_healthy(port, proc)
            checked, sent, refused = guess(port, opts.seconds)
            conn = http.client.HTTPConnection(
                "127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0)
            )
            began = time.monotonic()
            conn.request("GET", "/server", headers={"Authorization": f"Bearer {good}"})
            status = conn.getresponse().status
            other = time.monotonic() - began
        finally:
            proc.terminate()
            proc.wait(15)
        text = log.read_text(errors="replace")
    first = sum(1 for t in checked if t < 1.0)
    print(f"guesses checked: {len(checked)} in {opts.seconds:g} s "
          f"({len(checked) / opts.seconds:.2f}/s; {first} in the first second); "
          f"refused unread (429): {refused}")  # fmt: skip
    print(f"correct token from 127.0.0.2 afterwards: {status} in {other * 1000:.1f} ms")
    leaked = sum(1 for token in sent if token in text)
    print(f"tokens found in the daemon's log: {leaked} of {len(sent)}")
    return 0 if status == 200 and leaked == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
