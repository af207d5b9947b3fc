"""Output and error paths of jobs from sbatch: Slurm's filename patterns.

A path is kept as given, joined onto the job's working directory when relative, and
expanded when the job starts (sbatch(1), "filename pattern"): ``%j`` the job id,
``%J`` the same (the batch step has no step number), ``%x`` the job name, ``%u`` the
owner, ``%A`` an array's job id, ``%a`` the task's index, ``%N`` the first node's
short name, ``%n`` and ``%t`` 0 (the batch script is task 0 on node 0), ``%s``
``batch`` and ``%%`` a ``%``. A number between ``%`` and the letter zero-pads a
numeric value (``%4j``). A path with a backslash is taken as it is, without its
backslashes. Any other ``%`` is refused at submission.
"""

from __future__ import annotations

import posixpath
import re

PATTERN_LETTERS = "jJxuAaNnts%"
DEFAULT_OUTPUT = "slurm-%j.out"
DEFAULT_ARRAY_OUTPUT = "slurm-%A_%a.out"
_CODE = re.compile(r"%([0-9]*)(.?)", re.DOTALL)


def check(pattern: str, option: str) -> None:
    """ValueError naming ``option`` and the sequence for a ``%`` Slurm does not know."""
    if "\\" in pattern:
        return
    for m in _CODE.finditer(pattern):
        if m.group(2) == "" or m.group(2) not in PATTERN_LETTERS:
            seq = m.group(0)
            raise ValueError(
                f"{option} {pattern}: unknown filename pattern {seq!r}; use %j %J %x %u "
                "%A %a %N %n %t %s or %% (a number between % and the letter zero-pads)"
            )


def job_path(given: str | None, workdir: str, array: bool) -> str:
    """The path of a job's output or error file, the pattern unexpanded: the default
    (``slurm-%j.out``, an array's ``slurm-%A_%a.out``) when not given, relative paths in
    ``workdir``."""
    path = given if given is not None else (DEFAULT_ARRAY_OUTPUT if array else DEFAULT_OUTPUT)
    if not path.startswith("/"):
        path = posixpath.join(workdir, path)
    return path


def expand(pattern: str, fields: dict[str, str]) -> str:
    """The file a pattern names; ``fields`` maps each letter but ``%`` to its value."""
    if "\\" in pattern:
        return pattern.replace("\\", "")

    def one(m: re.Match[str]) -> str:
        width, letter = m.group(1), m.group(2)
        if letter == "%":
            return "%"
        value = fields.get(letter, "")
        if width and value.isdigit():
            return value.zfill(int(width))
        return value

    return _CODE.sub(one, pattern)
