"""The emulated clock stays in years 1970 to 9899: a state file saved outside that range
is refused with one line (no traceback), and a running clock that reaches the end stops
the daemon before anything is saved past it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.model.times import CLOCK_MAX
from batchd.server.store import Store
from daemon_proc import Daemon
from paths import ROOT

CONF = str(ROOT / "conf" / "hpcline96.toml")


@pytest.fixture(autouse=True)
def keep_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    """``batchd serve`` run in this process must not point the logs at a captured stream."""
    monkeypatch.setattr("batchd.server.logs.setup_logging", lambda *args: None)


def saved_state(path: Path, now: object) -> None:
    store = Store(path)
    store.put_meta("now", now)
    store.put_meta("started", 1_795_000_000)
    store.close()


def serve_argv(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "serve", "--config", CONF, "--state", str(tmp_path / "state.db"),
        "--socket", str(tmp_path / "s.sock"), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("now", [10**300, CLOCK_MAX + 1, 2**62, -1, "soon", 1.5e9, True, [1]])
@pytest.mark.parametrize("clock", [["--speed", "60"], ["--realtime"]])
def test_an_impossible_saved_clock_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], now: object, clock: list[str]
) -> None:
    saved_state(tmp_path / "state.db", now)
    code = main(serve_argv(tmp_path, *clock))
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert err.startswith(f"batchd: error: {tmp_path / 'state.db'}: the saved clock "), err
    assert "is not a time the clock can run at: use years 1970 to 9899" in err
    assert "start with another --state" in err
    assert err.count("\n") == 1 and len(err) < 400 and "Traceback" not in err, err
    assert not (tmp_path / "s.sock").exists()


def test_speed_1e300_never_saves_a_clock(tmp_path: Path) -> None:
    """The reported crash: refused before the state file is even created."""
    batchd = Path(sys.executable).parent / "batchd"
    out = subprocess.run(
        [str(batchd), *serve_argv(tmp_path, "--speed", "1e300")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "--speed: expected a number" in out.stderr, out.stderr
    assert not (tmp_path / "state.db").exists()


def test_a_clock_that_runs_out_stops_the_daemon(tmp_path: Path) -> None:
    start = str(CLOCK_MAX - 3 * 3600)  # three emulated hours: about a wall second
    d = Daemon(tmp_path, "--speed", "10000", "--start", start).start()
    assert d.proc is not None
    assert d.proc.wait(30) == 1
    log = d.log_text()
    assert "clock_ran_out" in log and "Traceback" not in log, log
    # What was saved is still a time the clock can run at: the next start runs out at once.
    again = subprocess.run(d.argv, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert again.returncode == 1 and "clock_ran_out" in again.stderr, again.stderr[-2000:]
    assert "Traceback" not in again.stderr
