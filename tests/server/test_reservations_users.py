"""pbs_rsub for every user, as PBS allows, against a root daemon: a user reserves with
``-l select=N:ncpus=C`` and pbs_rstat shows the select as asked; another user may not
submit to its queue nor delete it (pbs_rdel), its owner may."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_daemon import LocalDaemon, daemon_dir, write_site
from users import User, command, need_root

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")


@pytest.fixture
def daemon(test_users: list[User]) -> Iterator[tuple[LocalDaemon, list[User]]]:
    need_root()
    folder = daemon_dir()
    with LocalDaemon(folder, write_site(folder)) as d:
        yield d, test_users
    shutil.rmtree(folder, ignore_errors=True)


def test_a_user_reserves_and_only_the_owner_deletes(daemon) -> None:
    d, (alice, bob) = daemon
    made = command(alice.name, "pbs_rsub", "-D", "00:10:00", "-l", "select=1:ncpus=1",
                   socket=d.socket)  # fmt: skip
    assert (made.returncode, made.stdout, made.stderr) == (0, "R1.ws CONFIRMED\n", "")
    full = command(bob.name, "pbs_rstat", "-f", "R1", socket=d.socket).stdout
    assert f"Reserve_Owner = {alice.name}@ws\n" in full
    assert "Resource_List.select = 1:ncpus=1\n" in full
    into = command(bob.name, "qsub", "-q", "R1", socket=d.socket, stdin="true\n", cwd=Path("/"))
    assert into.returncode != 0 and "Unauthorized Request: queue R1" in into.stderr
    refused = command(bob.name, "pbs_rdel", "R1", socket=d.socket)
    assert refused.returncode != 0
    assert f"may not delete reservation R1.ws, owned by {alice.name}" in refused.stderr
    deleted = command(alice.name, "pbs_rdel", "R1", socket=d.socket)
    assert deleted.returncode == 0, deleted.stderr
