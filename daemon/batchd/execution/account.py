"""Who a job runs as: its owner's account on this host, and whether this daemon may run it.

A job runs as its owner: uid, primary gid and supplementary groups from the host's
user database, the home directory it starts in, the login shell it runs under. A
daemon run by root runs each owner's jobs as that owner, root's own only if the
site lists root in ``acl_roots`` (PBS's server attribute); a daemon run by an
ordinary user runs that user's jobs only.
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

DEFAULT_SHELL = "/bin/sh"  # an account without a login shell: as login(1) does


class AccountError(ValueError):
    """A job that cannot run as its owner here; the message says why."""


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str
    shell: str

    @property
    def group(self) -> str:
        """The primary group's name (PBS's egroup), its number if it has none."""
        try:
            return grp.getgrgid(self.gid).gr_name
        except KeyError:
            return str(self.gid)


def account(user: str) -> Account:
    """The account of ``user`` (AccountError if this host has none)."""
    try:
        entry = pwd.getpwnam(user)
    except (KeyError, ValueError):
        raise AccountError(
            f"user {user} has no account on this host (jobs run as their owner: a TCP "
            "token's user must be a local account)"
        ) from None
    try:
        groups = tuple(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except OSError:
        groups = (entry.pw_gid,)
    return Account(
        name=entry.pw_name,
        uid=entry.pw_uid,
        gid=entry.pw_gid,
        groups=groups,
        home=entry.pw_dir,
        shell=entry.pw_shell or DEFAULT_SHELL,
    )


def check_runnable(acct: Account, acl_roots: list[str], daemon_uid: int | None = None) -> None:
    """Refuse a job this daemon may not run as ``acct`` (AccountError naming the rule)."""
    me = os.geteuid() if daemon_uid is None else daemon_uid
    if me != 0 and acct.uid != me:
        try:
            mine = pwd.getpwuid(me).pw_name
        except KeyError:
            mine = f"uid {me}"
        raise AccountError(
            f"this batchd runs as {mine} and runs only {mine}'s jobs; a job of {acct.name} "
            "would need a batchd run by root"
        )
    if acct.uid == 0 and not any(r.partition("@")[0] == acct.name for r in acl_roots):
        raise AccountError(
            f"jobs of {acct.name} (uid 0) are refused: the server's acl_roots does not list "
            f"{acct.name}"
        )
