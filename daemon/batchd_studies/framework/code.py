"""Which code produced a result: a digest of the sources that replay a study's runs.

Every entry a study stores from now on records ``code``, the digest of the Python
sources of ``batchd`` (the replay, the policies, the engine) and ``batchd_studies``
(the runs, the workloads a study makes) that replayed it. The digest changes with any
edit to those sources, a comment as much as a policy, so it says which code wrote an
entry, not whether today's code would write another: ``batchd_studies.replaycheck``
replays committed runs to tell that.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path

CODE_FIELD = "code"  # the entry's key of the digest

PACKAGES = ("batchd", "batchd_studies")


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no package {name} to take the code digest of")
    return Path(spec.origin).resolve().parent


@functools.cache
def code_digest() -> str:
    """16 hex digits of SHA-256 over every ``*.py`` of the packages, path and bytes."""
    h = hashlib.sha256()
    for name in PACKAGES:
        root = package_dir(name)
        for path in sorted(root.rglob("*.py")):
            rel = f"{name}/{path.relative_to(root).as_posix()}"
            data = path.read_bytes()
            h.update(f"{rel}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()[:16]
