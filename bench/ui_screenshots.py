"""The screenshots of the web page in docs/ui/ (plan.png, machine.png, queue.png).

Not a benchmark: a script anyone can run again after changing the page. It starts
``batchd serve`` on a copy of conf/hpcline96.toml (fcfs-cons, a queue ``night`` open
20:00-06:00) at ``--speed`` emulated seconds per wall second with a synthetic
trace replayed into it, waits until a little over an emulated day has passed (the
Machine view's last day), then submits named jobs for a few users, makes a
reservation, takes one node offline and marks one down, and photographs the three
views as the user alice sees them (her token) in headless Chromium (Debian's
chromium and chromium-driver, driven by selenium).

    .venv/bin/python bench/ui_screenshots.py                 # about a minute and a half
    .venv/bin/python bench/ui_screenshots.py --out /tmp/shots --speed 1200
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "daemon"), str(ROOT / "client"), str(ROOT / "tests")]

from batchclient.transport import UnixHTTPConnection  # noqa: E402
from browser import chromium, missing  # noqa: E402

START = "2026-11-23T06:00:00"  # a Monday morning, UTC
NIGHT_QUEUE = """
[[queue]]
name = "night"
max_walltime = "10:00:00"
default_walltime = "04:00:00"
window = ["Mon-Sun 20:00-06:00"]
"""


def call(sock: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = UnixHTTPConnection(sock, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def config(path: Path) -> None:
    text = (ROOT / "conf" / "hpcline96.toml").read_text()
    text = text.replace('policy = "fcfs-easy"', 'policy = "fcfs-cons"\ntimezone = "UTC"', 1)
    path.write_text(text + NIGHT_QUEUE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scenario(sock: str) -> None:
    """What the pictures show besides the trace: named jobs, a reservation, two nodes out."""
    status, server = call(sock, "GET", "/server")
    now = server["now"]
    shapes = [
        ("alice", "md-relax", 16, "03:00:00", "workq"),
        ("bob", "cfd-mesh", 32, "05:00:00", "workq"),
        ("alice", "render-frames", 8, "01:30:00", "workq"),
        ("bob", "nightly-sweep", 48, "06:00:00", "night"),
        ("carol", "qcd-hmc", 40, "02:00:00", "workq"),
        ("dave", "genome-align", 12, "04:00:00", "workq"),
        ("carol", "climate-ens-1", 24, "03:00:00", "workq"),
        ("carol", "climate-ens-2", 24, "03:00:00", "workq"),
        ("erin", "ml-train", 20, "06:00:00", "workq"),
        ("dave", "post-process", 4, "00:45:00", "workq"),
        ("alice", "md-analysis", 6, "01:00:00", "workq"),
        ("erin", "ml-eval", 10, "01:30:00", "workq"),
    ]
    for owner, name, nodes, walltime, queue in shapes:
        body = {"user": owner, "name": name, "nodes": nodes, "walltime": walltime, "queue": queue}
        status, job = call(sock, "POST", "/jobs", body)
        if status != 201:
            raise SystemExit(f"qsub {name}: {status} {job}")
    resv = {"start": now + 5 * 3600, "duration": 7200, "nodes": 24, "name": "maintenance"}
    status, out = call(sock, "POST", "/reservations", resv)
    if status != 201:
        raise SystemExit(f"reservation: {status} {out}")
    call(sock, "PATCH", "/nodes/node095", {"state": "offline", "comment": "disk"})
    call(sock, "PATCH", "/nodes/node096", {"state": "down", "comment": "no heartbeat"})


def shoot(url: str, token: str, out: Path) -> None:
    with chromium(1400, 900) as driver:
        driver.get(f"{url}/ui#token={token}")
        deadline = time.monotonic() + 20
        while not driver.execute_script("return document.querySelectorAll('#gantt g.job').length"):
            if time.monotonic() > deadline:
                raise SystemExit("the page drew no job")
            time.sleep(0.2)
        driver.find_element("id", "zoom-in").click()
        time.sleep(0.5)
        driver.save_screenshot(str(out / "plan.png"))
        for view in ("machine", "queue"):
            driver.find_element("css selector", f'.tab[data-view="{view}"]').click()
            time.sleep(0.5)
            driver.save_screenshot(str(out / f"{view}.png"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "ui"), help="folder of the PNGs")
    parser.add_argument("--speed", type=float, default=1200.0, help="emulated s per wall s")
    parser.add_argument("--hours", type=float, default=26.0, help="emulated hours before")
    args = parser.parse_args()
    why = missing()
    if why is not None:
        raise SystemExit(f"no browser: {why}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="batchd-shots-"))
    token = secrets.token_hex(16)  # the page is alice's, a user: her jobs are outlined
    tokens = tmp / "tokens"
    tokens.write_text(
        f"{pwd.getpwuid(os.getuid()).pw_name}:{secrets.token_hex(16)}\nalice:{token}\n"
    )
    tokens.chmod(0o600)
    config(tmp / "site.toml")
    port = free_port()
    sock = str(tmp / "batchd.sock")
    cmd = [
        sys.executable, "-m", "batchd.cli", "serve", "--config", str(tmp / "site.toml"),
        "--socket", sock, "--state", str(tmp / "state.db"),
        "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens),
        "--speed", f"{args.speed:g}", "--start", START,
        "--replay", "synthetic:4000", "--shrink", "0.55",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'daemon'}:{ROOT / 'client'}")
    with open(tmp / "daemon.log", "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                if call(sock, "GET", "/healthz")[0] == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit((tmp / "daemon.log").read_text()[-2000:])
            time.sleep(0.1)
        wait = args.hours * 3600 / args.speed
        print(f"waiting {wait:.0f} s for {args.hours:g} emulated hours", flush=True)
        time.sleep(wait)
        scenario(sock)
        shoot(f"http://127.0.0.1:{port}", token, out)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for name in ("plan", "machine", "queue"):
        print(out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
