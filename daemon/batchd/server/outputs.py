"""Where a job's output goes, and which shell runs it, as PBS decides at submission.

``Output_Path`` and ``Error_Path`` are ``HOST:PATH``. Unless given (``qsub -o``,
``-e``), they are ``NAME.oSEQ`` and ``NAME.eSEQ`` in the submission directory
(``PBS_O_WORKDIR``), and a job array's ``NAME.oSEQ.^array_index^``, each subjob's
index put in for the tag (OpenPBS's ``prefix_std_file`` and ``subst_array_index``).
A path given as ``HOST:`` alone gets the default name; a relative one is taken in
the submission directory. A job that runs here writes here: another host is
refused, since batchd copies no file to another host.

``Shell_Path_List`` (``qsub -S``) is ``PATH[@HOST][,PATH[@HOST]...]``: the entry for
this host, else the first without a host (OpenPBS's ``set_shell``).
"""

from __future__ import annotations

import contextlib
import functools
import posixpath
import socket

ARRAY_INDEX_TAG = "^array_index^"
JOIN_VALUES = ("oe", "eo", "n")


def this_host() -> str:
    return socket.gethostname()


@functools.cache
def local_names() -> frozenset[str]:
    """The names a path or shell may give this host by (looked up once: the full name
    may ask a name server, and a shell list is read again at every launch)."""
    host = this_host()
    names = {host, host.split(".")[0], "localhost"}
    with contextlib.suppress(OSError):
        names.add(socket.getfqdn())
    return frozenset(names)


def default_name(name: str, letter: str, seq: int, array: bool) -> str:
    """``NAME.oSEQ`` (``NAME.oSEQ.^array_index^`` for an array), NAME's last part."""
    base = name.rsplit("/", 1)[-1]
    return f"{base}.{letter}{seq}" + (f".{ARRAY_INDEX_TAG}" if array else "")


def file_name(name: str, letter: str, seq: int, index: int | None) -> str:
    """The default file name of one job or subjob (index put in for the tag)."""
    return default_name(name, letter, seq, index is not None).replace(ARRAY_INDEX_TAG, str(index))


def _split(given: str) -> tuple[str | None, str]:
    head, sep, tail = given.partition(":")
    if sep and "/" not in head:
        return head, tail
    return None, given


def output_path(
    given: str | None, letter: str, name: str, seq: int, array: bool, workdir: str
) -> str:
    """The job's ``Output_Path`` (letter ``o``) or ``Error_Path`` (``e``); ValueError naming
    the option for a path another host would have to hold."""
    option = f"-{letter}"
    host = this_host()
    if given is None:
        return f"{host}:{posixpath.join(workdir, default_name(name, letter, seq, array))}"
    where, path = _split(given)
    if where is not None and where not in local_names():
        raise ValueError(
            f"{option} {given}: batchd writes a job's output on this host ({host}), not on {where}"
        )
    if not path:
        path = default_name(name, letter, seq, array)
    if not path.startswith("/"):
        path = posixpath.join(workdir, path)
    return f"{host}:{posixpath.normpath(path)}" + ("/" if path.endswith("/") else "")


def local_path(path: str, index: int | None) -> str:
    """The file an ``Output_Path`` names here, with a subjob's index put in for the tag."""
    _, local = _split(path)
    return local.replace(ARRAY_INDEX_TAG, str(index)) if index is not None else local


def pick_shell(given: str) -> str:
    """The shell of a ``Shell_Path_List`` for this host; ValueError for a bad list."""
    names = local_names()
    chosen: str | None = None
    for entry in given.split(","):
        path, at, host = entry.strip().partition("@")
        if not path.startswith("/"):
            raise ValueError(f"-S {given}: {path or entry!r} is not an absolute path")
        if at and host in names:
            return path
        if not at and chosen is None:
            chosen = path
    if chosen is None:
        raise ValueError(f"-S {given}: no shell for this host ({this_host()})")
    return chosen
