"""Who a job runs as, and whether this daemon may run it (PBS's acl_roots; a user daemon)."""

from __future__ import annotations

import os
import pwd

import pytest

from batchd.execution.account import DEFAULT_SHELL, Account, AccountError, account, check_runnable


def me() -> pwd.struct_passwd:
    return pwd.getpwuid(os.getuid())


def test_an_account_is_its_owners_entry() -> None:
    entry = me()
    acct = account(entry.pw_name)
    assert (acct.name, acct.uid, acct.gid, acct.home) == (
        entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir,
    )  # fmt: skip
    assert acct.gid in acct.groups and set(acct.groups) == set(
        os.getgrouplist(entry.pw_name, entry.pw_gid)
    )
    assert acct.shell == (entry.pw_shell or DEFAULT_SHELL)


def test_a_user_without_an_account_is_named() -> None:
    with pytest.raises(AccountError, match="user uid123456 has no account on this host"):
        account("uid123456")
    with pytest.raises(AccountError, match="has no account"):
        account("bad\x00name")


def acct(uid: int, name: str = "someone") -> Account:
    return Account(name, uid, uid, (uid,), "/home/x", "/bin/sh")


def test_root_runs_everyones_jobs_but_roots_own_only_with_acl_roots() -> None:
    check_runnable(acct(1000), [], daemon_uid=0)
    with pytest.raises(AccountError, match="acl_roots does not list root"):
        check_runnable(acct(0, "root"), [], daemon_uid=0)
    check_runnable(acct(0, "root"), ["root"], daemon_uid=0)
    check_runnable(acct(0, "root"), ["root@somehost"], daemon_uid=0)
    with pytest.raises(AccountError, match="acl_roots"):
        check_runnable(acct(0, "root"), ["toor"], daemon_uid=0)


def test_a_user_daemon_runs_its_users_jobs_only() -> None:
    check_runnable(acct(1000), [], daemon_uid=1000)
    with pytest.raises(AccountError, match="runs only .*'s jobs; a job of someone would need"):
        check_runnable(acct(1001), [], daemon_uid=1000)
