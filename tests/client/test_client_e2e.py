"""Every command's main() against a stub batchd (stdlib HTTP on a Unix socket, in a thread).

The stub answers canned JSON shaped like daemon/batchd/server/*schemas.py and
records each request, so the tests check what the client sent and printed.
"""

from __future__ import annotations

import calendar
import io
import json
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest

from batchclient import jobtable, qalter, qdel, qhold, qmgr, qnodes, qrls, qstat, qsub
from batchclient.transport import Client, Endpoint, default_socket


def utc_epoch(y, mo, d, h=0, mi=0, s=0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


NOW = utc_epoch(2026, 11, 21, 10, 0, 0)


# -- the stub daemon ------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        stub: Stub = self.server.stub  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        rec = {
            "method": self.command,
            "path": url.path,
            "query": dict(parse_qsl(url.query)),
            "body": json.loads(raw) if raw else None,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        stub.requests.append(rec)
        answer = stub.routes.get((self.command, url.path))
        if answer is None:
            status, body = 404, {"error": "not_found", "message": f"no route {url.path}"}
        else:
            status, body = answer
        if callable(body):  # an answer that depends on the query (pages)
            body = body(rec["query"])
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_DELETE = _handle

    def log_message(self, *args: object) -> None:
        pass


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class Stub:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], tuple[int, object]] = {}
        self.requests: list[dict] = []

    def on(self, method: str, path: str, body: object, status: int = 200) -> None:
        self.routes[(method, path)] = (status, body)

    def calls(self) -> list[tuple[str, str]]:
        return [(r["method"], r["path"]) for r in self.requests]


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module")
def stub_server():
    tmp = tempfile.mkdtemp(prefix="bq")  # short: socket paths are limited to ~108 bytes
    path = os.path.join(tmp, "batchd.sock")
    server = UnixServer(path, Handler)
    server.stub = Stub()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server, path
    server.shutdown()
    server.server_close()
    thread.join()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def stub(stub_server, monkeypatch, utc):
    """A fresh stub (no routes, no requests) behind $BATCHD_SOCKET."""
    server, path = stub_server
    server.stub = Stub()
    monkeypatch.delenv("BATCHD_URL", raising=False)
    monkeypatch.delenv("BATCHD_TOKEN", raising=False)
    monkeypatch.setenv("BATCHD_SOCKET", path)
    return server.stub


def out_err(capsys) -> tuple[str, str]:
    captured = capsys.readouterr()
    return captured.out, captured.err


ORIGIN_FROM_ENV = ("HOME", "LANG", "LOGNAME", "PATH", "MAIL", "SHELL", "TZ")


def split_origin(body: dict) -> tuple[dict, dict[str, str]]:
    """A qsub request body without its variables, and the variables qsub was given (-v):
    the PBS_O_* ones it always sends are checked here against where this test runs."""
    body = dict(body)
    variables = dict(body.pop("variables"))
    origin = {k: variables.pop(k) for k in list(variables) if k.startswith("PBS_O_")}
    expected = {f"PBS_O_{n}": os.environ[n] for n in ORIGIN_FROM_ENV if n in os.environ}
    assert os.path.samefile(origin.pop("PBS_O_WORKDIR"), os.getcwd())
    assert origin.pop("PBS_O_HOST") == socket.gethostname()
    assert origin.pop("PBS_O_SYSTEM") == os.uname().sysname
    assert origin == expected  # the rest: those set in this environment, and no other
    return body, variables


# -- canned API objects (schemas.py shapes) ----------------------------------------------------


def job(**kw):
    base = {
        "id": "12.hpcline",
        "seq": 12,
        "name": "STDIN",
        "owner": "alice",
        "queue": "workq",
        "state": "R",
        "nodes": 2,
        "walltime": 3600,
        "runtime": None,
        "priority": 0,
        "hold_types": "",
        "depend": None,
        "ctime": NOW - 1000,
        "qtime": NOW - 1000,
        "etime": NOW - 1000,
        "exec_time": None,
        "stime": NOW - 754,
        "end_time": None,
        "est_start": NOW - 754,
        "elapsed": 754,
        "exec_host": ["node001", "node002"],
        "exit_status": None,
        "outcome": None,
        "comment": None,
        "started_by": "fcfs-easy",
        "variables": {},
    }
    base.update(kw)
    return base


J12 = job()
J13 = job(
    id="13.hpcline",
    seq=13,
    name="sim",
    owner="bob",
    state="Q",
    nodes=8,
    stime=None,
    elapsed=None,
    exec_host=[],
    est_start=NOW + 3600,
)
J11 = job(
    id="11.hpcline",
    seq=11,
    state="F",
    ctime=NOW - 3000,
    qtime=NOW - 3000,
    etime=NOW - 3000,
    stime=NOW - 2000,
    est_start=NOW - 2000,
    end_time=NOW - 1100,
    exit_status=0,
    elapsed=900,
)


def job_list(*jobs):
    return {"server": "hpcline", "now": NOW, "jobs": list(jobs)}


# What qstat adds to every listing of its tables: one page of brief jobs at a time.
PAGE = {"brief": "true", "limit": "5000"}


SERVER = {
    "name": "hpcline",
    "version": "0.1.0",
    "now": NOW,
    "clock": "accelerated",
    "speed": 60.0,
    "started": NOW - 86400,
    "machine": "hpcline",
    "nodes": 96,
    "default_queue": "workq",
    "policy": "dynp",
    "node_fail": "requeue",
    "jobs": {"Q": 1, "R": 1},
    "job_history_duration": 1_209_600,
    "replay": None,
}
QUEUE = {
    "name": "workq",
    "queue_type": "Execution",
    "enabled": True,
    "started": True,
    "default": True,
    "max_nodes": 96,
    "max_walltime": 86400,
    "default_walltime": 3600,
    "total": 2,
    "counts": {"Q": 1, "R": 1},
}
QUEUES = {"server": "hpcline", "now": NOW, "queues": [QUEUE]}
NODE1 = {
    "name": "node001",
    "index": 0,
    "machine": "hpcline",
    "state": "job-exclusive",
    "jobs": ["12.hpcline"],
    "reservation": None,
    "comment": None,
}
NODE2 = dict(NODE1, name="node002", index=1, state="offline", jobs=[], comment="maint")
NODES = {"server": "hpcline", "now": NOW, "nodes": [NODE1, NODE2]}
SCHED = {
    "policy": "dynp",
    "params": {"decider": "advanced", "quality": "artww"},
    "policies": [
        {"name": "fcfs-easy", "description": "FCFS + EASY", "params": []},
        {"name": "dynp", "description": "self-tuning dynP", "params": ["decider", "quality"]},
    ],
    "report": {},
    "switches": [],
}


# -- qsub ----------------------------------------------------------------------------------------


def test_qsub_file_with_directives(stub, capsys, tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n#PBS -l nodes=4\n#PBS -N fromfile\nsleep 1\n")
    stub.on("POST", "/jobs", job(id="42.hpcline"), status=201)
    rc = qsub.main(
        ["-l", "walltime=1:00:00", "-q", "workq", "-v", "BATCHD_RUNTIME=60", str(script)]
    )
    assert (rc, out_err(capsys)) == (0, ("42.hpcline\n", ""))
    assert stub.calls() == [("POST", "/jobs")]
    body, variables = split_origin(stub.requests[0]["body"])
    assert body == {
        "name": "fromfile",
        "queue": "workq",
        "nodes": 4,
        "walltime": 3600,
        "script": script.read_text(),
    }
    assert variables == {"BATCHD_RUNTIME": "60"}
    assert stub.requests[0]["headers"]["content-type"] == "application/json"
    assert stub.requests[0]["headers"]["host"] == "batchd"


def test_qsub_name_defaults_to_the_file_name(stub, capsys, tmp_path):
    script = tmp_path / "job.pbs"
    script.write_text("sleep 1\n")
    stub.on("POST", "/jobs", job(id="43.hpcline"), status=201)
    assert qsub.main([str(script)]) == 0
    body, variables = split_origin(stub.requests[0]["body"])
    assert (body, variables) == ({"name": "job.pbs", "script": "sleep 1\n"}, {})


def test_qsub_stdin_exec_time_from_the_daemons_clock(stub, capsys, monkeypatch):
    daemon_now = utc_epoch(2031, 5, 4, 22, 0)  # the emulated clock, far from the wall clock
    stub.on("GET", "/server", dict(SERVER, now=daemon_now))
    stub.on("POST", "/jobs", job(id="44.hpcline", state="W"), status=201)
    monkeypatch.setattr(sys, "stdin", io.StringIO("echo hi\n"))
    rc = qsub.main(["-a", "0630", "-h", "-p", "7", "-W", "depend=afterok:12:13", "-l", "select=2"])
    assert (rc, out_err(capsys)) == (0, ("44.hpcline\n", ""))
    assert stub.calls() == [("GET", "/server"), ("POST", "/jobs")]
    body, variables = split_origin(stub.requests[1]["body"])
    assert body == {
        "name": "STDIN",
        "select": [{"count": 2}],
        "priority": 7,
        "hold": True,
        "depend": "afterok:12:13",
        "exec_time": utc_epoch(2031, 5, 5, 6, 30),
        "script": "echo hi\n",
    }
    assert variables == {}


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-l", "nodes=0"], "qsub: -l nodes=0: the number of nodes must be a positive integer\n"),
        (["-l", "nodes=-1"], "qsub: -l nodes=-1: the number of nodes must be a positive integer\n"),
        (["-l", "nodes=x+"], "qsub: -l nodes=x+: the number of nodes must be a positive integer\n"),
        (
            ["-l", "nodes=2:ppn=-4"],
            "qsub: -l nodes=2:ppn=-4: ppn=-4: ppn takes a positive integer\n",
        ),
        (
            ["-l", "select=1:mem=4x"],
            "qsub: -l select=1:mem=4x: '4x' is not a size: an integer with an optional unit "
            "b, kb, mb, gb, tb, pb (or w, kw, ... for 8-byte words), e.g. 4gb\n",
        ),
        (["-l", "place=pack"], 'qsub: -l place=pack: Cannot have "place" without "select"\n'),
        (
            ["-l", "nodes=2", "-l", "select=2"],
            "qsub: -l nodes= and select=: Cannot be used with select or place: nodes (jobs "
            "cannot use both new and old syntax)\n",
        ),
        (
            ["-l", "walltime=1:99:00"],
            "qsub: -l walltime=1:99:00: minutes and seconds must be below 60\n",
        ),
        (["-l", "walltime=abc"], "qsub: -l walltime=abc: not a duration: use [[HH:]MM:]SS\n"),
        (["-p", "5000"], "qsub: -p 5000: priority must be an integer between -1024 and +1023\n"),
        (["-p", "x"], "qsub: -p x: priority must be an integer between -1024 and +1023\n"),
        (["-a", "99999"], "qsub: -a 99999: illegal date/time: use [[[[CC]YY]MM]DD]hhmm[.SS]\n"),
        (["-a", "2561"], "qsub: -a 2561: illegal date/time: hour must be 00-23\n"),
    ],
)
def test_qsub_bad_input_sends_nothing(stub, capsys, monkeypatch, argv, message):
    monkeypatch.setattr(sys, "stdin", io.StringIO("echo hi\n"))
    assert qsub.main(argv) == 2
    assert out_err(capsys) == ("", message)
    assert stub.requests == []


def test_qsub_directive_errors_name_the_script_file_and_line(stub, capsys, tmp_path, monkeypatch):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n#PBS -N fine\n#PBS -l nodes=0\nsleep 1\n")
    assert qsub.main([str(script)]) == 2
    err = f"qsub: {script}:3: #PBS -l nodes=0: -l nodes=0: the number of nodes must be a positive integer\n"
    assert out_err(capsys) == ("", err)
    monkeypatch.setattr(sys, "stdin", io.StringIO("#PBS -p high\ntrue\n"))
    assert qsub.main([]) == 2
    err = "qsub: STDIN:1: #PBS -p high: -p high: priority must be an integer between -1024 and +1023\n"
    assert out_err(capsys) == ("", err)
    assert stub.requests == []


def test_qsub_missing_file_and_terminal_stdin(stub, capsys, monkeypatch):
    assert qsub.main(["/no/such/script"]) == 2
    assert out_err(capsys) == ("", "qsub: script file /no/such/script: No such file or directory\n")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty(""))
    assert qsub.main([]) == 2
    assert out_err(capsys) == (
        "",
        "qsub: no script: give a script file or pipe the script on stdin\n",
    )
    assert stub.requests == []


def test_qsub_refused_by_the_daemon(stub, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("echo\n"))
    stub.on(
        "POST",
        "/jobs",
        {"error": "bad_request", "message": "nodes: 200 nodes requested; machine hpcline has 96"},
        status=400,
    )
    assert qsub.main(["-l", "nodes=200"]) == 1
    assert out_err(capsys) == ("", "qsub: nodes: 200 nodes requested; machine hpcline has 96\n")


# -- qstat ------------------------------------------------------------------------------------------


def test_qstat_default(stub, capsys):
    stub.on("GET", "/jobs", job_list(J12, J13))
    assert qstat.main([]) == 0
    out, err = out_err(capsys)
    assert err == ""
    assert out.splitlines() == [
        "Job id            Name             User              Time Use S Queue",
        "----------------  ---------------- ----------------  -------- - -----",
        "12.hpcline" + " " * 8 + "STDIN" + " " * 12 + "alice" + " " * 13 + "00:12:34 R workq" + " " * 11,
        "13.hpcline" + " " * 8 + "sim" + " " * 14 + "bob" + " " * 22 + "0 Q workq" + " " * 11,
    ]  # fmt: skip
    assert stub.requests[0]["query"] == PAGE


def test_qstat_empty_prints_nothing(stub, capsys):
    stub.on("GET", "/jobs", job_list())
    assert qstat.main([]) == 0
    assert out_err(capsys) == ("", "")


def test_qstat_alternate_user_history_est(stub, capsys):
    stub.on("GET", "/jobs", job_list(J13, J11, J12))
    assert qstat.main(["-a", "-u", "alice", "-x", "-T"]) == 0
    assert stub.requests[0]["query"] == {"user": "alice", "history": "true", **PAGE}
    out, err = out_err(capsys)
    assert err == ""
    lines = out.splitlines()
    assert lines[:4] == ["", "hpcline: ", " " * 75 + "Est", " " * 60 + "Req'd  Req'd   Start"]
    # started jobs first, by start time; then by estimated start
    assert [line.split()[0] for line in lines[6:]] == ["11.hpcline", "12.hpcline", "13.hpcline"]
    assert lines[6].endswith(" 01:00 F    --")
    assert lines[7].endswith(" 01:00 R 09:47")
    assert lines[8].endswith(" 01:00 Q 11:00")


def test_qstat_u_alone_is_the_alternate_format(stub, capsys):
    stub.on("GET", "/jobs", job_list(J12))
    assert qstat.main(["-u", "alice@host"]) == 0
    assert stub.requests[0]["query"] == {"user": "alice", **PAGE}
    out, _ = out_err(capsys)
    assert out.splitlines()[-1] == jobtable.alt_row(J12, NOW)


def test_qstat_filters(stub, capsys):
    stub.on("GET", "/jobs", job_list())
    for argv, query in [
        (["-i"], {"state": "EHQW"}),
        (["-r"], {"state": "R"}),
        (["-H"], {"state": "F", "history": "true"}),
        (["-x", "night"], {"history": "true", "queue": "night"}),
    ]:
        stub.requests.clear()
        assert qstat.main(argv) == 0
        assert stub.requests[0]["query"] == {**query, **PAGE}


def test_qstat_by_id_and_unknown_id(stub, capsys):
    stub.on("GET", "/jobs/12", J12)
    stub.on("GET", "/jobs/99.hpcline", {"error": "not_found", "message": "no job 99"}, 404)
    assert qstat.main(["12", "99.hpcline"]) == 153
    out, err = out_err(capsys)
    assert err == "qstat: Unknown Job Id 99.hpcline\n"
    assert out.splitlines()[2].startswith("12.hpcline        STDIN")
    assert stub.calls() == [("GET", "/jobs/12"), ("GET", "/jobs/99.hpcline")]


def test_qstat_finished_job_needs_x(stub, capsys):
    stub.on("GET", "/jobs/11", J11)
    assert qstat.main(["11"]) == 35
    assert out_err(capsys) == (
        "",
        "qstat: 11.hpcline Job has finished, use -x or -H to obtain historical job information\n",
    )
    assert qstat.main(["-x", "-f", "11"]) == 0
    out, _ = out_err(capsys)
    assert out.startswith("Job Id: 11.hpcline\n    Job_Name = STDIN\n")
    assert "    Exit_status = 0\n" in out
    assert out.endswith("\n\n")


def test_qstat_full(stub, capsys):
    stub.on("GET", "/jobs/13.hpcline", J13)
    assert qstat.main(["-f", "13.hpcline"]) == 0
    out, _ = out_err(capsys)
    assert out == "\n".join(jobtable.full_jobs([J13])) + "\n"
    assert "    estimated.start_time = Sat Nov 21 11:00:00 2026\n" in out


def test_qstat_json(stub, capsys):
    data = job_list(J12, J13)
    stub.on("GET", "/jobs", data)
    assert qstat.main(["-F", "json"]) == 0
    out, _ = out_err(capsys)
    assert json.loads(out) == data
    assert out == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert qstat.main(["--json", "-a"]) == 0
    assert json.loads(out_err(capsys)[0]) == data


def test_qstat_json_by_id_has_the_job_list_shape(stub, capsys):
    stub.on("GET", "/jobs/12", J12)
    stub.on("GET", "/server", SERVER)
    assert qstat.main(["-f", "--json", "12"]) == 0
    assert json.loads(out_err(capsys)[0]) == job_list(J12)


def test_qstat_f_json_is_pbs_pros_document(stub, capsys):
    running = dict(
        J12,
        resource_list={"ncpus": "4", "nodect": "2", "place": "scatter", "select": "2:ncpus=2"},
        exec_vnode="(node001:ncpus=2)+(node002:ncpus=2)",
    )
    stub.on("GET", "/jobs/12", running)
    stub.on("GET", "/server", SERVER)
    assert qstat.main(["-f", "-F", "json", "12"]) == 0
    doc = json.loads(out_err(capsys)[0])
    assert (doc["pbs_server"], doc["timestamp"]) == (SERVER["name"], SERVER["now"])
    job = doc["Jobs"]["12.hpcline"]
    assert job["job_state"] == running["state"] and job["queue"] == running["queue"]
    assert job["Resource_List"] == {
        "ncpus": 4,
        "nodect": 2,
        "place": "scatter",
        "select": "2:ncpus=2",
        "walltime": "01:00:00",
    }
    assert job["exec_host"] == "node001/0*2+node002/0*2"
    assert job["exec_vnode"] == running["exec_vnode"]
    assert job["Priority"] == running["priority"]


def paged(*pages):
    """GET /jobs answered a page at a time: page i after the cursor i (0 for the first)."""

    def answer(query):
        i = int(query.get("after", 0))
        nxt = i + 1 if i + 1 < len(pages) else None
        return dict(job_list(*pages[i]), next=nxt)

    return answer


J14 = job(id="14.hpcline", seq=14, state="F", stime=NOW - 500, elapsed=100, end_time=NOW - 400)
J15 = job(id="15.hpcline", seq=15, state="Q", stime=None, elapsed=None, est_start=NOW - 100)


def test_qstat_x_follows_the_pages(stub, capsys, monkeypatch):
    stub.on("GET", "/jobs", paged([J11, J12], [J13], [J14, J15]))
    assert qstat.main(["-x"]) == 0
    out, err = out_err(capsys)
    assert err == ""
    lines = out.splitlines()
    assert lines[:2] == jobtable.DEFAULT_HEADER  # once
    assert [line.split()[0] for line in lines[2:]] == [
        "11.hpcline", "12.hpcline", "13.hpcline", "14.hpcline", "15.hpcline",
    ]  # fmt: skip
    assert lines[2:] == [jobtable.default_row(j) for j in (J11, J12, J13, J14, J15)]
    queries = [r["query"] for r in stub.requests]
    assert queries == [
        {"history": "true", **PAGE},
        {"history": "true", "after": "1", **PAGE},
        {"history": "true", "after": "2", **PAGE},
    ]


def test_qstat_pages_in_every_layout(stub, capsys):
    pages = ([J11, J12], [J13], [J14, J15])
    everything = [J11, J12, J13, J14, J15]
    stub.on("GET", "/jobs", paged(*pages))
    # JSON: the very text print_json gives for the whole list.
    assert qstat.main(["-x", "-F", "json"]) == 0
    whole = job_list(*everything)
    assert out_err(capsys)[0] == json.dumps(whole, indent=2, sort_keys=True) + "\n"
    assert "brief" not in stub.requests[0]["query"]
    # -a -n -s: one header, every job with its hosts and comment.
    assert qstat.main(["-x", "-a", "-n", "-s"]) == 0
    assert (
        out_err(capsys)[0]
        == "\n".join(jobtable.alt_table(everything, "hpcline", NOW, nodes=True, comments=True))
        + "\n"
    )
    # -T sorts across the pages.
    assert qstat.main(["-x", "-T"]) == 0
    assert (
        out_err(capsys)[0]
        == "\n".join(jobtable.alt_table(everything, "hpcline", NOW, est=True)) + "\n"
    )
    assert qstat.main(["-x", "-f"]) == 0
    assert out_err(capsys)[0] == "\n".join(jobtable.full_jobs(everything)) + "\n"
    # Several operands: each job once, where it first came.
    stub.on("GET", "/jobs/12", J12)
    assert qstat.main(["-x", "workq", "12"]) == 0
    assert out_err(capsys)[0].splitlines()[2:] == [jobtable.default_row(j) for j in everything]


def test_qstat_json_of_nothing(stub, capsys):
    stub.on("GET", "/jobs", paged([]))
    assert qstat.main(["-F", "json"]) == 0
    assert out_err(capsys)[0] == json.dumps(job_list(), indent=2, sort_keys=True) + "\n"


def test_qstat_queues_and_server(stub, capsys):
    stub.on("GET", "/queues", QUEUES)
    stub.on("GET", "/server", SERVER)
    assert qstat.main(["-Q"]) == 0
    assert out_err(capsys)[0].splitlines()[2] == (
        "workq" + " " * 16 + "0" + " " * 5 + "2 yes yes" + " " * 5 + "1" + " " * 5 + "1"
        + (" " * 5 + "0") * 4 + " Exe*  yes any"
    )  # fmt: skip
    assert qstat.main(["-Q", "-F", "json"]) == 0
    assert json.loads(out_err(capsys)[0]) == QUEUES
    assert qstat.main(["-Q", "nosuch"]) == 1
    assert out_err(capsys) == ("", "qstat: Unknown queue nosuch\n")
    assert qstat.main(["-B"]) == 0
    assert out_err(capsys)[0].splitlines()[2].startswith("hpcline" + " " * 14 + "0")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-a", "-i"], "qstat: conflicting options: use only one of -a, -i, -r, -H\n"),
        (["-Q", "-a"], "qstat: conflicting options: -Q and -B take only -f and -F\n"),
        (["-f", "-T"], "qstat: conflicting options: -f and the alternate format\n"),
        (["-F", "dsv"], "qstat: -F dsv: unknown format; batchd knows -F json\n"),
        (["-z"], "qstat: unrecognized arguments: -z (see qstat --help)\n"),
    ],
)
def test_qstat_usage_errors(stub, capsys, argv, message):
    assert qstat.main(argv) == 2
    assert out_err(capsys) == ("", message)
    assert stub.requests == []


# -- qdel, qhold, qrls, qalter ---------------------------------------------------------------------------


def test_qdel_goes_on_past_failures(stub, capsys):
    stub.on("DELETE", "/jobs/12", J12)
    stub.on("DELETE", "/jobs/13.hpcline", {"error": "not_found", "message": "no such job"}, 404)
    stub.on("DELETE", "/jobs/14", {"error": "forbidden", "message": "not your job"}, 403)
    stub.on("DELETE", "/jobs/15", {"error": "conflict", "message": "job 15.hpcline ended"}, 409)
    assert qdel.main(["12", "13.hpcline", "14", "15"]) == 1
    assert out_err(capsys) == (
        "",
        "qdel: Unknown Job Id 13.hpcline\nqdel: not your job 14\nqdel: job 15.hpcline ended\n",
    )
    assert stub.calls() == [
        ("DELETE", "/jobs/12"),
        ("DELETE", "/jobs/13.hpcline"),
        ("DELETE", "/jobs/14"),
        ("DELETE", "/jobs/15"),
    ]
    stub.requests.clear()
    assert qdel.main(["12"]) == 0
    assert out_err(capsys) == ("", "")
    assert qdel.main(["99.hpcline"]) == 153


def test_qdel_bad_id_sends_nothing(stub, capsys):
    assert qdel.main(["12", "abc"]) == 2
    assert out_err(capsys) == ("", "qdel: illegally formed job identifier: abc\n")
    assert qdel.main([]) == 2
    assert stub.requests == []


def test_qhold_and_qrls(stub, capsys):
    stub.on("POST", "/jobs/12/hold", job(state="H", hold_types="uo"))
    stub.on("POST", "/jobs/12/release", J12)
    assert qhold.main(["-h", "ou", "12"]) == 0
    assert qrls.main(["12"]) == 0
    assert out_err(capsys) == ("", "")
    assert [(r["path"], r["body"]) for r in stub.requests] == [
        ("/jobs/12/hold", {"types": "uo"}),
        ("/jobs/12/release", {"types": "u"}),
    ]


def test_qhold_refusals(stub, capsys):
    stub.on(
        "POST", "/jobs/12/hold", {"error": "forbidden", "message": "s holds need a manager"}, 403
    )
    assert qhold.main(["-h", "s", "12"]) == 1
    assert out_err(capsys) == ("", "qhold: s holds need a manager 12\n")
    stub.requests.clear()
    assert qrls.main(["-h", "x", "12"]) == 2
    assert out_err(capsys) == ("", "qrls: -h x: hold types are u, o and s (e.g. -h u or -h uos)\n")
    assert stub.requests == []


def test_qalter(stub, capsys):
    stub.on("PATCH", "/jobs/13", J13)
    stub.on("PATCH", "/jobs/12", {"error": "bad_request", "message": "job is running"}, 400)
    assert qalter.main(["-l", "walltime=2:00:00,nodes=3", "-p", "5", "-N", "new", "13", "12"]) == 1
    assert out_err(capsys) == ("", "qalter: job is running 12\n")
    body = {"name": "new", "walltime": 7200, "priority": 5, "nodes": 3}
    assert [(r["method"], r["path"], r["body"]) for r in stub.requests] == [
        ("PATCH", "/jobs/13", body),
        ("PATCH", "/jobs/12", body),
    ]


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["13"],
            "qalter: nothing to change: give -l, -p, -N, -q, -W utility= or -W speedup=\n",
        ),
        (
            ["-l", "nodes=0", "13"],
            "qalter: -l nodes=0: the number of nodes must be a positive integer\n",
        ),
        (
            ["-p", "-2000", "13"],
            "qalter: -p -2000: priority must be an integer between -1024 and +1023\n",
        ),
        (["-q", "x", "1x"], "qalter: illegally formed job identifier: 1x\n"),
    ],
)
def test_qalter_bad_input(stub, capsys, argv, message):
    assert qalter.main(argv) == 2
    assert out_err(capsys) == ("", message)
    assert stub.requests == []


# -- qnodes ------------------------------------------------------------------------------------------------


def test_qnodes_all(stub, capsys):
    stub.on("GET", "/nodes", NODES)
    assert qnodes.main(["-a"]) == 0
    out, err = out_err(capsys)
    assert err == ""
    assert out.split("\n\n")[0].splitlines()[:6] == [
        "node001",
        "     Mom = node001",
        "     ntype = PBS",
        "     state = job-exclusive",
        "     pcpus = 1",
        "     jobs = 12.hpcline/0",
    ]
    assert "\n     comment = maint\n" in out
    assert out.endswith("sharing = default_excl\n\n")


def test_qnodes_named_marked_json(stub, capsys):
    stub.on("GET", "/nodes", NODES)
    assert qnodes.main(["node002", "nope"]) == 1
    out, err = out_err(capsys)
    assert out.startswith("node002\n") and "node001" not in out
    assert err == "qnodes: Unknown node nope\n"
    assert qnodes.main(["-l"]) == 0
    assert out_err(capsys)[0] == "node002" + " " * 14 + "offline maint\n"
    assert qnodes.main(["-F", "json"]) == 0
    assert json.loads(out_err(capsys)[0]) == NODES
    assert qnodes.main(["-aSj"]) == 0
    assert out_err(capsys)[0].splitlines()[3].endswith(" 0/1     0/0     0/0 12")


def test_qnodes_marking(stub, capsys):
    for name in ("node001", "node002"):
        stub.on("PATCH", f"/nodes/{name}", NODE2)
    stub.on("PATCH", "/nodes/node009", {"error": "not_found", "message": "no node"}, 404)
    assert qnodes.main(["-o", "node001", "node002", "-C", "maintenance"]) == 0
    assert qnodes.main(["-r", "node001"]) == 0
    assert qnodes.main(["--down", "node002"]) == 0
    assert out_err(capsys) == ("", "")
    assert qnodes.main(["-o", "node009"]) == 1
    assert out_err(capsys) == ("", "qnodes: Error marking node node009 - Unknown node\n")
    assert [(r["path"], r["body"]) for r in stub.requests] == [
        ("/nodes/node001", {"state": "offline", "comment": "maintenance"}),
        ("/nodes/node002", {"state": "offline", "comment": "maintenance"}),
        ("/nodes/node001", {"state": "online"}),
        ("/nodes/node002", {"state": "down"}),
        ("/nodes/node009", {"state": "offline"}),
    ]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-o"], "qnodes: mark nodes offline: name at least one node\n"),
        (["-o", "-r", "n1"], "qnodes: conflicting options: use one of -a, -l, -o, -r, --down\n"),
        (["-C", "x", "n1"], "qnodes: -C goes with -o, -r or --down\n"),
        (["-l", "n1"], "qnodes: -l lists all marked nodes; it takes no node names\n"),
    ],
)
def test_qnodes_usage(stub, capsys, argv, message):
    assert qnodes.main(argv) == 2
    assert out_err(capsys) == ("", message)
    assert stub.requests == []


# -- qmgr ----------------------------------------------------------------------------------------------------


def test_qmgr_list_and_print(stub, capsys):
    stub.on("GET", "/server", SERVER)
    stub.on("GET", "/scheduler", SCHED)
    stub.on("GET", "/queues", QUEUES)
    stub.on("GET", "/queues/workq", QUEUE)
    stub.on("GET", "/nodes/node001", NODE1)
    assert qmgr.main(["-c", "list server"]) == 0
    assert out_err(capsys)[0].splitlines()[:3] == [
        "Server hpcline",
        "    server_state = Active",
        "    scheduling = True",
    ]
    assert qmgr.main(["-c", "l sched"]) == 0
    assert out_err(capsys)[0] == (
        "Sched hpcline\n"
        "    scheduler_policy = dynp\n"
        "    dynp_decider = advanced\n"
        "    dynp_quality = artww\n"
        "    available_policies = fcfs-easy, dynp\n"
        "    policy_switches = 0\n"
        "\n"
    )
    assert qmgr.main(["-c", "list queue workq"]) == 0
    assert out_err(capsys)[0].startswith("Queue workq\n    queue_type = Execution\n")
    assert qmgr.main(["-c", "list node node001"]) == 0
    assert out_err(capsys)[0].startswith("Node node001\n    Mom = node001\n")
    assert qmgr.main(["-c", "p s"]) == 0
    out = out_err(capsys)[0]
    assert out.startswith("#\n# Create queues and set their attributes.\n#\n")
    assert out.endswith(
        "set server scheduler_policy = dynp\nset server node_fail_requeue = True\n"
        "set server job_history_duration = 336:00:00\n"
    )


def test_qmgr_json(stub, capsys):
    stub.on("GET", "/scheduler", SCHED)
    stub.on("GET", "/nodes", NODES)
    assert qmgr.main(["-F", "json", "-c", "list sched"]) == 0
    assert json.loads(out_err(capsys)[0]) == SCHED
    assert qmgr.main(["--json", "-c", "list node"]) == 0
    assert json.loads(out_err(capsys)[0]) == NODES


def test_qmgr_set(stub, capsys):
    stub.on("GET", "/scheduler", SCHED)
    stub.on("PATCH", "/scheduler", SCHED)
    stub.on("PATCH", "/server", SERVER)
    stub.on("PATCH", "/nodes/node001", NODE1)
    commands = [
        "set server scheduler_policy = fcfs-easy",
        "set server job_history_duration = 72:00:00",
        "set server query_other_jobs = True",
        "set server query_other_jobs = f",
        "set sched dynp_decider = simple, dynp_quality = ms",
        "set sched scheduler_policy = dynp, decider = simple",
        "s node node001 state = offline, comment = 'bad fan'",
    ]
    for command in commands:
        assert qmgr.main(["-c", command]) == 0
    assert out_err(capsys) == ("", "")
    sent = [(r["method"], r["path"], r["body"]) for r in stub.requests]
    assert sent == [
        ("PATCH", "/scheduler", {"policy": "fcfs-easy"}),
        ("PATCH", "/server", {"job_history_duration": "72:00:00"}),
        ("PATCH", "/server", {"query_other_jobs": True}),
        ("PATCH", "/server", {"query_other_jobs": False}),
        ("GET", "/scheduler", None),
        ("PATCH", "/scheduler", {"params": {"decider": "simple", "quality": "ms"}}),
        ("GET", "/scheduler", None),
        ("PATCH", "/scheduler", {"policy": "dynp", "params": {"decider": "simple"}}),
        ("PATCH", "/nodes/node001", {"state": "offline", "comment": "bad fan"}),
    ]


def test_qmgr_refuses_a_server_boolean_it_cannot_read(stub, capsys):
    assert qmgr.main(["-c", "set server query_other_jobs = maybe"]) == 2
    assert "query_other_jobs: expected True or False, got 'maybe'" in out_err(capsys)[1]
    assert stub.requests == []


def test_qmgr_commands_from_stdin(stub, capsys, monkeypatch):
    stub.on("PATCH", "/scheduler", SCHED)
    stub.on("GET", "/server", SERVER)
    text = "# comment\n\nset server scheduler_policy = dynp\nfrobnicate\nlist server\nquit\nlist server\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert qmgr.main([]) == 2
    out, err = out_err(capsys)
    assert err == (
        "qmgr: unknown command 'frobnicate'; batchd's qmgr knows create, delete, set, list "
        "and print\n"
    )
    assert out.count("Server hpcline\n") == 1
    assert stub.calls() == [("PATCH", "/scheduler"), ("GET", "/server")]


@pytest.mark.parametrize(
    "command,code,message",
    [
        ("set server default_queue = night", 2, "qmgr: set server default_queue: batchd sets only"),
        ("set queue workq", 2, "qmgr: set queue: give ATTR = VALUE"),
        ("create queue", 2, "qmgr: create queue: name the queue"),
        ("create node n9", 2, "qmgr: create node: not supported by batchd (it creates and"),
        ("delete sched", 2, "qmgr: delete sched: not supported by batchd"),
        ("set node node001 state = busy", 2, "qmgr: state = busy: batchd nodes can be"),
        (
            "set server scheduler_policy += x",
            2,
            "qmgr: scheduler_policy +=: batchd's qmgr supports",
        ),
        ("list widget", 2, "qmgr: unknown object 'widget'"),
    ],
)
def test_qmgr_refusals_send_nothing(stub, capsys, command, code, message):
    assert qmgr.main(["-c", command]) == code
    out, err = out_err(capsys)
    assert out == "" and err.startswith(message) and err.count("\n") == 1
    assert stub.requests == []


def test_qmgr_api_refusal(stub, capsys):
    stub.on(
        "PATCH",
        "/scheduler",
        {"error": "forbidden", "message": "only managers set the policy"},
        403,
    )
    assert qmgr.main(["-c", "set server scheduler_policy = sjf-cons"]) == 1
    assert out_err(capsys) == ("", "qmgr: only managers set the policy\n")
    assert qmgr.main(["-c", "list queue nosuch"]) == 1
    assert out_err(capsys) == ("", "qmgr: Unknown queue nosuch\n")


# -- transport: where, who, and what goes wrong -------------------------------------------------------


def test_daemon_not_running(monkeypatch, capsys):
    monkeypatch.delenv("BATCHD_URL", raising=False)
    monkeypatch.setenv("BATCHD_SOCKET", "/nonexistent/batchd.sock")
    for main, prog in [(qstat.main, "qstat"), (qnodes.main, "qnodes"), (qdel.main, "qdel")]:
        assert main(["12"] if prog == "qdel" else []) == 2
        assert out_err(capsys) == (
            "",
            f"{prog}: cannot connect to batchd at /nonexistent/batchd.sock: no such socket "
            "(is the daemon running? set BATCHD_SOCKET or BATCHD_URL)\n",
        )


def test_connection_refused(monkeypatch, capsys):
    tmp = tempfile.mkdtemp(prefix="bq")
    path = os.path.join(tmp, "dead.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)  # bound, never listening: a daemon that died
    try:
        monkeypatch.delenv("BATCHD_URL", raising=False)
        monkeypatch.setenv("BATCHD_SOCKET", path)
        assert qstat.main([]) == 2
        assert out_err(capsys) == (
            "",
            f"qstat: cannot connect to batchd at {path}: connection refused "
            "(is the daemon running? set BATCHD_SOCKET or BATCHD_URL)\n",
        )
    finally:
        sock.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def tcp_stub(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.stub = Stub()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    monkeypatch.setenv("BATCHD_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("BATCHD_SOCKET", "/nonexistent/batchd.sock")  # the URL wins
    yield server.stub  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()
    thread.join()


def test_url_and_token(tcp_stub, monkeypatch, capsys):
    tcp_stub.on("GET", "/jobs", job_list(J12))
    monkeypatch.setenv("BATCHD_TOKEN", "s3cret")
    assert qstat.main([]) == 0
    assert tcp_stub.requests[0]["headers"]["authorization"] == "Bearer s3cret"
    monkeypatch.delenv("BATCHD_TOKEN")
    assert qstat.main([]) == 0
    assert "authorization" not in tcp_stub.requests[1]["headers"]
    tcp_stub.on("GET", "/jobs", {"error": "unauthorized", "message": "bad token"}, 401)
    assert qstat.main([]) == 1
    assert out_err(capsys)[1] == "qstat: bad token\n"


def test_bad_answers_are_one_line(stub, capsys, monkeypatch):
    stub.on("GET", "/jobs", b"<html>oops</html>")
    assert qstat.main([]) == 2
    err = out_err(capsys)[1]
    assert err.startswith("qstat: bad answer from batchd at ") and err.count("\n") == 1
    stub.on("GET", "/jobs", b"Internal Server Error", status=500)
    assert qstat.main([]) == 1
    assert out_err(capsys)[1] == (
        "qstat: batchd answered HTTP 500 Internal Server Error: Internal Server Error\n"
    )
    stub.on("GET", "/jobs", {"server": "hpcline", "now": NOW})  # no "jobs": a client bug
    assert qstat.main([]) == 1
    assert out_err(capsys)[1] == "qstat: internal error: KeyError: 'jobs'\n"


def test_default_socket(monkeypatch, tmp_path):
    import batchclient.transport

    system = tmp_path / "batchd.sock"  # stands for /run/batchd/batchd.sock
    monkeypatch.setattr(batchclient.transport, "SYSTEM_SOCKET", str(system))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert default_socket() == "/run/user/1000/batchd/batchd.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    # What the README's export line gives: ${XDG_RUNTIME_DIR:-/tmp/batchd-$(id -u)}/batchd/batchd.sock
    assert default_socket() == "/tmp/batchd-1000/batchd/batchd.sock"
    system.touch()  # a system daemon runs: every user's commands find it
    assert default_socket() == str(system)


def test_endpoint_from_env():
    ep = Endpoint.from_env({"BATCHD_URL": "http://h:1", "BATCHD_TOKEN": "t", "BATCHD_SOCKET": "/s"})
    assert (ep.url, ep.token, ep.socket_path) == ("http://h:1", "t", None)
    ep = Endpoint.from_env({"BATCHD_SOCKET": "/s", "BATCHD_TOKEN": "t"})
    assert (ep.url, ep.token, ep.socket_path, ep.where) == (None, None, "/s", "/s")
    assert Client(Endpoint(url="http://h:1")).endpoint.where == "http://h:1"


def test_commands_do_not_import_the_daemon():
    code = (
        "import sys, batchclient.qsub, batchclient.qstat, batchclient.qdel, batchclient.qhold, "
        "batchclient.qrls, batchclient.qalter, batchclient.qnodes, batchclient.qmgr; "
        "print(sorted(m for m in ('batchd', 'aiohttp', 'numpy', 'pydantic') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


def _raw_daemon(path: str, answers: int):
    """A daemon that answers the first request of a connection, then drops it at the second
    one without answering (as an idle keep-alive timeout does); ``answers`` connections."""
    body = json.dumps(SERVER).encode()
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen()
    seen: list[bytes] = []

    def read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        while len(rest) < length:
            rest += conn.recv(4096)
        seen.append(head.split(b"\r\n")[0])

    def serve() -> None:
        for _ in range(answers):
            conn, _ = srv.accept()
            read_request(conn)
            conn.sendall(answer)
            read_request(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return srv, thread, seen


def test_a_dropped_keep_alive_connection_is_retried_once():
    tmp = tempfile.mkdtemp(prefix="bq")
    path = os.path.join(tmp, "b.sock")
    srv, thread, seen = _raw_daemon(path, answers=2)
    try:
        client = Client(Endpoint(socket_path=path, timeout=5))
        assert client.get("/server") == SERVER
        assert client.patch("/scheduler", {"policy": "dynp"}) == SERVER  # dropped, then retried
        client.close()
        thread.join(5)
        assert seen == [
            b"GET /server HTTP/1.1",
            b"PATCH /scheduler HTTP/1.1",  # on the dropped connection
            b"PATCH /scheduler HTTP/1.1",  # the retry, on a new one
        ]
    finally:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_submission_is_never_sent_twice(monkeypatch, capsys):
    tmp = tempfile.mkdtemp(prefix="bq")
    path = os.path.join(tmp, "b.sock")
    srv, thread, seen = _raw_daemon(path, answers=1)
    try:
        client = Client(Endpoint(socket_path=path, timeout=5))
        assert client.get("/server") == SERVER
        with pytest.raises(Exception, match="lost connection to batchd at"):
            client.post("/jobs", {"name": "x"})
        assert seen == [b"GET /server HTTP/1.1", b"POST /jobs HTTP/1.1"]
    finally:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_help_is_exit_0(capsys):
    assert qstat.main(["--help"]) == 0
    out, err = out_err(capsys)
    assert (
        out.startswith("usage: \n  qstat [-f] [-w] [-x] [-t] [-J] [-F json | --json]") and err == ""
    )
    assert qsub.main(["--help"]) == 0
    assert "BATCHD_RUNTIME=SECONDS" in out_err(capsys)[0]


def test_qsub_and_qalter_send_a_utility_function(stub, capsys, monkeypatch):
    stub.on("POST", "/jobs", job(id="45.hpcline"), status=201)
    monkeypatch.setattr(sys, "stdin", io.StringIO("echo hi\n"))
    assert qsub.main(["-W", "utility=0:1000,3600:800.5,2h:0", "-W", "depend=afterok:12"]) == 0
    body = stub.requests[0]["body"]
    assert body["utility"] == [[0, 1000], [3600, 800.5], [7200, 0]]
    assert body["depend"] == "afterok:12"
    stub.on("PATCH", "/jobs/13", J13)
    assert qalter.main(["-W", "utility=0:1,10:00:0", "13"]) == 0
    assert stub.requests[-1]["body"] == {"utility": [[0, 1], [600, 0]]}
    assert qalter.main(["-W", "utility=none", "13"]) == 0
    assert stub.requests[-1]["body"] == {"utility": None}
    assert qalter.main(["-W", "depend=afterok:12", "13"]) == 2
    assert "batchd supports only -W utility=..." in out_err(capsys)[1]


def test_qalter_sends_a_range_and_a_model(stub, capsys):
    stub.on("PATCH", "/jobs/13", J13)
    assert qalter.main(["-l", "nodes=4-16", "-W", "speedup=downey:16:0.5", "13"]) == 0
    assert stub.requests[-1]["body"] == {"nodes": 4, "nodes_max": 16, "speedup": "downey:16:0.5"}
    assert qalter.main(["-l", "nodes=4", "13"]) == 0
    assert stub.requests[-1]["body"] == {"nodes": 4}
    assert qalter.main(["-l", "nodes=9-3", "13"]) == 2
    assert "the maximum 3 is below the minimum 9" in out_err(capsys)[1]


def test_qstat_full_shows_a_moldable_jobs_range_model_and_widths():
    mold = {"nodes_min": 8, "nodes_max": 64, "speedup": "downey:64:1.5"}
    waiting = jobtable.full_jobs([dict(J13, **mold, planned_nodes=32)])
    assert "    Resource_List.nodes = 8-64" in waiting
    assert "    Resource_List.speedup = downey:64:1.5" in waiting
    assert "    planned_nodect = 32" in waiting and "chosen_nodect" not in "".join(waiting)
    running = jobtable.full_jobs([dict(J13, **mold, nodes=40, stime=NOW, planned_nodes=None)])
    assert "    chosen_nodect = 40" in running and "    Resource_List.nodect = 40" in running
    rigid = "".join(jobtable.full_jobs([J13]))
    assert "Resource_List.nodes =" not in rigid and "planned_nodect" not in rigid


def test_qstat_full_shows_the_utility_function_and_what_it_earns_now():
    lines = jobtable.full_jobs([dict(J13, utility=[[0, 10], [90.5, 2.5]], utility_now=6.666666)])
    assert "    utility = 0:10,90.5:2.5" in lines
    assert "    utility.now = 6.67" in lines
