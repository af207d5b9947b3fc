"""The Slurm commands' shared readings and printings, against Slurm's own forms."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from batchclient.slurm import hostlist, ids, states, times


@pytest.mark.parametrize(
    ("names", "text"),
    [
        (["node001", "node002", "node003", "node005"], "node[001-003,005]"),
        (["n1"], "n1"),
        (["login", "node01", "node02"], "login,node[01-02]"),
        (["a9", "a10"], "a[9-10]"),  # no leading zeros: one range whatever the width
        (["a10", "a9", "a9"], "a[9-10]"),  # sorted and made unique, as Slurm's hostlists
        (["n01", "n1"], "n01,n1"),  # padded and unpadded stay apart
        ([], ""),
    ],
)
def test_hostlist_round_trip(names: list[str], text: str) -> None:
    assert hostlist.compress(names) == text
    assert sorted(hostlist.expand(text)) == sorted(set(names))


def test_the_commands_and_the_daemon_write_a_hostlist_alike() -> None:
    """SLURM_JOB_NODELIST is written by the daemon, squeue's NODELIST by the command:
    the same nodes must read the same in both."""
    from batchd.model.hostlist import compress as daemon_compress

    rng = random.Random(7)
    for _ in range(500):
        names = [
            rng.choice(["n", "node", "gpu-", "x"]) + rng.choice(["", "0", "00"]) + str(n)
            for n in rng.choices(range(120), k=rng.randint(0, 12))
        ]
        names += rng.choices(["login", "head"], k=rng.randint(0, 1))
        assert hostlist.compress(names) == daemon_compress(names), names


@pytest.mark.parametrize("bad", ["node[", "node[3-1]", "node[a-b]", "x]"])
def test_a_bad_hostlist_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid hostlist"):
        hostlist.expand(bad)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800),
        ("30:15", 1815),
        ("1:00:00", 3600),
        ("2-0", 172800),
        ("2-3", 183600),
        ("2-3:04", 183840),
        ("2-3:04:05", 183845),
        ("UNLIMITED", None),
        ("infinite", None),
        ("-1", None),
    ],
)
def test_every_slurm_time_limit_form(text: str, seconds: int | None) -> None:
    assert times.parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "1h", "1:2:3:4", "a-1", "1-"])
def test_a_bad_time_limit_is_refused_in_slurms_words(bad: str) -> None:
    with pytest.raises(ValueError, match="Invalid time limit specification"):
        times.parse_duration(bad)


def test_clocks_as_slurm_prints_them() -> None:
    assert [times.short_clock(s) for s in (0, 65, 3600, 90061)] == [
        "0:00",
        "1:05",
        "1:00:00",
        "1-01:01:01",
    ]
    assert [times.clock(s) for s in (0, 65, 3600, 90061, None)] == [
        "00:00:00",
        "00:01:05",
        "01:00:00",
        "1-01:01:01",
        "UNLIMITED",
    ]


def test_times_as_begin_takes_them() -> None:
    now = dt.datetime(2026, 3, 4, 10, 30, 0).timestamp()
    at = times.parse_time
    assert at("now", now) == int(now)
    assert at("now+1hour", now) == int(now) + 3600
    assert at("now+90", now) == int(now) + 90
    assert at("11:00", now) == int(dt.datetime(2026, 3, 4, 11).timestamp())
    assert at("09:00", now) == int(dt.datetime(2026, 3, 5, 9).timestamp())  # past: tomorrow
    assert at("2026-03-06T08:15", now) == int(dt.datetime(2026, 3, 6, 8, 15).timestamp())
    assert at("2026-03-06", now) == int(dt.datetime(2026, 3, 6).timestamp())
    assert at("teatime", now) == int(dt.datetime(2026, 3, 4, 16).timestamp())
    assert at("tomorrow", now) == int(dt.datetime(2026, 3, 5).timestamp())
    assert at("03/07/26", now) == int(dt.datetime(2026, 3, 7).timestamp())
    with pytest.raises(ValueError, match="Invalid time specification"):
        at("next week", now)
    assert times.timestamp(dt.datetime(2026, 3, 4, 1, 2, 3).timestamp()) == "2026-03-04T01:02:03"
    assert times.timestamp(None) == "N/A"


def test_job_ids() -> None:
    sel = ids.parse_ids("12,13_2,14_[1-3,7],15_*")
    assert sel == [
        ids.JobSelector(12),
        ids.JobSelector(13, (2,)),
        ids.JobSelector(14, (1, 2, 3, 7)),
        ids.JobSelector(15),
    ]
    assert sel[2].matches({"seq": 14, "array_index": 7})
    assert not sel[2].matches({"seq": 14, "array_index": 4})
    assert ids.parse_ids("12.batch", allow_steps=True) == [ids.JobSelector(12, None, "batch")]
    for bad in ("12.batch", "x", "12_[3-1]", "12_"):
        with pytest.raises(ValueError, match="Invalid job id"):
            ids.parse_ids(bad)
    assert ids.slurm_id({"seq": 12, "array_index": 3}) == "12_3"
    assert ids.slurm_id({"seq": 12, "array_index": None}) == "12"


@pytest.mark.parametrize(
    ("view", "state", "code"),
    [
        ({"state": "Q"}, "PENDING", "PD"),
        ({"state": "H"}, "PENDING", "PD"),
        ({"state": "R"}, "RUNNING", "R"),
        ({"state": "E"}, "COMPLETING", "CG"),
        ({"state": "F", "outcome": "ok"}, "COMPLETED", "CD"),
        ({"state": "F", "outcome": "failed"}, "FAILED", "F"),
        ({"state": "F", "outcome": "walltime"}, "TIMEOUT", "TO"),
        ({"state": "F", "outcome": "mem"}, "OUT_OF_MEMORY", "OOM"),
        ({"state": "X", "outcome": "cancelled"}, "CANCELLED", "CA"),
        ({"state": "F", "outcome": "node_fail"}, "NODE_FAIL", "NF"),
    ],
)
def test_states(view: dict[str, str], state: str, code: str) -> None:
    assert states.slurm_state(view) == state
    assert states.state_code(view) == code


def test_reasons_and_exit_codes() -> None:
    assert states.reason({"state": "Q", "pending_reason": "resources"}) == "Resources"
    assert states.reason({"state": "H", "pending_reason": None}) == "JobHeldUser"
    assert states.reason({"state": "R"}) == "None"
    assert states.exit_code({"exit_status": 3}) == "3:0"
    assert states.exit_code({"exit_status": 256 + 9}) == "0:9"
    assert states.exit_code({"exit_status": -1}) == "1:0"
    assert states.parse_states("pd,RUNNING,cd") == {"PENDING", "RUNNING", "COMPLETED"}
    with pytest.raises(ValueError, match="Invalid job state specified: bogus"):
        states.parse_states("bogus")
