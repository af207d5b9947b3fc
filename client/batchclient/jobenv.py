"""What qsub sends of where it runs: the PBS_O_* variables, ``-V``, ``-o``/``-e`` paths.

As OpenPBS's qsub builds them (``src/cmds/qsub.c``): PBS_O_HOME, PBS_O_LANG,
PBS_O_LOGNAME, PBS_O_PATH, PBS_O_MAIL, PBS_O_SHELL and PBS_O_TZ from the environment
(those that are set), PBS_O_WORKDIR (the current directory), PBS_O_SYSTEM (the
kernel's name) and PBS_O_HOST; ``-V`` adds every environment variable but PBS_O_*
and PBS_JOBCOOKIE. An output path is made absolute in the current directory and
given this host's name (``prepare_path``), unless it names a host already.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from .text import sendable

_FROM_ENV = ("HOME", "LANG", "LOGNAME", "PATH", "MAIL", "SHELL", "TZ")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def origin_variables(
    environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> dict[str, str]:
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in _FROM_ENV:
        value = env.get(name)
        if value is not None and sendable(value):
            out[f"PBS_O_{name}"] = value
    out["PBS_O_WORKDIR"] = cwd if cwd is not None else _cwd(env)
    out["PBS_O_SYSTEM"] = os.uname().sysname
    out["PBS_O_HOST"] = _hostname()
    return out


def _hostname() -> str:
    """This host's name, as gethostname() gives it (without importing socket)."""
    return os.uname().nodename


def _cwd(env: Mapping[str, str]) -> str:
    """The current directory as the user sees it ($PWD when it is this directory)."""
    here = os.getcwd()
    pwd = env.get("PWD")
    if pwd and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, here):
                return pwd
        except OSError:
            pass
    return here


def exported(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``-V``: the environment, but PBS_O_*, PBS_JOBCOOKIE and what cannot be sent (a
    name that is not one, a value with a control character: each named on stderr)."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    skipped: list[str] = []
    for name, value in env.items():
        if name.startswith("PBS_O_") or name == "PBS_JOBCOOKIE":
            continue
        if not _NAME.match(name) or not sendable(value):
            skipped.append(name)
            continue
        out[name] = value
    if skipped:
        shown = ", ".join(repr(n) for n in sorted(skipped)[:5])
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        sys.stderr.write(
            f"qsub: -V: not exported (a name that is not one, or a value with a control "
            f"character): {shown}{more}\n"
        )
    return out


def prepare_path(option: str, given: str, cwd: str | None = None) -> str:
    """``-o``/``-e``: ``HOST:PATH`` with an absolute PATH (relative: in the current
    directory; a trailing / kept, PBS's sign of a directory)."""
    head, sep, tail = given.partition(":")
    host, path = (head, tail) if sep and "/" not in head else (None, given)
    if host is not None and not host:
        raise ValueError(f"{option} {given}: an empty host name")
    if path and not path.startswith("/"):
        path = os.path.join(cwd if cwd is not None else os.getcwd(), path)
    return f"{host or _hostname()}:{path}"
