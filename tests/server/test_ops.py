"""Operations files: the systemd unit, the documented site config, every conf/*.toml.

Also a short run of ``batchd serve`` with the shipped config, to check what
docs/operations.md says about signals, the socket and the logs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from batchd.cli import build_parser, cmd_serve
from batchd.site.config import (
    AuthConfig,
    ConnectionsConfig,
    ExecutionConfig,
    MachineConfig,
    MetricsConfig,
    QueueConfig,
    ServerConfig,
    SiteConfig,
    load_site,
)
from paths import ROOT

UNIT = ROOT / "systemd" / "batchd.service"
LOCAL_UNIT = ROOT / "systemd" / "batchd-local.service"
HPCLINE = ROOT / "conf" / "hpcline96.toml"
ENV_EXAMPLE = ROOT / "conf" / "batchd.env.example"
CONFS = sorted((ROOT / "conf").glob("*.toml"))

Unit = dict[str, list[tuple[str, str]]]


# -- the unit file ----------------------------------------------------------------


def parse_unit(text: str) -> Unit:
    """systemd's syntax: [Section], Key=Value, # and ; comments, a trailing backslash
    continues a line, and a key may repeat (so not configparser)."""
    sections: Unit = {}
    current: list[tuple[str, str]] | None = None
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"not a Key=Value line in a section: {raw!r}"
        current.append((key.strip(), value.strip()))
    assert not pending, "the unit ends with a continued line"
    return sections


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT.read_text(encoding="utf-8"))


def values(unit: Unit, section: str, key: str) -> list[str]:
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit: Unit, section: str, key: str) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= should be set once, found {found}"
    return found[0]


def env_example_opts() -> list[str]:
    """BATCHD_OPTS of conf/batchd.env.example: the live line and every commented example."""
    found = []
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#?BATCHD_OPTS=(.*)$", line.strip())
        if m:
            words = shlex.split(m.group(1))
            found.append(words[0] if words else "")
    return found


def exec_start_argv(unit: Unit, opts: str = "") -> list[str]:
    """ExecStart= split as systemd does, with $BATCHD_OPTS expanded to ``opts``' words."""
    argv = []
    for word in shlex.split(one(unit, "Service", "ExecStart")):
        if word == "$BATCHD_OPTS":
            argv.extend(opts.split())
        else:
            assert "$" not in word, f"unexpected variable in ExecStart: {word}"
            argv.append(word)
    return argv


def test_unit_exec_start_is_a_valid_serve_command(unit: Unit) -> None:
    argv = exec_start_argv(unit)
    assert argv[0] == "/usr/bin/batchd"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve" and args.func is cmd_serve
    assert args.config == "/etc/batchd/batchd.toml"
    assert args.speed is None and args.listen is None and args.replay is None


@pytest.mark.parametrize("opts", env_example_opts())
def test_env_example_options_are_accepted(unit: Unit, opts: str) -> None:
    """Each BATCHD_OPTS of the example file, live or commented, parses after the unit's own."""
    assert values(unit, "Service", "EnvironmentFile") == ["-/etc/batchd/batchd.env"]
    args = build_parser().parse_args(exec_start_argv(unit, opts)[1:])
    assert args.command == "serve"
    assert args.socket == "/run/batchd/batchd.sock"  # the example does not move it
    assert args.state == "/var/lib/batchd/state.db"


def test_env_example_has_examples() -> None:
    opts = env_example_opts()
    assert opts[0] == "", "the live BATCHD_OPTS line should be empty"
    assert any("--speed" in o for o in opts) and any("--token-file" in o for o in opts)


def test_unit_directories_match_the_paths(unit: Unit) -> None:
    args = build_parser().parse_args(exec_start_argv(unit)[1:])
    runtime = one(unit, "Service", "RuntimeDirectory")
    state = one(unit, "Service", "StateDirectory")
    cache = one(unit, "Service", "CacheDirectory")
    assert Path(args.socket).parent == Path("/run") / runtime
    assert Path(args.state).parent == Path("/var/lib") / state
    # Users must be able to reach the socket in the runtime directory.
    assert int(one(unit, "Service", "RuntimeDirectoryMode"), 8) & 0o005 == 0o005
    # numba's kernel cache: the install tree is read-only under ProtectSystem=strict.
    numba = [v for v in values(unit, "Service", "Environment") if v.startswith("NUMBA_CACHE_DIR=")]
    assert len(numba) == 1
    assert Path(numba[0].partition("=")[2]).is_relative_to(Path("/var/cache") / cache)
    assert one(unit, "Service", "ProtectSystem") == "strict"
    assert not values(unit, "Service", "ReadWritePaths")


def test_unit_signals_and_lifecycle(unit: Unit) -> None:
    reload = shlex.split(one(unit, "Service", "ExecReload"))
    assert Path(reload[0]).name == "kill" and reload[-1] == "$MAINPID"
    assert reload[1:-1] in (["-HUP"], ["-SIGHUP"], ["-s", "HUP"], ["-s", "SIGHUP"])
    assert one(unit, "Service", "KillSignal") in ("SIGTERM", "TERM", "15")
    assert int(one(unit, "Service", "TimeoutStopSec")) > 0
    # batchd has no sd_notify: Type=notify would time out at every start.
    assert one(unit, "Service", "Type") in ("simple", "exec")
    assert one(unit, "Service", "Restart") == "on-failure"
    # A daemon that cannot start (exit 2) is retried a few times, not forever.
    assert int(one(unit, "Unit", "StartLimitBurst")) > 0
    assert int(one(unit, "Unit", "StartLimitIntervalSec")) >= 5 * int(
        one(unit, "Service", "RestartSec")
    )
    assert one(unit, "Install", "WantedBy") == "multi-user.target"
    assert values(unit, "Unit", "Documentation")


def test_unit_runs_unprivileged_and_keeps_what_batchd_needs(unit: Unit) -> None:
    assert one(unit, "Service", "User") == "batchd"
    assert one(unit, "Service", "Group") == "batchd"
    assert one(unit, "Service", "NoNewPrivileges") == "true"
    assert one(unit, "Service", "ProtectHome") == "true"
    assert one(unit, "Service", "PrivateTmp") == "true"
    # numba's JIT needs writable+executable memory.
    assert values(unit, "Service", "MemoryDenyWriteExecute") in ([], ["false"])
    # A user namespace would map every peer uid to nobody: roles would break.
    assert values(unit, "Service", "PrivateUsers") in ([], ["false"])
    families = " ".join(values(unit, "Service", "RestrictAddressFamilies")).split()
    assert {"AF_UNIX", "AF_INET", "AF_INET6"} <= set(families)


# -- systemd-analyze ----------------------------------------------------------------


def batchd_executable() -> Path:
    script = Path(sys.executable).parent / "batchd"
    if not script.is_file():
        found = shutil.which("batchd")
        if found is None:
            pytest.skip("no batchd console script (pip install -e .) to stand in for /usr/bin")
        script = Path(found)
    return script.resolve()


def dev_copy(tmp_path: Path, extra: str = "", unit: Path = UNIT) -> Path:
    """The unit with ExecStart on this checkout's batchd: /usr/bin/batchd is not here."""
    text = unit.read_text(encoding="utf-8")
    exe = str(batchd_executable())
    exe = f'"{exe}"' if " " in exe else exe
    dev = text.replace("ExecStart=/usr/bin/batchd ", f"ExecStart={exe} ", 1)
    assert dev != text, "ExecStart no longer starts with /usr/bin/batchd"
    path = tmp_path / "batchd.service"
    path.write_text(dev.replace("[Service]\n", f"[Service]\n{extra}", 1), encoding="utf-8")
    return path


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    return subprocess.run(
        [tool, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def complaints(proc: subprocess.CompletedProcess[str]) -> list[str]:
    lines = (proc.stdout + proc.stderr).splitlines()
    return [line for line in lines if "batchd.service" in line]


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    proc = analyze("verify", str(dev_copy(tmp_path)))
    assert not complaints(proc), proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_unit_of_a_local_site_keeps_jobs_through_a_stop(tmp_path: Path) -> None:
    """batchd-local.service: root, the jobs' cgroups delegated, and a stop that stops the
    daemon alone (the jobs' supervisors go on: docs/execution.md)."""
    unit = LOCAL_UNIT.read_text(encoding="utf-8")
    for line in ("KillMode=process", "Delegate=yes", "User=root", "ProtectHome=false"):
        assert f"\n{line}\n" in unit, line
    proc = analyze("verify", str(dev_copy(tmp_path, unit=LOCAL_UNIT)))
    assert not complaints(proc), proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_systemd_analyze_verify_sees_mistakes(tmp_path: Path) -> None:
    """The check above can fail: a misspelt directive is reported."""
    proc = analyze("verify", str(dev_copy(tmp_path, extra="ProtectHomes=true\n")))
    assert any("ProtectHomes" in line for line in complaints(proc)), proc.stdout + proc.stderr


def test_systemd_analyze_security(tmp_path: Path) -> None:
    proc = analyze("security", "--offline=true", "--no-pager", str(dev_copy(tmp_path)))
    m = re.search(r"Overall exposure level for batchd\.service: ([0-9.]+)", proc.stdout)
    if proc.returncode != 0 and m is None:
        pytest.skip(f"systemd-analyze security --offline is not supported here: {proc.stderr}")
    assert m is not None, proc.stdout + proc.stderr
    assert float(m.group(1)) < 3.0, proc.stdout


# -- the site configs ---------------------------------------------------------------

KEY = re.compile(r"""^\s*(?P<key>[A-Za-z0-9_-]+|"[^"]*")\s*=""")
HEADER = re.compile(r"^\s*(?P<open>\[\[?)\s*(?P<name>[A-Za-z0-9_.-]+)\s*\]\]?\s*(?:#.*)?$")
TABLES: dict[str, type[BaseModel]] = {
    "": SiteConfig,
    "machine": MachineConfig,
    "server": ServerConfig,
    "auth": AuthConfig,
    "metrics": MetricsConfig,
    "queue": QueueConfig,
    "execution": ExecutionConfig,
    "connections": ConnectionsConfig,
}


def has_trailing_comment(line: str) -> bool:
    return "#" in re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)


def flat_keys(data: Any, prefix: str = "") -> set[str]:
    """Every key path of a TOML document; arrays of tables count once, without index."""
    out: set[str] = set()
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= {path} | flat_keys(value, f"{path}.")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.add(path)
            for item in value:
                out |= flat_keys(item, f"{path}.")
        else:
            out.add(path)
    return out


def documented_config(text: str) -> tuple[set[str], list[str], dict[str, list[str]]]:
    """Key paths found line by line, the undocumented ones, and each table's comments."""
    found: set[str] = set()
    missing: list[str] = []
    comments: dict[str, list[str]] = {"": []}
    table = ""
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        documented = previous.startswith("#") or has_trailing_comment(line)
        if stripped.startswith("#"):
            comments.setdefault(table, []).append(stripped)
        elif m := HEADER.match(line):
            table = m.group("name")
            comments.setdefault(table, [])
            found.add(table)
            if not documented:
                missing.append(f"line {number}: table [{table}]")
        elif m := KEY.match(line):
            key = m.group("key").strip('"')
            found.add(f"{table}.{key}" if table else key)
            if not documented:
                missing.append(f"line {number}: {table or '(top level)'} {key}")
        previous = stripped
    return found, missing, comments


def test_hpcline_is_the_documented_site() -> None:
    site = load_site(HPCLINE)
    assert [(m.name, m.nodes) for m in site.machine] == [("hpcline", 96)]
    assert site.server.policy == "fcfs-easy"
    assert site.server.node_fail == "requeue"
    assert site.default_queue == "workq"
    assert site.auth.managers == [] and site.auth.operators == []
    assert [q.name for q in site.queues()] == ["workq"]
    workq = site.queues()[0]
    assert (workq.default_walltime, workq.max_walltime) == (3600, 24 * 3600)
    assert site.grid().machines[0].nodes == 96  # what `batchd replay --machine` uses


def test_hpcline_every_key_is_documented() -> None:
    text = HPCLINE.read_text(encoding="utf-8")
    found, missing, _ = documented_config(text)
    # The line scan saw every key the TOML parser sees (no inline tables it would miss).
    assert found == flat_keys(tomllib.loads(text))
    assert not missing, "keys without a comment right above or on their line:\n" + "\n".join(
        missing
    )


def test_hpcline_documents_every_setting_of_the_schema() -> None:
    """Set or not, each key the schema knows is explained in its table, as '# key (type...'."""
    _, _, comments = documented_config(HPCLINE.read_text(encoding="utf-8"))
    tables = {"server.policy_params"}
    undocumented = []
    for table, model in TABLES.items():
        for name, info in model.model_fields.items():
            field = info.alias or name  # the key as the file spells it
            sub = f"{table}.{field}" if table else field
            if sub in TABLES or sub in tables:
                assert sub in comments, f"table [{sub}] is missing from {HPCLINE.name}"
                continue
            if not any(c.startswith(f"# {field} (") for c in comments.get(table, [])):
                undocumented.append(f"{table or '(top level)'}: {field}")
    assert not undocumented, "settings the comments do not explain: " + ", ".join(undocumented)


def test_documentation_check_can_fail() -> None:
    text = '# a machine\n[[machine]]\nname = "m"  # its name\n# how many\nnodes = 4\n\nextra = 1\n'
    _, missing, _ = documented_config(text)
    assert missing == ["line 7: machine extra"]
    _, missing, _ = documented_config("[server]\n# the policy\n\npolicy = 'fcfs'\n")
    assert missing == ["line 1: table [server]", "line 4: server policy"]
    assert has_trailing_comment("nodes = 4  # how many")
    assert not has_trailing_comment('name = "a#b"')


def test_conf_dir_has_configs() -> None:
    assert HPCLINE in CONFS and len(CONFS) >= 3


@pytest.mark.parametrize("path", CONFS, ids=[p.name for p in CONFS])
def test_every_conf_loads(path: Path) -> None:
    site = load_site(path)
    assert site.machine and site.default_queue in [q.name for q in site.queues()]


# -- a short life of the daemon with the shipped config -----------------------------


def batchd_command() -> list[str]:
    script = Path(sys.executable).parent / "batchd"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "batchd.cli"]


def http_get(sock: Path, path: str) -> tuple[int, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(sock))
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: batchd\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


class Serve:
    def __init__(self, tmp: Path, *args: str) -> None:
        self.sock = tmp / "run" / "batchd.sock"
        self.log = tmp / "batchd.log"
        argv = [*batchd_command(), "serve", "--config", str(HPCLINE), "--socket", str(self.sock)]
        argv += ["--state", str(tmp / "state.db"), *args]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=tmp
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if http_get(self.sock, "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"batchd did not answer in {timeout} s: {self.log.read_text()}")

    def events(self) -> list[dict[str, Any]]:
        """The log: JSON lines, since stderr is not a terminal."""
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def wait_event(self, name: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events():
                if event["event"] == name:
                    return event
            time.sleep(0.05)
        raise AssertionError(f"no {name} in the log: {self.log.read_text()}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Serve]:
    d = Serve(tmp_path, "--speed", "60")
    try:
        d.wait_ready()
        yield d
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait()


def test_serve_socket_hup_and_term(daemon: Serve) -> None:
    mode = os.stat(daemon.sock).st_mode & 0o777
    assert mode == 0o666, oct(mode)
    status, server = http_get(daemon.sock, "/server")
    assert status == 200
    assert (server["name"], server["nodes"], server["default_queue"]) == ("hpcline", 96, "workq")
    started = daemon.wait_event("daemon_started")
    assert started["clock"] == "x60" and started["level"] == "info"

    daemon.proc.send_signal(signal.SIGHUP)  # systemctl reload
    assert daemon.wait_event("config_reloaded")["queues"] == ["workq"]
    assert http_get(daemon.sock, "/healthz")[0] == 200

    assert daemon.stop() == 0
    assert not daemon.sock.exists()
    assert daemon.events()[-1]["event"] == "daemon_stopped"


def test_serve_refuses_a_second_daemon_on_the_socket(daemon: Serve, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    proc = subprocess.run(
        [*batchd_command(), "serve", "--config", str(HPCLINE), "--socket", str(daemon.sock)]
        + ["--state", str(other / "state.db"), "--speed", "60"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2  # a refusal to start
    assert f"another batchd is listening on {daemon.sock}" in proc.stderr
    assert http_get(daemon.sock, "/healthz")[0] == 200


def write_calls(pid: int) -> int:
    """How many write system calls the process has made (/proc/PID/io syscw)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "syscw":
            return int(value)
    raise AssertionError(f"no syscw in /proc/{pid}/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/PID/io")
def test_idle_daemon_sleeps(daemon: Serve) -> None:
    """Idle, the daemon wakes about once a wall second (its heartbeat), not thousands."""
    time.sleep(1.0)  # past start-up work
    before = write_calls(daemon.proc.pid)
    time.sleep(3.0)
    writes = write_calls(daemon.proc.pid) - before
    assert writes < 300, f"an idle daemon made {writes} write calls in 3 s"
