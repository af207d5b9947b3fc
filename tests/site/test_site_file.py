"""Reading a site file: TOML types kept, only small regular files read, and no message
quoting a file its reader may not show."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from batchd.model.calendar import CalendarError
from batchd.model.holidays import load_holidays
from batchd.model.small_files import NOT_SHOWN, may_quote
from batchd.site.config import ConfigError, load_site

BASE = '[[machine]]\nname = "m"\nnodes = 4\n'
ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, mode: int = 0o644) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_site(path)
    return str(err.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[[machine]]\nname = "m"\nnodes = "96"\n', 'machine[0].nodes: expected an integer, got the string "96"'),
        ('[[machine]]\nname = "m"\nnodes = 1e3\n', "machine[0].nodes: expected an integer, got the float 1000.0"),
        ('[[machine]]\nname = "m"\nnodes = true\n', "machine[0].nodes: expected an integer, got the boolean true"),
        (BASE + "cores_per_node = 8.0\n", "machine[0].cores_per_node: expected an integer, got the float 8.0"),
        (BASE + "mem_per_node = 1.5e9\n", "machine[0].mem_per_node: expected an integer, got the float"),
        (BASE + 'executor = 1\n', "machine[0].executor: Input should be 'emulate' or 'local'"),
        (BASE + '[machine.resources]\nngpus = 1.5\n', "machine[0].resources.ngpus: expected an integer, a string or a boolean (true or false), got the float 1.5"),
        (BASE + '[[queue]]\nname = "q"\nmax_nodes = "2"\n', 'queue[0].max_nodes: expected an integer, got the string "2"'),
        (BASE + '[[queue]]\nname = "q"\nenabled = 1\n', "queue[0].enabled: expected a boolean (true or false), got the integer 1"),
        (BASE + '[[queue]]\nname = "q"\ndefault_walltime = true\n', "queue[0].default_walltime: walltime must be seconds or HH:MM:SS"),
        (BASE + '[[queue]]\nname = "q"\nmax_walltime = 3600.0\n', "queue[0].max_walltime: walltime must be seconds or HH:MM:SS"),
        (BASE + "[server]\nmax_array_size = 1e3\n", "server.max_array_size: expected an integer, got the float 1000.0"),
        (BASE + '[server]\nkill_delay = "10"\n', 'server.kill_delay: expected an integer, got the string "10"'),
        (BASE + "[server]\nmax_body = 2048.0\n", "server.max_body: expected an integer, got the float 2048.0"),
        (BASE + "[server]\njob_history_duration = 86400.5\n", "server.job_history_duration: job_history_duration must be seconds"),
        (BASE + '[server]\nwindow_must_fit = "no"\n', 'server.window_must_fit: expected a boolean (true or false), got the string "no"'),
        (BASE + "[metrics]\nmax_users = 10.0\n", "metrics.max_users: expected an integer, got the float 10.0"),
        (BASE + '[metrics]\nplan_interval = "5"\n', 'metrics.plan_interval: expected a number, got the string "5"'),
        (BASE + "[metrics]\nper_user = 0\n", "metrics.per_user: expected a boolean (true or false), got the integer 0"),
        (BASE + '[[resource]]\nname = "r"\ntype = "long"\nconsumable = "yes"\n', 'resource[0].consumable: expected a boolean (true or false), got the string "yes"'),
        (BASE + "[execution]\nenforce_mem = 1\n", "execution.enforce_mem: expected a boolean (true or false), got the integer 1"),
    ],
)  # fmt: skip
def test_numbers_and_booleans_have_the_toml_type_they_document(
    tmp_path: Path, text: str, says: str
) -> None:
    path = write(tmp_path, text)
    message = refusal(path)
    assert message.startswith(f"{path}: {says}"), message


def test_an_integer_is_a_number_where_a_float_is_meant(tmp_path: Path) -> None:
    site = load_site(write(tmp_path, BASE + "[metrics]\nplan_interval = 5\n"))
    assert site.metrics.plan_interval == 5.0 and isinstance(site.metrics.plan_interval, float)
    site = load_site(write(tmp_path, BASE + "[metrics]\nplan_interval = 0.5\n"))
    assert site.metrics.plan_interval == 0.5


def test_a_long_string_value_is_quoted_in_part(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, f'[[machine]]\nname = "m"\nnodes = "{"9" * 5000}"\n'))
    assert len(message) < len(str(tmp_path)) + 200 and message.endswith('9..."')


@pytest.mark.parametrize("opening", ["[", "{a = "])
def test_arrays_nested_thousands_deep_are_refused_by_name(tmp_path: Path, opening: str) -> None:
    path = write(tmp_path, BASE + "x = " + opening * 5000 + "\n")
    assert refusal(path) == f"{path}: not read: arrays or inline tables nested too deeply"


def _load_in_a_child(path: Path) -> subprocess.CompletedProcess[str]:
    """load_site(path) in a process that may not take more than 512 MiB or 20 seconds."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    code = (
        "import sys\nfrom batchd.site.config import ConfigError, load_site\n"
        "try:\n    load_site(sys.argv[1])\nexcept ConfigError as exc:\n    print(exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=20,
        preexec_fn=limit, cwd=ROOT, env={**os.environ},
    )  # fmt: skip


def test_a_device_a_fifo_and_a_directory_are_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for path, kind in [(Path("/dev/zero"), "device"), (fifo, "FIFO"), (tmp_path, "directory")]:
        out = _load_in_a_child(path)
        assert out.stdout.strip() == (
            f"{path}: is a {kind}, not a configuration file (a regular file of at most 1 MiB)"
        ), out


def test_a_file_over_one_mebibyte_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with open(big, "w") as fh:
        fh.write(BASE)
        fh.write("#" * ((1 << 20) - len(BASE)))
    assert load_site(big).machine[0].nodes == 4  # 1 MiB exactly is read
    with open(big, "a") as fh:
        fh.write("\n")
    assert refusal(big) == (
        f"{big}: is larger than 1 MiB, not a configuration file (a regular file of at most 1 MiB)"
    )
    huge = tmp_path / "huge.toml"
    with open(huge, "w") as fh:
        fh.write(BASE + "#")
        fh.truncate(1 << 30)  # sparse: 1 GiB of NUL bytes
    assert _load_in_a_child(huge).stdout.strip().startswith(f"{huge}: is larger than 1 MiB")


def test_a_site_file_may_be_a_symbolic_link(tmp_path: Path) -> None:
    link = tmp_path / "link.toml"
    link.symlink_to(write(tmp_path, BASE))
    assert load_site(link).machine[0].nodes == 4


def test_bytes_that_are_not_utf8_are_refused_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_bytes(BASE.encode() + b'description = "\xff"\n')
    assert refusal(path) == f"{path}: not UTF-8 text (line 4)"


# -- what a message may quote -----------------------------------------------------------
@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules as they are for a daemon run by root (the tests may run as anyone)."""
    monkeypatch.setattr(os, "getuid", lambda: 0)


SECRET = "hunter2-not-for-logs"


@pytest.mark.parametrize(
    ("text", "says", "readable_says"),
    [
        (BASE + f'password = "{SECRET}"\n', "machine[0]: has a key it may not have", "machine[0].password: not a key"),
        (BASE + f'[machine.resources]\n"{SECRET}" = 1.5\n', "machine[0].resources: expected an integer, a string or a boolean (true or false), got a float", SECRET),
        (f'[[machine]]\nname = "m"\nnodes = "{SECRET}"\n', "machine[0].nodes: expected an integer, got a string", SECRET),
        (BASE + f'description = "{SECRET}\x01"\n', "not valid TOML: at line 4, column 36", "Illegal character '\\x01'"),
        (f"{SECRET}:$6$salt$hash:19000:0:99999:7:::\n", "not valid TOML: at line 1, column 21", "Expected '='"),
        (BASE + f'[[queue]]\nname = "q"\nwindow = "{SECRET}"\n', "queue[0].window: not an allowed value", SECRET),
        (BASE + f'[[queue]]\nname = "q"\nmachine = "{SECRET} x"\n', "queue[0].machine: String should match pattern", SECRET),
        (BASE + f'[[queue]]\nname = "q"\nmachine = "{SECRET}"\n', "queue[0].machine: not a machine of this file", SECRET),
        (BASE + f'[server]\ntimezone = "{SECRET}"\n', "server.timezone: not a known time zone", SECRET),
        (BASE + f'[machine.resources]\n{SECRET} = 1\n', "machine[0].resources: a value of a resource that is not", SECRET),
    ],
)  # fmt: skip
def test_a_file_others_may_not_read_is_not_quoted(
    tmp_path: Path, as_root: None, text: str, says: str, readable_says: str
) -> None:
    path = write(tmp_path, text, 0o600)
    message = refusal(path)
    assert message.startswith(f"{path}: {says}") and message.endswith(NOT_SHOWN), message
    assert SECRET not in message and "\\x01" not in message
    path.chmod(0o604)  # readable by others: the message may say what it found
    assert readable_says in refusal(path)


def test_a_holidays_file_others_may_not_read_is_not_quoted(tmp_path: Path, as_root: None) -> None:
    holidays = tmp_path / "holidays"
    holidays.write_text(f"YEAR 2026\n{SECRET} 1 2\n")
    holidays.chmod(0o600)
    with pytest.raises(CalendarError) as err:
        load_holidays(holidays)
    assert str(err.value) == f"{holidays}:2: not a valid holidays line{NOT_SHOWN}"
    path = write(tmp_path, BASE + f'[server]\ncalendar = "{holidays}"\n')
    message = refusal(path)
    assert SECRET not in message and message.startswith(f"{path}: server.calendar: ")
    holidays.chmod(0o644)
    with pytest.raises(CalendarError, match=SECRET):
        load_holidays(holidays)


def test_who_may_see_a_file_quoted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, BASE, 0o600)
    mine = path.stat()
    monkeypatch.setattr(os, "getuid", lambda: mine.st_uid + 1)
    assert not may_quote(mine)  # another user's private file
    monkeypatch.setattr(os, "getuid", lambda: mine.st_uid)
    assert may_quote(mine) is (mine.st_uid != 0)  # one's own, unless one is root
    path.chmod(0o604)
    assert may_quote(path.stat())  # anyone's to read


def test_a_name_used_twice_is_named_with_its_key(tmp_path: Path) -> None:
    path = write(
        tmp_path, BASE + '[[queue]]\nname = "a"\n[[queue]]\nname = "b"\n[[queue]]\nname = "a"\n'
    )
    assert refusal(path) == f"{path}: queue[2].name: 'a' is the name of an earlier queue"
    path = write(tmp_path, BASE + 'node_prefix = "x"\n' + BASE)
    assert refusal(path) == f"{path}: machine[1].name: 'm' is the name of an earlier machine"
