"""Input files a study makes in OUT (job sets, workloads), safe to make in parallel.

Every shard of an array job makes the same files in the same OUT on a shared file
system, while others may be replaying them. So a file is written under a name of
this process's own and renamed over its name: a reader sees the old file or the new
one, never half of one. The same command writes the same bytes, and a file that
already holds them is left as it is.
"""

from __future__ import annotations

import filecmp
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def write_in_place(path: Path, write: Callable[[Path], T]) -> T:
    """``write(part)`` to a private file beside ``path``, then put it at ``path``; returns
    what ``write`` returns. The private name keeps ``path``'s suffixes (``.gz`` decides
    compression) and starts with a dot."""
    part = path.with_name(f".{os.getpid()}.{path.name}")
    try:
        made = write(part)
        if path.is_file() and filecmp.cmp(part, path, shallow=False):
            part.unlink()
        else:
            part.replace(path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return made
