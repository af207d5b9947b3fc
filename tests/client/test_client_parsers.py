"""batchclient's input parsers: durations, -l, -a, depend, -v, #PBS directives, qmgr."""

from __future__ import annotations

import calendar
import os
import socket
import time
from pathlib import Path

import pytest

from batchclient import jobattrs, qmgr, qsub
from batchclient.cli import UsageError
from batchclient.directives import DirectiveError, directives
from batchclient.qmgr_parse import Command, QmgrSyntaxError, parse, tokenize
from batchclient.resources import ResourceError, Resources, parse_resources
from batchclient.timefmt import (
    ctime,
    est_start_short,
    hm,
    hms,
    parse_duration,
    parse_exec_time,
)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def utc_epoch(y, mo, d, h=0, mi=0, s=0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


NOW = utc_epoch(2026, 11, 21, 10, 0, 0)  # a Saturday


# -- durations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,seconds",
    [("30", 30), ("1:30", 90), ("90:00", 5400), ("01:00:00", 3600), ("100:00:00", 360000)],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text,message",
    [
        ("1:99:00", "minutes and seconds must be below 60"),
        ("1:00:60", "minutes and seconds must be below 60"),
        ("1:60", "seconds must be below 60"),
        ("abc", "not a duration: use [[HH:]MM:]SS"),
        ("", "not a duration: use [[HH:]MM:]SS"),
        ("1:2:3:4", "not a duration: use [[HH:]MM:]SS"),
    ],
)
def test_parse_duration_refuses(text, message):
    with pytest.raises(ValueError) as err:
        parse_duration(text)
    assert str(err.value) == message


def test_hms_and_hm():
    assert hms(0) == "00:00:00"
    assert hms(754) == "00:12:34"
    assert hms(360000 + 61) == "100:01:01"
    assert hm(3600 + 59) == "01:00"
    assert hm(86400) == "24:00"


def test_ctime_is_c_ctime():
    assert ctime(utc_epoch(2026, 11, 1, 10, 0, 0)) == "Sun Nov  1 10:00:00 2026"
    assert ctime(NOW) == "Sat Nov 21 10:00:00 2026"


# -- -l resources ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "specs,nodes,walltime",
    [
        (["nodes=4"], 4, None),
        (["nodes=2:ppn=1"], 2, None),
        (["nodes=2+3"], 5, None),
        (["select=3"], 3, None),
        (["select=3:ncpus=1"], 3, None),
        (["select=2:ncpus=1:mpiprocs=1"], 2, None),
        (["select=ncpus=1"], 1, None),
        (["select=2+1:ncpus=1"], 3, None),
        (["nodes=2,walltime=1:00:00"], 2, 3600),
        (["walltime=90"], None, 90),
        (["nodes=2", "walltime=10:00", "nodes=3"], 3, 600),
        (["place=scatter:excl,select=2"], 2, None),
        (["NODES=2"], 2, None),
        (["nodes=x"], 1, None),  # one node with property x (the daemon checks the name)
        (["nodes=2:ppn=4+host7"], 3, None),
    ],
)
def test_parse_resources(specs, nodes, walltime):
    res = parse_resources(specs)
    assert (res.nodes, res.walltime) == (nodes, walltime)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("nodes=0", "nodes=0: the number of nodes must be a positive integer"),
        ("nodes=-1", "nodes=-1: the number of nodes must be a positive integer"),
        ("select=0", "select=0: the number of nodes must be a positive integer"),
        ("select=2+", "select=2+: the number of nodes must be a positive integer"),
        ("nodes=2:ppn=0", "nodes=2:ppn=0: ppn=0: ppn takes a positive integer"),
        ("nodes=2:ppn=x", "nodes=2:ppn=x: ppn=x: ppn takes a positive integer"),
        ("nodes=2:a=b", "nodes=2:a=b: 'a=b' is not ppn=P, cpp=C or a node property"),
        ("nodes=2#big", "nodes=2#big: #big: only #excl or #shared"),
        ("select=2:ncpus=x", "select=2:ncpus=x: ncpus=x: must be a non-negative integer"),
        ("select=2:ncpus", "select=2:ncpus: 'ncpus' is not RESOURCE=VALUE"),
        ("select=2:mem=4 gb", "select=2:mem=4 gb: '4 gb' is not a size"),
        ("select=2:mem=4zb", "select=2:mem=4zb: '4zb' is not a size"),
        (
            "select=2:ncpus=1:ncpus=2",
            "select=2:ncpus=1:ncpus=2: duplicated resource within a section of a select "
            "specification, resource is: ncpus",
        ),
        ("place=spread", "place=spread: 'spread': place takes one of free, pack, scatter"),
        ("place=pack:scatter", "place=pack:scatter: 'scatter': place takes one of"),
        ("mem=lots", "mem=lots: 'lots' is not a size"),
        ("ncpus=-2", "ncpus=-2: must be a non-negative integer"),
        ("walltime=1:99:00", "walltime=1:99:00: minutes and seconds must be below 60"),
        ("walltime=abc", "walltime=abc: not a duration: use [[HH:]MM:]SS"),
        ("walltime=0", "walltime=0: must be positive"),
        ("nodes", "nodes: expected RESOURCE=VALUE"),
        ("9x=1", "9x=1: expected RESOURCE=VALUE"),
        (
            "nodes=2,select=2",
            "nodes= and select=: Cannot be used with select or place: nodes (jobs cannot "
            "use both new and old syntax)",
        ),
        (
            "select=2,mem=4gb",
            'mem=: "-lresource=" cannot be used with "select" or "place", resource is: mem '
            "(jobs cannot use both new and old syntax)",
        ),
        ("nodes=2,place=pack", "Cannot be used with select or place: nodes"),
        ("nodes=64-8", "nodes=64-8: the maximum 8 is below the minimum 64"),
        ("nodes=0-8", "nodes=0-8: the minimum number of nodes must be at least 1"),
        ("nodes=8-", "nodes=8-: the number of nodes must be a positive integer"),
        ("nodes=-8", "nodes=-8: the number of nodes must be a positive integer"),
        ("nodes=1-2-3", "nodes=1-2-3: the number of nodes must be a positive integer"),
        ("select=2-4", "select=2-4: the number of nodes must be a positive integer"),
    ],
)
def test_parse_resources_refuses(spec, message):
    with pytest.raises(ResourceError) as err:
        parse_resources([spec])
    assert str(err.value).startswith(message) or message in str(err.value)


def test_mixing_syntax_across_l_options_is_refused():
    with pytest.raises(ResourceError, match="jobs cannot use both new and old syntax"):
        parse_resources(["select=2", "walltime=60", "nodes=1"])
    with pytest.raises(ResourceError, match="resource is: ncpus"):
        parse_resources(["ncpus=4", "select=1:ncpus=4"])


@pytest.mark.parametrize(
    "specs,body",
    [
        (["select=2:ncpus=2:mem=4gb:mpiprocs=2"],
         {"select": [{"count": 2, "ncpus": 2, "mem": "4gb", "mpiprocs": 2}]}),
        (["select=1:ncpus=2:mem=954MB"], {"select": [{"count": 1, "ncpus": 2, "mem": "954MB"}]}),
        (["select=ncpus=4:ngpus=1+2:ncpus=1", "place=scatter:excl"],
         {"select": [{"count": 1, "ncpus": 4, "custom": {"ngpus": "1"}},
                     {"count": 2, "ncpus": 1}],
          "place": "scatter:excl"}),
        (["nodes=2:ppn=2"], {"nodes_spec": "2:ppn=2"}),
        (["nodes=2:ppn=2+1:ppn=4#excl", "mem=8gb"],
         {"nodes_spec": "2:ppn=2+1:ppn=4#excl", "resources": {"mem": "8gb"}}),
        (["nodes=4"], {"nodes": 4}),
        (["ncpus=2", "mem=4gb"], {"resources": {"ncpus": "2", "mem": "4gb"}}),
        (["software=abaqus"], {"resources": {"software": "abaqus"}}),
        (["nodes=2-8"], {"nodes": 2, "nodes_max": 8}),
        (["walltime=60"], {}),
    ],
)  # fmt: skip
def test_resources_become_the_api_request(specs, body):
    res = parse_resources(specs)
    res.check_complete()
    assert res.body() == body


def test_place_needs_select_in_the_whole_request():
    # A directive may give place and the command line select ...
    res = parse_resources(["place=pack"]).overridden_by(parse_resources(["select=2"]))
    res.check_complete()
    assert res.body() == {"select": [{"count": 2}], "place": "pack"}
    # ... but a request without select is refused.
    with pytest.raises(ResourceError, match='Cannot have "place" without "select"'):
        parse_resources(["place=pack"]).check_complete()


def test_a_node_range_asks_for_a_moldable_job():
    res = parse_resources(["nodes=8-64,walltime=1:00:00"])
    assert (res.nodes, res.nodes_max, res.walltime) == (8, 64, 3600)
    # A later count replaces the range, and a later range the count.
    assert parse_resources(["nodes=8-64", "nodes=4"]).nodes_max is None
    assert parse_resources(["nodes=4", "nodes=2-3"]).nodes_max == 3
    big = parse_resources(["nodes=1-99999999999999999999"])
    assert big.nodes_max == 99999999999999999999  # the daemon names the machine's size
    # The command line's count beats a directive's range whole.
    assert Resources(nodes=2, nodes_max=9).overridden_by(Resources(nodes=3)).nodes_max is None
    assert Resources(nodes=2, nodes_max=9).overridden_by(Resources(walltime=5)).nodes_max == 9


def test_qsub_sends_the_range_and_the_model():
    script = "#PBS -l nodes=8-64\n#PBS -W speedup=downey:64:1.5\necho\n"
    body, _ = qsub.build_request(["-l", "walltime=2:00:00"], script, "job.sh")
    assert (body["nodes"], body["nodes_max"], body["speedup"]) == (8, 64, "downey:64:1.5")
    body, _ = qsub.build_request(["-W", "speedup=fixed", "-l", "nodes=2-4"], "echo\n", "j")
    assert (body["nodes"], body["nodes_max"], body["speedup"]) == (2, 4, "fixed")


@pytest.mark.parametrize(
    "value,message",
    [
        ("downey:0.5:1", "-W speedup=downey:0.5:1: A is 0.5; it must be at least 1"),
        ("downey:4", "-W speedup=downey:4: give downey:A:SIGMA"),
        ("downey:4:-1", "-W speedup=downey:4:-1: give downey:A:SIGMA"),
        ("amdahl:0.9", "-W speedup=amdahl:0.9: give downey:A:SIGMA"),
        ("downey:1e3:1", "-W speedup=downey:1e3:1: give downey:A:SIGMA"),
        ("downey:" + "9" * 80 + ":1", "at most 64 characters"),
    ],
)
def test_qsub_refuses_a_bad_speedup(value, message):
    with pytest.raises(UsageError) as err:
        qsub.build_request(["-l", "nodes=1-4", "-W", f"speedup={value}"], "echo\n", "STDIN")
    assert message in str(err.value)


def test_resources_override():
    base = Resources(nodes=2, walltime=60, syntax="nodes")
    top = Resources(nodes=None, walltime=120)
    assert base.overridden_by(top) == Resources(nodes=2, walltime=120, syntax="nodes")
    assert base.overridden_by(Resources(nodes=4, syntax="select")).nodes == 4


# -- job attributes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["afterok:12", "afterok:12.hpcline:13", "afterany:1,afternotok:2:3"]
)
def test_depend_accepted(text):
    assert jobattrs.parse_depend(text) == text


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "before:12",
            "depend=before:12: unknown dependency type 'before'; "
            "batchd knows afterok, afternotok, afterany",
        ),
        ("afterok", "depend=afterok: afterok needs at least one job id"),
        ("afterok:", "depend=afterok:: afterok needs at least one job id"),
        ("afterok:12:x", "depend=afterok:12:x: 'x' is not a job id"),
    ],
)
def test_depend_refused(text, message):
    with pytest.raises(ValueError) as err:
        jobattrs.parse_depend(text)
    assert str(err.value) == message


def test_w_only_depend():
    assert jobattrs.parse_w(["depend=afterok:1", "depend=afterany:2"]) == "afterany:2"
    assert jobattrs.parse_w([]) is None
    with pytest.raises(ValueError, match=r"^-W block=true: batchd supports only -W depend="):
        jobattrs.parse_w(["block=true"])
    with pytest.raises(ValueError, match=r"^-W depend=after:1: unknown dependency type"):
        jobattrs.parse_w(["depend=after:1"])


def test_variables():
    env = {"HOME": "/home/alice"}
    assert jobattrs.parse_variables(["A=1,B=2", "C=x=y"], env) == {"A": "1", "B": "2", "C": "x=y"}
    assert jobattrs.parse_variables(['X="a,b",Y=2'], env) == {"X": "a,b", "Y": "2"}
    assert jobattrs.parse_variables(["HOME,NOPE"], env) == {"HOME": "/home/alice", "NOPE": ""}
    assert jobattrs.parse_variables(["BATCHD_RUNTIME=600"], env) == {"BATCHD_RUNTIME": "600"}
    with pytest.raises(ValueError, match="'1A' is not a variable name"):
        jobattrs.parse_variables(["1A=2"], env)
    with pytest.raises(ValueError, match="unbalanced quote"):
        jobattrs.parse_variables(['X="a'], env)


@pytest.mark.parametrize("text,value", [("0", 0), ("-1024", -1024), ("1023", 1023), (" 5", 5)])
def test_priority(text, value):
    assert jobattrs.parse_priority(text) == value


@pytest.mark.parametrize("text", ["1024", "-1025", "abc", "1.5", ""])
def test_priority_refused(text):
    with pytest.raises(ValueError) as err:
        jobattrs.parse_priority(text)
    assert str(err.value) == f"-p {text}: priority must be an integer between -1024 and +1023"


def test_names():
    assert jobattrs.check_name("my_job-1.x") == "my_job-1.x"
    for bad in ["a b", "a@b", "a:b", "", "x" * 237]:
        with pytest.raises(ValueError, match="illegal job name"):
            jobattrs.check_name(bad)
    assert jobattrs.name_from_path("/home/alice/run job.sh") == "run_job.sh"
    assert jobattrs.name_from_path("job.pbs") == "job.pbs"


def test_hold_types_and_job_ids():
    assert jobattrs.parse_hold_types("u") == "u"
    assert jobattrs.parse_hold_types("sou") == "uos"
    for bad in ["", "x", "un", "p"]:
        with pytest.raises(ValueError, match="hold types are u, o and s"):
            jobattrs.parse_hold_types(bad)
    assert jobattrs.is_job_id("12")
    assert jobattrs.is_job_id("12.hpcline")
    assert jobattrs.is_job_id("12.hpc.example.org")
    for bad in ["x", "12.", ".12", "12 ", "R1.hpcline", ""]:
        assert not jobattrs.is_job_id(bad)


# -- qsub -a --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1130", utc_epoch(2026, 11, 21, 11, 30)),  # later today
        ("0930", utc_epoch(2026, 11, 22, 9, 30)),  # passed today: tomorrow
        ("1000", utc_epoch(2026, 11, 22, 10, 0)),  # this very minute counts as passed
        ("1001.30", utc_epoch(2026, 11, 21, 10, 1, 30)),
        ("221200", utc_epoch(2026, 11, 22, 12, 0)),  # DD given: no tomorrow rule
        ("210900", utc_epoch(2026, 11, 21, 9, 0)),  # today, even though past
        ("200900", utc_epoch(2026, 12, 20, 9, 0)),  # day before today: next month
        ("11301200", utc_epoch(2026, 11, 30, 12, 0)),  # this month
        ("12011200", utc_epoch(2026, 12, 1, 12, 0)),
        ("10011200", utc_epoch(2027, 10, 1, 12, 0)),  # month before this one: next year
        ("02311200", utc_epoch(2027, 3, 3, 12, 0)),  # Feb 31 rolls over as mktime does
        ("2701011200", utc_epoch(2027, 1, 1, 12, 0)),  # YY < 69: 20YY
        ("7001011200", utc_epoch(1970, 1, 1, 12, 0)),  # YY > 68: 19YY
        ("2510011200", utc_epoch(2025, 10, 1, 12, 0)),  # a year given: no next-year rule
        ("202701011200.30", utc_epoch(2027, 1, 1, 12, 0, 30)),
    ],
)
def test_exec_time(text, expected):
    assert parse_exec_time(text, NOW) == expected


def test_exec_time_follows_the_given_clock_not_the_wall_clock():
    now = utc_epoch(2030, 6, 1, 23, 0)
    assert parse_exec_time("2330", now) == utc_epoch(2030, 6, 1, 23, 30)
    assert parse_exec_time("0100", now) == utc_epoch(2030, 6, 2, 1, 0)


@pytest.mark.parametrize(
    "text,message",
    [
        ("2400", "hour must be 00-23"),
        ("1160", "minute must be 00-59"),
        ("1130.60", "seconds must be 00-59"),
        ("1130.5", "use [[[[CC]YY]MM]DD]hhmm[.SS]"),
        ("00011200", "month must be 01-12"),
        ("13011200", "month must be 01-12"),
        ("321200", "day must be 01-31"),
        ("001200", "day must be 01-31"),
        ("123", "use [[[[CC]YY]MM]DD]hhmm[.SS]"),
        ("12345", "use [[[[CC]YY]MM]DD]hhmm[.SS]"),
        ("tomorrow", "use [[[[CC]YY]MM]DD]hhmm[.SS]"),
        ("12:30", "use [[[[CC]YY]MM]DD]hhmm[.SS]"),
    ],
)
def test_exec_time_refused(text, message):
    with pytest.raises(ValueError) as err:
        parse_exec_time(text, NOW)
    assert str(err.value) == message


# -- est start (qstat -T) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "epoch,expected",
    [
        (utc_epoch(2026, 11, 21, 14, 30), "14:30"),
        (utc_epoch(2026, 11, 23, 14, 5), "Mo 14"),
        (utc_epoch(2026, 11, 27, 23, 0), "Fr 23"),
        (utc_epoch(2026, 12, 25, 8, 0), "Dec"),
        (utc_epoch(2027, 3, 1, 8, 0), "2027"),
        (utc_epoch(2035, 3, 1, 8, 0), ">5yrs"),
        (utc_epoch(2026, 11, 21, 9, 0), "--"),
        (None, "--"),
        (0, "?"),
    ],
)
def test_est_start_short(epoch, expected):
    assert est_start_short(epoch, NOW) == expected


def test_est_start_short_for_a_started_job():
    assert est_start_short(utc_epoch(2026, 11, 21, 9, 15), NOW, past_ok=True) == "09:15"
    assert est_start_short(utc_epoch(2026, 11, 20, 9, 15), NOW, past_ok=True) == "Fr 09"


# -- #PBS directives --------------------------------------------------------------------------------


def test_directives_stop_at_the_first_command():
    script = "\n".join(
        [
            "#!/bin/sh",
            "# a comment",
            "#PBS -N first -l nodes=2",
            "",
            "  #PBS -l walltime=01:00:00",
            "#PBSX -q ignored",
            "#PBS",
            '#PBS -v "MSG=hello world"',
            "echo start",
            "#PBS -q too_late",
        ]
    )
    assert directives(script) == [
        (3, ["-N", "first", "-l", "nodes=2"]),
        (5, ["-l", "walltime=01:00:00"]),
        (8, ["-v", "MSG=hello world"]),
    ]


def test_directive_with_an_unbalanced_quote():
    with pytest.raises(DirectiveError, match="^STDIN:2: #PBS -N 'x: No closing quotation"):
        directives("#!/bin/sh\n#PBS -N 'x\n")
    with pytest.raises(DirectiveError, match="^job.sh:2: #PBS -N 'x: No closing quotation"):
        directives("#!/bin/sh\n#PBS -N 'x\n", source="job.sh")


# -- qsub request building ------------------------------------------------------------------------------

SCRIPT = """#!/bin/sh
#PBS -N from_script
#PBS -l nodes=2,walltime=00:10:00
#PBS -q night
#PBS -p 10
#PBS -v A=1,B=2
#PBS -j oe -o out.log -m abe
sleep 1
"""


# What qsub reads of where it runs (PBS_O_*): a known environment, in a known directory.
SUBMIT_ENV = {
    "HOME": "/home/alice",
    "LANG": "en_US.UTF-8",
    "LOGNAME": "alice",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "SHELL": "/bin/bash",
}


@pytest.fixture
def here(monkeypatch, tmp_path: Path) -> Path:
    """qsub run in ``tmp_path`` with SUBMIT_ENV (no MAIL; TZ=UTC, from ``utc``)."""
    for name in ("HOME", "LANG", "LOGNAME", "PATH", "MAIL", "SHELL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in SUBMIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    return tmp_path


def origin(cwd: Path) -> dict[str, str]:
    """The PBS_O_* variables qsub sends from ``here``."""
    return {
        **{f"PBS_O_{name}": value for name, value in SUBMIT_ENV.items()},
        "PBS_O_TZ": "UTC",
        "PBS_O_WORKDIR": str(cwd),
        "PBS_O_SYSTEM": os.uname().sysname,
        "PBS_O_HOST": socket.gethostname(),
    }


def here_path(name: str) -> str:
    """An -o/-e path as qsub sends it: this host's name, absolute in the current directory."""
    return f"{socket.gethostname()}:{os.path.join(os.getcwd(), name)}"


def test_qsub_request_from_directives(here: Path):
    body, exec_spec = qsub.build_request([], SCRIPT, "job.sh")
    assert exec_spec is None
    assert body == {
        "name": "from_script",
        "queue": "night",
        "nodes": 2,
        "walltime": 600,
        "priority": 10,
        "variables": {**origin(here), "A": "1", "B": "2"},
        "output_path": here_path("out.log"),
        "join_path": "oe",
        "mail_points": "abe",
        "script": SCRIPT,
    }


def test_qsub_command_line_beats_directives(here: Path):
    argv = ["-N", "cli", "-l", "select=4", "-p", "-5", "-v", "B=3,C=4", "-h", "-a", "1130"]
    argv += ["-W", "depend=afterok:7", "-o", "/abs/cli.out", "-j", "n"]
    body, exec_spec = qsub.build_request(argv, SCRIPT, "job.sh")
    assert exec_spec == "1130"
    assert body == {
        "name": "cli",
        "queue": "night",
        "select": [{"count": 4}],
        "walltime": 600,
        "priority": -5,
        "hold": True,
        "depend": "afterok:7",
        "variables": {**origin(here), "A": "1", "B": "3", "C": "4"},
        "output_path": f"{socket.gethostname()}:/abs/cli.out",
        "join_path": "n",
        "mail_points": "abe",
        "script": SCRIPT,
    }


def test_qsub_defaults_send_name_script_and_where_it_runs(here: Path):
    body, _ = qsub.build_request([], "sleep 1\n", "job.sh")
    assert body == {"name": "job.sh", "script": "sleep 1\n", "variables": origin(here)}


def test_qsub_sends_only_the_origin_variables_that_are_set(here: Path, monkeypatch):
    monkeypatch.delenv("LANG")
    monkeypatch.setenv("MAIL", "/var/mail/alice")
    variables = qsub.build_request([], "sleep 1\n", "job.sh")[0]["variables"]
    assert "PBS_O_LANG" not in variables
    assert variables["PBS_O_MAIL"] == "/var/mail/alice"


def test_qsub_workdir_is_the_current_directory(here: Path, monkeypatch):
    (here / "sub").mkdir()
    monkeypatch.chdir(here / "sub")
    monkeypatch.delenv("PWD")  # no shell to tell it: the directory itself
    variables = qsub.build_request([], "sleep 1\n", "job.sh")[0]["variables"]
    assert variables["PBS_O_WORKDIR"] == os.getcwd()
    assert os.path.samefile(variables["PBS_O_WORKDIR"], here / "sub")


def test_qsub_output_path_relative_made_absolute_on_this_host(here: Path):
    body, _ = qsub.build_request(["-o", "logs/run.out"], "sleep 1\n", "job.sh")
    assert body["output_path"] == f"{socket.gethostname()}:{os.getcwd()}/logs/run.out"
    assert "error_path" not in body and "join_path" not in body


def test_qsub_output_path_naming_a_host_is_kept(here: Path):
    body, _ = qsub.build_request(["-o", "otherhost:/x"], "sleep 1\n", "job.sh")
    assert body["output_path"] == "otherhost:/x"


def test_qsub_error_path_and_join(here: Path):
    body, _ = qsub.build_request(["-e", "err.log", "-j", "oe"], "sleep 1\n", "job.sh")
    assert body["error_path"] == here_path("err.log")
    assert body["join_path"] == "oe"
    assert "output_path" not in body


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-j", "bad"], "-j bad: give oe, eo or n"),
        (["-k", "bad"], "-k bad: give n, or any of o, e and d"),
        (["-o", ":/x"], "-o :/x: an empty host name"),
    ],
)
def test_qsub_bad_output_options_are_refused(here: Path, argv, message):
    with pytest.raises(UsageError) as err:
        qsub.build_request(argv, "sleep 1\n", "job.sh")
    assert str(err.value).startswith(message)


def test_qsub_keep_is_checked_not_sent(here: Path):
    body, _ = qsub.build_request(["-k", "oe"], "sleep 1\n", "job.sh")
    assert body == {"name": "job.sh", "script": "sleep 1\n", "variables": origin(here)}


def test_qsub_shell_is_sent(here: Path):
    body, _ = qsub.build_request(["-S", "/bin/zsh"], "sleep 1\n", "job.sh")
    assert body["shell"] == "/bin/zsh"


def test_qsub_export_all_sends_the_environment(here: Path, monkeypatch):
    monkeypatch.setenv("MY_SETTING", "on")
    monkeypatch.setenv("PBS_O_HOME", "/elsewhere")  # PBS_O_* are qsub's own: not exported
    body, _ = qsub.build_request(["-V"], "sleep 1\n", "job.sh")
    variables = body["variables"]
    assert variables["MY_SETTING"] == "on"
    assert variables["HOME"] == "/home/alice"  # the environment as it is, not only PBS_O_*
    assert variables["PBS_O_HOME"] == "/home/alice"
    assert origin(here).items() <= variables.items()
    without, _ = qsub.build_request([], "sleep 1\n", "job.sh")
    assert "MY_SETTING" not in without["variables"]


def test_qsub_v_beats_export_all(here: Path, monkeypatch):
    monkeypatch.setenv("MY_SETTING", "on")
    body, _ = qsub.build_request(["-V", "-v", "MY_SETTING=off"], "sleep 1\n", "job.sh")
    assert body["variables"]["MY_SETTING"] == "off"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-l", "nodes=0"], "-l nodes=0: the number of nodes must be a positive integer"),
        (["-l", "walltime=abc"], "-l walltime=abc: not a duration: use [[HH:]MM:]SS"),
        (["-p", "2000"], "-p 2000: priority must be an integer between -1024 and +1023"),
        (["-a", "2400"], "-a 2400: illegal date/time: hour must be 00-23"),
        (
            ["-N", "a:b"],
            "-N 'a:b': illegal job name: no blanks, '@' or ':', at most 236 characters",
        ),
        (["-W", "depend=before:1"], "-W depend=before:1: unknown dependency type 'before'"),
        (["-I"], "interactive jobs are not supported"),
        (["-Z"], "unrecognized arguments: -Z (see qsub --help)"),
    ],
)
def test_qsub_bad_input(argv, message):
    with pytest.raises(UsageError) as err:
        qsub.build_request(argv, "sleep 1\n", "STDIN")
    assert str(err.value).startswith(message)


def test_qsub_bad_directive_names_its_line():
    with pytest.raises(UsageError) as err:
        qsub.build_request([], "#PBS -l nodes=1\n#PBS -Z\necho\n", "STDIN")
    assert str(err.value) == ("STDIN:2: #PBS -Z: unrecognized arguments: -Z (see qsub --help)")


def test_qsub_bad_resource_in_directive():
    with pytest.raises(
        UsageError,
        match="^STDIN:1: #PBS -l nodes=2:ppn=0: -l nodes=2:ppn=0: ppn=0: ppn takes a "
        "positive integer$",
    ):
        qsub.build_request([], "#PBS -l nodes=2:ppn=0\necho\n", "STDIN")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("#PBS -l nodes=0", "-l nodes=0: the number of nodes must be a positive integer"),
        ("#PBS -l walltime=1:99:00", "-l walltime=1:99:00: minutes and seconds must be below 60"),
        (
            "#PBS -l select=2",
            "-l nodes= and select=: Cannot be used with select or place: nodes (jobs cannot "
            "use both new and old syntax)",
        ),
        ("#PBS -N a:b", "-N 'a:b': illegal job name"),
        ("#PBS -p 5000", "-p 5000: priority must be an integer between -1024 and +1023"),
        ("#PBS -a 2561", "-a 2561: illegal date/time: hour must be 00-23"),
        ("#PBS -W depend=before:1", "-W depend=before:1: unknown dependency type 'before'"),
        ("#PBS -v 1X=2", "-v 1X=2: '1X' is not a variable name"),
        ("#PBS -v 'A=1", "No closing quotation"),
        ("#PBS --frobnicate", "unrecognized arguments: --frobnicate (see qsub --help)"),
    ],
)
def test_every_directive_error_names_the_script_and_line(line: str, message: str) -> None:
    """As docs/client.md says: an error in a #PBS line names the script and the line."""
    script = f"#!/bin/sh\n#PBS -N ok\n\n#PBS -l nodes=2\n{line}\nsleep 1\n"
    with pytest.raises(UsageError) as err:
        qsub.build_request([], script, "job.sh", source="jobs/job.sh")
    assert str(err.value).startswith(f"jobs/job.sh:5: {line}: "), str(err.value)
    assert message in str(err.value)
    # The same option on the command line is not a directive: no script and line.
    if "select" not in line and "'A=1" not in line:
        with pytest.raises(UsageError) as err:
            qsub.build_request(line.split()[1:], "sleep 1\n", "job.sh")
        assert not str(err.value).startswith("jobs/job.sh")


# -- qmgr -------------------------------------------------------------------------------------------------


def test_qmgr_tokenize():
    assert tokenize('set node n1 comment = "down for, maint", state=offline') == [
        ("word", "set"),
        ("word", "node"),
        ("word", "n1"),
        ("word", "comment"),
        ("op", "="),
        ("quoted", "down for, maint"),
        ("comma", ","),
        ("word", "state"),
        ("op", "="),
        ("word", "offline"),
    ]
    assert tokenize("set sched x += 1") == [
        ("word", "set"),
        ("word", "sched"),
        ("word", "x"),
        ("op", "+="),
        ("word", "1"),
    ]


@pytest.mark.parametrize(
    "text,command",
    [
        (
            "set server scheduler_policy = fcfs-easy",
            Command("set", "server", None, [("scheduler_policy", "=", "fcfs-easy")]),
        ),
        (
            "s s scheduler_policy=dynp",
            Command("set", "server", None, [("scheduler_policy", "=", "dynp")]),
        ),
        (
            "set sched dynp_decider = simple, quality = ms",
            Command(
                "set", "sched", None, [("dynp_decider", "=", "simple"), ("quality", "=", "ms")]
            ),
        ),
        ("list server", Command("list", "server")),
        ("l q workq", Command("list", "queue", "workq")),
        ("list node node001", Command("list", "node", "node001")),
        ("p s", Command("print", "server")),
        (
            "set node node001 state = offline, comment = bad fan",
            Command(
                "set", "node", "node001", [("state", "=", "offline"), ("comment", "=", "bad fan")]
            ),
        ),
        ("quit", Command("quit")),
    ],
)
def test_qmgr_parse(text, command):
    assert parse(text) == command


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "frobnicate server",
            "unknown command 'frobnicate'; batchd's qmgr knows create, delete, set, list and print",
        ),
        ("list", "list: name an object: server, sched, queue or node"),
        (
            "list widget",
            "unknown object 'widget'; batchd's qmgr knows server, sched, queue and node",
        ),
        ("set server scheduler_policy =", "scheduler_policy =: missing value in:"),
        ("set server a = 1,", "trailing ',' in:"),
        ("set server a = 1 b = 2", "expected ',' before"),
        ('set node n1 comment = "x', "unbalanced quote in:"),
    ],
)
def test_qmgr_parse_refuses(text, message):
    with pytest.raises(QmgrSyntaxError) as err:
        parse(text)
    assert str(err.value).startswith(message)


SCHED = {
    "policy": "dynp",
    "params": {"decider": "advanced", "quality": "artww"},
    "policies": [
        {"name": "fcfs-cons", "description": "", "params": ["replan"]},
        {"name": "dynp-basic", "description": "", "params": ["lower", "upper", "threshold"]},
        {
            "name": "dynp",
            "description": "",
            "params": ["decider", "quality", "slackness", "reduced_future", "min_backlog"],
        },
    ],
    "report": {},
    "switches": [],
}


@pytest.mark.parametrize(
    "attr,policy,name",
    [
        ("decider", "dynp", "decider"),
        ("dynp_decider", "dynp", "decider"),
        ("dynp_quality", "dynp", "quality"),
        ("min_backlog", "dynp", "min_backlog"),
        ("dynp_min_backlog", "dynp", "min_backlog"),
        ("dynp_basic_lower", "dynp-basic", "lower"),
        ("dynp_lower", "dynp-basic", "lower"),
        ("fcfs_replan", "fcfs-cons", "replan"),
        ("fcfs_cons_replan", "fcfs-cons", "replan"),
        ("dynp_nonsense", "dynp", "dynp_nonsense"),
        ("decider", "no-such-policy", "decider"),
    ],
)
def test_qmgr_param_names(attr, policy, name):
    assert qmgr.param_name(attr, policy, SCHED) == name
