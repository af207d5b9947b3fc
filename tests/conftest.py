"""Fixtures shared by the tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from api_helpers import Api, serve
from batchd.sched.policies.conservative import ConservativePolicy
from local_daemon import local_daemon  # noqa: F401 (a fixture: a daemon that runs scripts)
from users import test_users  # noqa: F401 (a fixture: the tests' own accounts, as root)


@pytest.fixture(autouse=True)
def compressions_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compression's profile, made from what changed since the plan in force,
    is checked against the one laid out afresh (``ConservativePolicy.check_profile``)."""
    monkeypatch.setattr(ConservativePolicy, "check_compressions", True)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The HTTP API of a fresh 8-node daemon (fcfs-easy) at T0 on a virtual clock."""
    async with serve(tmp_path) as a:
        yield a
