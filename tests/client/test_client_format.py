"""batchclient's layouts against hand-written text (widths from OpenPBS's printf formats)."""

from __future__ import annotations

import calendar
import time

import pytest

from batchclient import jobtable, nodes, qmgr_format
from batchclient.timefmt import ctime

pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def utc_epoch(y, mo, d, h=0, mi=0, s=0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


NOW = utc_epoch(2026, 11, 21, 10, 0, 0)  # Sat Nov 21 10:00:00 2026


def job(**kw):
    base = {
        "id": "12.hpcline",
        "seq": 12,
        "name": "STDIN",
        "owner": "alice",
        "queue": "workq",
        "state": "R",
        "nodes": 4,
        "walltime": 3600,
        "runtime": 600,
        "priority": 0,
        "hold_types": "",
        "depend": None,
        "ctime": NOW - 1000,
        "qtime": NOW - 1000,
        "etime": NOW - 1000,
        "exec_time": None,
        "stime": NOW - 754,
        "end_time": None,
        "est_start": None,
        "elapsed": 754,
        "exec_host": ["node001", "node002", "node003", "node004"],
        "exit_status": None,
        "outcome": None,
        "comment": None,
        "started_by": "fcfs-easy",
        "variables": {},
    }
    base.update(kw)
    return base


RUNNING = job()
QUEUED = job(
    id="13.hpcline",
    seq=13,
    name="a_very_long_job_name_x",
    owner="bob",
    state="Q",
    nodes=96,
    walltime=86400,
    stime=None,
    elapsed=None,
    exec_host=[],
    est_start=utc_epoch(2026, 11, 21, 14, 30),
    comment="Not Running: Insufficient amount of nodes",
    started_by=None,
)
HELD = job(
    id="14.hpcline",
    seq=14,
    name="held",
    owner="averyveryverylongusername",
    queue="night_queue_long_name",
    state="H",
    nodes=1,
    walltime=600,
    hold_types="u",
    stime=None,
    elapsed=None,
    exec_host=[],
)


def test_fit():
    assert jobtable.fit("abc", 3) == "abc"
    assert jobtable.fit("abcd", 3) == "ab*"
    assert jobtable.short_id("12.hpc.example.org") == "12.hpc"


# -- qstat ----------------------------------------------------------------------------------


def test_default_table():
    assert jobtable.default_table([RUNNING, QUEUED, HELD]) == [
        "Job id            Name             User              Time Use S Queue",
        "----------------  ---------------- ----------------  -------- - -----",
        "12.hpcline" + " " * 8 + "STDIN" + " " * 12 + "alice" + " " * 13 + "00:12:34 R workq" + " " * 11,
        "13.hpcline" + " " * 8 + "a_very_long_job* bob" + " " * 22 + "0 Q workq" + " " * 11,
        "14.hpcline" + " " * 8 + "held" + " " * 13 + "averyveryverylo*" + " " * 9 + "0 H night_queue_lon*",
    ]  # fmt: skip


def test_default_table_finished_job_and_nothing():
    done = job(state="F", elapsed=3599, end_time=NOW - 10)
    assert jobtable.default_row(done).split()[3] == "00:59:59"
    assert jobtable.default_table([]) == []


ALT_HEAD = [
    "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
    "--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
]
ROW_R = (
    "12.hpcline" + " " * 6 + "alice" + " " * 4 + "workq" + " " * 4 + "STDIN" + " " * 9 + "--"
    + " " * 4 + "4" + " " * 3 + "4" + " " * 4 + "--" + " " * 2 + "01:00 R "
)  # fmt: skip
ROW_Q = (
    "13.hpcline" + " " * 6 + "bob" + " " * 6 + "workq" + " " * 4 + "a_very_lo*" + " " * 4 + "--"
    + " " * 3 + "96" + " " * 2 + "96" + " " * 4 + "--" + " " * 2 + "24:00 Q "
)  # fmt: skip
ROW_H = (
    "14.hpcline" + " " * 6 + "averyve* night_q* held" + " " * 10 + "--" + " " * 4 + "1"
    + " " * 3 + "1" + " " * 4 + "--" + " " * 2 + "00:10 H "
)  # fmt: skip


def test_alt_table():
    assert jobtable.alt_table([RUNNING, QUEUED, HELD], "hpcline", NOW) == [
        "",
        "hpcline: ",
        " " * 60 + "Req'd  Req'd   Elap",
        *ALT_HEAD,
        ROW_R + "00:12",
        ROW_Q + "  -- ",
        ROW_H + "  -- ",
    ]


def test_alt_row_shows_the_requested_chunks_cpus_and_memory():
    """OpenPBS's qstat -a: NDS is Resource_List.nodect, TSK .ncpus, Memory .mem."""
    chunks = dict(RUNNING, nodes=2, resource_list={"nodect": "3", "ncpus": "6", "mem": "4gb"})
    assert jobtable.alt_row(chunks, NOW).startswith(ROW_R.split("--")[0] + "--    3   6    4gb ")
    none = dict(RUNNING, resource_list={"nodect": "1", "ncpus": "0"})
    assert jobtable.alt_row(none, NOW).startswith(ROW_R.split("--")[0] + "--    1  --    -- ")


def test_alt_table_est_start_sorted():
    lines = jobtable.alt_table([HELD, QUEUED, RUNNING], "hpcline", NOW, est=True)
    assert lines == [
        "",
        "hpcline: ",
        " " * 75 + "Est",
        " " * 60 + "Req'd  Req'd   Start",
        *ALT_HEAD,
        ROW_R + "09:47",
        ROW_Q + "14:30",
        ROW_H + "   --",
    ]


def test_alt_table_nodes_and_comments():
    lines = jobtable.alt_table([RUNNING, QUEUED], "hpcline", NOW, nodes=True, comments=True)
    assert lines[5:] == [
        ROW_R + "00:12",
        "   node001/0+node002/0+node003/0+node004/0",
        ROW_Q + "  -- ",
        "   Not Running: Insufficient amount of nodes",
    ]


def test_exec_host_lines_wrap_before_plus():
    hosts = [f"node{i:03d}/0" for i in range(1, 11)]
    assert jobtable.exec_host_lines(hosts) == [
        "   node001/0+node002/0+node003/0+node004/0+node005/0+node006/0+node007/0",
        "   +node008/0+node009/0+node010/0",
    ]


def test_long_comment_is_cut():
    assert jobtable.comment_line("x" * 80) == ["   " + "x" * 71 + "..."]
    assert jobtable.comment_line("x" * 74) == ["   " + "x" * 74]


def test_full_running_job():
    j = job(comment="Job run at Sat Nov 21 09:47", variables={"BATCHD_RUNTIME": "600", "A": "1"})
    assert jobtable.full_jobs([j]) == [
        "Job Id: 12.hpcline",
        "    Job_Name = STDIN",
        "    Job_Owner = alice@hpcline",
        "    job_state = R",
        "    queue = workq",
        "    server = hpcline",
        "    Resource_List.ncpus = 4",
        "    Resource_List.nodect = 4",
        "    Resource_List.select = 4",
        "    Resource_List.walltime = 01:00:00",
        "    resources_used.walltime = 00:12:34",
        "    exec_host = node001/0+node002/0+node003/0+node004/0",
        "    Priority = 0",
        "    Hold_Types = n",
        "    Rerunable = True",
        "    ctime = Sat Nov 21 09:43:20 2026",
        "    qtime = Sat Nov 21 09:43:20 2026",
        "    etime = Sat Nov 21 09:43:20 2026",
        "    stime = Sat Nov 21 09:47:26 2026",
        "    comment = Job run at Sat Nov 21 09:47",
        "    Variable_List = BATCHD_RUNTIME=600,A=1",
        "",
    ]


def test_full_waiting_and_finished_jobs():
    waiting = job(
        id="15.hpcline",
        state="W",
        priority=-5,
        hold_types="uo",
        depend="afterok:12.hpcline",
        etime=None,
        stime=None,
        elapsed=None,
        exec_host=[],
        exec_time=utc_epoch(2026, 11, 22, 9, 30),
        est_start=utc_epoch(2026, 11, 22, 9, 30),
    )
    finished = job(id="11.hpcline", state="F", end_time=NOW - 5, exit_status=0, elapsed=3600)
    text = jobtable.full_jobs([waiting, finished])
    assert text[:22] == [
        "Job Id: 15.hpcline",
        "    Job_Name = STDIN",
        "    Job_Owner = alice@hpcline",
        "    job_state = W",
        "    queue = workq",
        "    server = hpcline",
        "    Resource_List.ncpus = 4",
        "    Resource_List.nodect = 4",
        "    Resource_List.select = 4",
        "    Resource_List.walltime = 01:00:00",
        "    Priority = -5",
        "    Hold_Types = uo",
        "    Rerunable = True",
        "    depend = afterok:12.hpcline",
        "    ctime = Sat Nov 21 09:43:20 2026",
        "    qtime = Sat Nov 21 09:43:20 2026",
        "    Execution_Time = Sun Nov 22 09:30:00 2026",
        "    estimated.start_time = Sun Nov 22 09:30:00 2026",
        "",
        "Job Id: 11.hpcline",
        "    Job_Name = STDIN",
        "    Job_Owner = alice@hpcline",
    ]
    assert text[-5:] == [
        "    etime = Sat Nov 21 09:43:20 2026",
        "    stime = Sat Nov 21 09:47:26 2026",
        "    obittime = Sat Nov 21 09:59:55 2026",
        "    Exit_status = 0",
        "",
    ]


def test_prt_attr_breaks_at_commas_like_qstat():
    value = ",".join(["A=" + "x" * 30, "B=" + "y" * 30, "C=" + "z" * 30])
    assert jobtable.prt_attr("Variable_List", value).split("\n") == [
        "    Variable_List = A=" + "x" * 30 + ",",
        "\tB=" + "y" * 30 + ",C=" + "z" * 30,
    ]
    long = "".join(chr(ord("a") + i % 26) for i in range(100))
    assert jobtable.prt_attr("comment", long).split("\n") == [
        "    comment = " + long[:65],
        "\t" + long[65:],
    ]
    assert jobtable.prt_attr("comment", "") == "    comment = "


# -- qstat -Q / -B ---------------------------------------------------------------------------

WORKQ = {
    "name": "workq",
    "queue_type": "Execution",
    "enabled": True,
    "started": True,
    "default": True,
    "max_nodes": 96,
    "max_walltime": 86400,
    "default_walltime": 3600,
    "total": 7,
    "counts": {"Q": 4, "R": 3},
}
NIGHT = {
    "name": "night",
    "queue_type": "Execution",
    "enabled": False,
    "started": False,
    "default": False,
    "max_nodes": None,
    "max_walltime": None,
    "default_walltime": 600,
    "total": 0,
    "counts": {},
}
# A queue with a window, closed now, from a daemon that sends the window fields.
NP = dict(
    NIGHT,
    name="np_100_10h",
    enabled=True,
    started=True,
    window="Mon-Fri 19:00-06:00, Fri 19:00-Mon 06:00",
    window_open=False,
    window_next_change=NOW + 3600,
)


def test_queue_table():
    assert jobtable.queue_table([WORKQ, NIGHT, NP]) == [
        "Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type Open Window",
        "---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ---- ---- ------",
        # WORKQ and NIGHT come from a daemon without queue windows: always open
        # Max is max_run (0: none), as PBS's column is the queue's max_running
        "workq" + " " * 16 + "0" + " " * 5 + "7 yes yes" + " " * 5 + "4" + " " * 5 + "3"
        + (" " * 5 + "0") * 4 + " Exe*  yes any",
        "night" + " " * 16 + "0" + " " * 5 + "0  no  no" + (" " * 5 + "0") * 6 + " Exe*  yes any",
        # the window is the last column, not cut
        "np_100_10h" + " " * 11 + "0" + " " * 5 + "0 yes yes" + (" " * 5 + "0") * 6
        + " Exe*   no Mon-Fri 19:00-06:00, Fri 19:00-Mon 06:00",
    ]  # fmt: skip


def test_full_queue():
    assert jobtable.full_queues([WORKQ]) == [
        "Queue: workq",
        "    queue_type = Execution",
        "    total_jobs = 7",
        # no comma to break at, past column 78: cut where it falls, as OpenPBS's prt_attr does
        "    state_count = Transit:0 Queued:4 Held:0 Waiting:0 Running:3 Exiting:0 Begun\n\t:0",
        "    resources_max.nodect = 96",
        "    resources_max.walltime = 24:00:00",
        "    resources_default.walltime = 01:00:00",
        "    enabled = True",
        "    started = True",
        "",
    ]


def test_full_queue_with_a_window():
    lines = jobtable.full_queues([NP])
    assert lines[-6:] == [
        "    enabled = True",
        "    started = True",
        "    window = Mon-Fri 19:00-06:00, Fri 19:00-Mon 06:00",
        "    window_open = False",
        f"    window_next_change = {ctime(NOW + 3600)}",
        "",
    ]
    # qmgr's print: the window can be set, whether it is open now cannot.
    assert qmgr_format.print_queue(NP)[-3:] == [
        "set queue np_100_10h enabled = True",
        "set queue np_100_10h started = True",
        'set queue np_100_10h window = "Mon-Fri 19:00-06:00, Fri 19:00-Mon 06:00"',
    ]


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
    "jobs": {"Q": 4, "R": 3, "H": 1, "F": 10},
    "replay": None,
}


def test_server_table():
    assert jobtable.server_table(SERVER) == [
        "Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status",
        "---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------",
        "hpcline" + " " * 14 + "0" + " " * 5 + "8" + " " * 5 + "4" + " " * 5 + "3" + " " * 5 + "1"
        + (" " * 5 + "0") * 3 + " Active    ",
    ]  # fmt: skip


# -- qnodes ------------------------------------------------------------------------------------

BUSY = {
    "name": "node001",
    "index": 0,
    "machine": "hpcline",
    "state": "job-exclusive",
    "jobs": ["12.hpcline"],
    "reservation": None,
    "comment": None,
}
FREE = dict(BUSY, name="node002", index=1, state="free", jobs=[])
OFFLINE = dict(
    BUSY,
    name="node003",
    index=2,
    state="offline",
    jobs=[],
    reservation="R1.hpcline",
    comment="bad fan",
)
DOWN = dict(BUSY, name="node004", index=3, state="down", jobs=[])


def test_node_blocks():
    assert nodes.node_block(BUSY) + nodes.node_block(OFFLINE) == [
        "node001",
        "     Mom = node001",
        "     ntype = PBS",
        "     state = job-exclusive",
        "     pcpus = 1",
        "     jobs = 12.hpcline/0",
        "     resources_available.host = node001",
        "     resources_available.ncpus = 1",
        "     resources_assigned.ncpus = 1",
        "     resv_enable = True",
        "     sharing = default_excl",
        "",
        "node003",
        "     Mom = node003",
        "     ntype = PBS",
        "     state = offline",
        "     pcpus = 1",
        "     resv = R1.hpcline",
        "     resources_available.host = node003",
        "     resources_available.ncpus = 1",
        "     resources_assigned.ncpus = 0",
        "     comment = bad fan",
        "     resv_enable = True",
        "     sharing = default_excl",
        "",
    ]


def test_a_shared_node_lists_each_core_its_jobs_hold():
    shared = dict(
        BUSY,
        state="free",
        jobs=["12.hpcline", "13.hpcline"],
        job_cores=["12.hpcline/0", "13.hpcline/1", "13.hpcline/2"],
        sharing="default_shared",
        resources_available={"host": "node001", "ncpus": "4", "vnode": "node001"},
        resources_assigned={"ncpus": "3"},
    )
    block = nodes.node_block(shared)
    assert "     jobs = 12.hpcline/0, 13.hpcline/1, 13.hpcline/2" in block
    assert "     state = free" in block and "     sharing = default_shared" in block
    assert "     pcpus = 4" in block and "     resources_assigned.ncpus = 3" in block


def test_marked_lines():
    assert [nodes.is_marked(n) for n in (BUSY, FREE, OFFLINE, DOWN)] == [False, False, True, True]
    assert nodes.marked_line(OFFLINE) == "node003" + " " * 14 + "offline bad fan"
    assert nodes.marked_line(DOWN) == "node004" + " " * 14 + "down "


def test_node_summary():
    assert nodes.summary([BUSY]) == [
        "vnode           state           OS       hardware host            queue        mem     "
        "ncpus   nmics   ngpus  comment",
        "--------------- --------------- -------- -------- --------------- ---------- -------- "
        "------- ------- ------- ---------",
        "node001" + " " * 9 + "job-exclusive" + " " * 3 + "--" + " " * 7 + "--" + " " * 7
        + "node001" + " " * 9 + "--" + " " * 14 + "0kb" + " " * 7 + "1" + " " * 7 + "0"
        + " " * 7 + "0 --",
    ]  # fmt: skip


def test_node_job_summary():
    assert nodes.summary([BUSY, FREE], jobs=True, server="hpcline") == [
        "                                                        mem       ncpus   nmics   ngpus",
        "vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs",
        "--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------",
        "node001" + " " * 9 + "job-exclusive" + " " * 8 + "1" + " " * 5 + "1" + " " * 6 + "0"
        + " " * 6 + "0kb/0kb" + " " * 5 + "0/1" + " " * 5 + "0/0" + " " * 5 + "0/0 12",
        "node002" + " " * 9 + "free" + " " * 17 + "0" + " " * 5 + "0" + " " * 6 + "0"
        + " " * 6 + "0kb/0kb" + " " * 5 + "1/1" + " " * 5 + "0/0" + " " * 5 + "0/0 --",
    ]  # fmt: skip


# -- qmgr ---------------------------------------------------------------------------------------

SCHED = {
    "policy": "dynp",
    "params": {"quality": "artww", "decider": "advanced"},
    "policies": [
        {"name": "fcfs-cons", "description": "", "params": ["replan"]},
        {"name": "dynp-basic", "description": "", "params": ["lower", "upper", "threshold"]},
        {"name": "dynp", "description": "", "params": ["decider", "quality"]},
    ],
    "report": {"switches": 2, "cases": {"1": 3, "2": 1}},
    "switches": [{"at": NOW - 60}, {"at": NOW - 30}],
}


def test_qmgr_list_server():
    assert qmgr_format.list_server(SERVER) == [
        "Server hpcline",
        "    server_state = Active",
        "    scheduling = True",
        "    default_queue = workq",
        "    scheduler_policy = dynp",
        "    node_fail_requeue = True",
        "    total_jobs = 8",
        "    state_count = Transit:0 Queued:4 Held:1 Waiting:0 Running:3 Exiting:0 Begun:0",
        "    resources_available.nodect = 96",
        "    machine = hpcline",
        "    clock = accelerated",
        "    speed = 60",
        "    time_now = Sat Nov 21 10:00:00 2026",
        "    started = Fri Nov 20 10:00:00 2026",
        "    pbs_version = batchd 0.1.0",
        "",
    ]


def test_qmgr_list_sched():
    assert qmgr_format.list_sched(SCHED, "hpcline") == [
        "Sched hpcline",
        "    scheduler_policy = dynp",
        "    dynp_decider = advanced",
        "    dynp_quality = artww",
        "    available_policies = fcfs-cons, dynp-basic, dynp",
        "    policy_switches = 2",
        "    report.cases = 1=3, 2=1",
        "    report.switches = 2",
        "",
    ]


def test_qmgr_list_queue_and_node():
    assert qmgr_format.list_queues([NIGHT]) == [
        "Queue night",
        "    queue_type = Execution",
        "    total_jobs = 0",
        "    state_count = Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 Begun:0",
        "    resources_default.walltime = 00:10:00",
        "    enabled = False",
        "    started = False",
        "",
    ]
    assert qmgr_format.list_nodes([FREE])[:4] == [
        "Node node002",
        "    Mom = node002",
        "    ntype = PBS",
        "    state = free",
    ]


def test_qmgr_print_server():
    assert qmgr_format.print_server(SERVER, [WORKQ]) == [
        "#",
        "# Create queues and set their attributes.",
        "#",
        "#",
        "# Create and define queue workq",
        "#",
        "create queue workq",
        "set queue workq queue_type = Execution",
        "set queue workq resources_max.nodect = 96",
        "set queue workq resources_max.walltime = 24:00:00",
        "set queue workq resources_default.walltime = 01:00:00",
        "set queue workq enabled = True",
        "set queue workq started = True",
        "#",
        "# Set server attributes.",
        "#",
        "set server scheduling = True",
        "set server default_queue = workq",
        "set server scheduler_policy = dynp",
        "set server node_fail_requeue = True",
    ]


def test_qmgr_print_sched_quotes_blanks():
    sched = dict(SCHED, params={"decider": "advanced", "reduced_future": "6h, or so"})
    assert qmgr_format.print_sched(sched) == [
        "#",
        "# Set scheduler attributes.",
        "#",
        "set sched scheduler_policy = dynp",
        "set sched dynp_decider = advanced",
        'set sched dynp_reduced_future = "6h, or so"',
    ]


# -- unprintable text and wide characters -------------------------------------------------

NASTY = "a\x1b[2J\x07b\nc\x00d\x7f\x9b\u202ee\ud800"  # escape, bell, newline, NUL, DEL, CSI...
C0_C1 = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}


def everything_nasty():
    """Every text field of every API object the commands print, holding NASTY."""
    j = job(
        id=f"12.{NASTY}", name=NASTY, owner=NASTY, queue=NASTY, state=NASTY, depend=NASTY,
        comment=NASTY, exec_host=[NASTY, "node002"], variables={NASTY: NASTY, "X": NASTY},
    )  # fmt: skip
    q = {
        "name": NASTY, "queue_type": NASTY, "enabled": True, "started": True, "total": 1,
        "counts": {"Q": 1}, "max_nodes": None, "max_walltime": None, "default_walltime": 60,
        "window": NASTY, "window_open": True, "window_next_change": None,
    }  # fmt: skip
    n = {"name": NASTY, "state": NASTY, "jobs": [f"1.{NASTY}"], "reservation": NASTY,
         "comment": NASTY}  # fmt: skip
    s = {
        "name": NASTY, "default_queue": NASTY, "policy": NASTY, "node_fail": "requeue",
        "jobs": {"Q": 1}, "nodes": 8, "machine": NASTY, "clock": NASTY, "speed": 1.0,
        "now": NOW, "started": NOW, "version": NASTY, "replay": {"trace": NASTY},
    }  # fmt: skip
    sched = {"policy": NASTY, "params": {NASTY: NASTY}, "policies": [{"name": NASTY}],
             "switches": [], "report": {NASTY: NASTY}}  # fmt: skip
    return j, q, n, s, sched


def all_layouts() -> dict[str, list[str]]:
    j, q, n, s, sched = everything_nasty()
    return {
        "qstat": jobtable.default_table([j]),
        "qstat -a -n -s": jobtable.alt_table([j], NASTY, NOW, nodes=True, comments=True),
        "qstat -T": jobtable.alt_table([j], NASTY, NOW, est=True),
        "qstat -f": jobtable.full_jobs([j]),
        "qstat -Q": jobtable.queue_table([q]),
        "qstat -Qf": jobtable.full_queues([q]),
        "qstat -B": jobtable.server_table(s),
        "qstat -Bf": jobtable.full_server(s),
        "pbsnodes -a": nodes.node_block(n),
        "pbsnodes -l": [nodes.marked_line(n)],
        "pbsnodes -S": nodes.summary([n]),
        "pbsnodes -Sj": nodes.summary([n], jobs=True, server="srv"),
        "qmgr list": qmgr_format.list_server(s) + qmgr_format.list_sched(sched, NASTY)
        + qmgr_format.list_queues([q]) + qmgr_format.list_nodes([n]),
        "qmgr print": qmgr_format.print_server(s, [q]) + qmgr_format.print_sched(sched),
    }  # fmt: skip


@pytest.mark.parametrize("layout", list(all_layouts()))
def test_no_control_character_reaches_the_terminal(layout: str) -> None:
    """Names with escape sequences, bells, NUL and newlines are printed escaped."""
    lines = all_layouts()[layout]
    for line in lines:
        # qstat -f breaks long values itself with "\n\t"; nothing else breaks a line.
        for part in line.split("\n\t"):
            assert not C0_C1 & set(part) and "\n" not in part, (layout, part)
            assert part.isprintable() or "\t" in part, (layout, part)
    if layout in ("qstat -f", "qstat -Qf", "qstat -Bf", "pbsnodes -a", "qmgr list", "qmgr print"):
        text = "\n".join(lines).replace("\n\t", "")  # uncut: all of it is there, escaped
        assert "\\x1b[2J\\x07b\\nc\\x00d\\x7f\\x9b\\u202ee\\ud800" in text, layout


def test_escaped_rows_keep_their_columns() -> None:
    j = job(name="x\ny", owner="ev\x1bil", queue="q\tq")
    row = jobtable.default_row(j)
    assert row == (
        "12.hpcline" + " " * 8 + "x\\ny" + " " * 13 + "ev\\x1bil" + " " * 10
        + "00:12:34 R q\\tq" + " " * 12
    )  # fmt: skip
    # A newline no longer splits a qstat -x row: one row per job.
    assert len(jobtable.default_table([j, job(name="a\nb\nc")])) == 4


def test_escape_and_widths() -> None:
    from batchclient.text import cell, escape, fit, width

    assert escape("plain é 計算 🙂") == "plain é 計算 🙂"
    assert escape("a\x1b[31mb\x07\n\t\r\x00\x7f\x85\u2028\u200b\U000e0001") == (
        "a\\x1b[31mb\\x07\\n\\t\\r\\x00\\x7f\\x85\\u2028\\u200b\\U000e0001"
    )
    assert escape("C:\\path") == "C:\\path"  # backslashes as they are
    assert escape(escape("a\x1b")) == escape("a\x1b")
    assert width("計算ジョブ") == 10 and width("ｆｕｌｌ") == 8 and width("e\u0301") == 1
    assert width("🙂") == 2 and width("abc") == 3
    assert fit("計算ジョブ", 10) == "計算ジョブ"
    assert fit("計算ジョブ", 9) == "計算ジョ*"
    assert fit("計算ジョブ", 8) == "計算ジ*"  # 6 columns + "*": a wide char is never halved
    assert cell("計算ジョブ", 8) == "計算ジ* " and width(cell("計算ジョブ", 8)) == 8
    assert cell("ab", 5, right=True) == "   ab"


def test_wide_names_keep_the_columns() -> None:
    """Every row is as wide as the header, and the columns after a wide name stay put."""
    wide = job(name="計算ジョブ", owner="ユーザー名前長い", queue="キュー")
    combining = job(name="cafe\u0301", owner="ñandú")
    plain = job()
    from batchclient.text import width

    rows = jobtable.default_table([plain, wide, combining])
    state_col = rows[0].index(" S ") + 1
    for row in rows[2:]:
        cols = [width(row[:i]) for i in range(len(row) + 1)]
        assert width(row) == width(rows[2]), row
        i = cols.index(state_col)
        assert row[i] == "R", row
    assert rows[3].startswith(
        "12.hpcline" + " " * 8 + "計算ジョブ" + " " * 6 + " ユーザー名前長い "
    )
    alt = jobtable.alt_table([plain, wide], "srv", NOW)
    assert width(alt[-1]) == width(alt[-2])
    assert alt[-1].split()[1:4] == ["ユーザ*", "キュー", "計算ジョブ"]
    nodes_rows = nodes.summary([{"name": "节点一二三四五六七八", "state": "free", "jobs": []}])
    assert width(nodes_rows[-1].split(" free")[0]) == 15


def test_json_output_escapes_what_json_leaves_raw(capsys) -> None:
    from batchclient.cli import print_json

    print_json({"name": "a\x1bb\x7f\x9b\u2028\u202e\ud800😀é", "n": 1})
    out = capsys.readouterr().out
    assert out.isascii() or all(ch.isprintable() or ch == "\n" for ch in out)
    assert '"a\\u001bb\\u007f\\u009b\\u2028\\u202e\\ud800😀é"' in out
    import json

    assert json.loads(out)["name"] == "a\x1bb\x7f\x9b\u2028\u202e\ud800😀é"


def test_error_lines_are_escaped(capsys) -> None:
    from batchclient.cli import say

    say("qstat", "Unknown queue q\x1b]0;owned\x07")
    assert capsys.readouterr().err == "qstat: Unknown queue q\\x1b]0;owned\\x07\n"


def test_limits_and_scheduling_as_pbs_shows_them():
    """qstat -Q's Max is the queue's max_run; the server, paused, is Idle (qstat -B, qmgr)."""
    limited = dict(WORKQ, max_run=5, max_user_run=2, max_queued=50, max_user_queued=None)
    row = jobtable.queue_table([limited])[2]
    assert row.startswith("workq" + " " * 16 + "5" + " " * 5 + "7 yes yes")
    listed = qmgr_format.list_queues([limited])
    assert listed[listed.index("    resources_default.walltime = 01:00:00") + 1 :][:4] == [
        "    max_run = 5",
        "    max_user_run = 2",
        "    max_queued = 50",
        "    enabled = True",
    ]
    assert "set queue workq max_user_run = 2" in qmgr_format.print_queue(limited)
    paused = dict(SERVER, scheduling=False, max_run=40, max_user_queued=10)
    assert qmgr_format.list_server(paused)[1:3] == [
        "    server_state = Idle",
        "    scheduling = False",
    ]
    printed = qmgr_format.print_server(paused, [])
    assert printed[-6:] == [
        "set server scheduling = False",
        "set server default_queue = workq",
        "set server scheduler_policy = dynp",
        "set server node_fail_requeue = True",
        "set server max_run = 40",
        "set server max_user_queued = 10",
    ]
    assert jobtable.server_table(paused)[2].startswith("hpcline" + " " * 13 + "40     8")
    assert jobtable.server_table(paused)[2].rstrip().endswith(" Idle")
