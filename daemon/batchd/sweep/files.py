"""The input files of a sweep by content: checksums, and a worker's local copy.

A run names each input file by its path and its SHA-256. A worker uses the file at
the path when it has that checksum (checked once per process while the file's size
and modification time stay). A worker without the file, or with another file
there, needs the bytes: a site file travels inline with the run (it is small); a
trace is published once on the Dask cluster and fetched by the workers that need
it, which keep it in their temporary directory. Without a cluster (this process, a
local pool) the file is shared, so another checksum means the file changed after
the sweep started: the run fails and says so.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from batchd.sweep import SweepError

SYNTHETIC = "synthetic"
DATASET_PREFIX = "batchd-trace-"  # + checksum: a trace's bytes published on a Dask cluster

_verified: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, sha256)


class FileChanged(SweepError):
    """An input file whose content is not the one the sweep planned with."""


def is_synthetic(trace: str) -> bool:
    return trace == SYNTHETIC or trace.startswith(SYNTHETIC + ":")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """The file's SHA-256, cached while its size and modification time stay."""
    text = str(path)
    stat = os.stat(text)
    cached = _verified.get(text)
    if cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns):
        return cached[2]
    digest = hashlib.sha256()
    with open(text, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    _verified[text] = (stat.st_size, stat.st_mtime_ns, digest.hexdigest())
    return digest.hexdigest()


@dataclass(frozen=True)
class FileRef:
    """An input file of a run: where the sweep read it, its checksum, maybe its bytes."""

    path: str
    sha256: str
    inline: bytes | None = None

    def local_path(self) -> str:
        """A path on this machine to a file with this content (see the module's text)."""
        found = self._found_sha256()
        if found == self.sha256:
            return self.path
        sent = self.inline is not None or in_dask_worker()
        copy = cache_path(self)
        if sent and copy.is_file() and sha256_file(copy) == self.sha256:
            return str(copy)  # sent to this machine for an earlier run
        data = self.inline if self.inline is not None else published_bytes(self.sha256)
        if data is None:
            if found is None:
                raise FileChanged(f"{self.path}: no such file on this machine")
            raise FileChanged(
                f"{self.path}: the file changed after the sweep started (checksum "
                f"{found[:16]}..., the sweep planned with {self.sha256[:16]}...)"
            )
        return cached_copy(self, data)

    def _found_sha256(self) -> str | None:
        try:
            return sha256_file(self.path)
        except OSError:
            return None


def read_ref(path: str, *, inline: bool = False) -> FileRef:
    """The reference to a file the sweep reads now (with its bytes when ``inline``)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SweepError(f"{path}: no such file") from None
    except OSError as exc:
        raise SweepError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return FileRef(path, sha256_bytes(data), data if inline else None)


def cached_copy(ref: FileRef, data: bytes) -> str:
    """The bytes in this machine's temporary directory, under the checksum and file name."""
    if sha256_bytes(data) != ref.sha256:
        raise FileChanged(f"{ref.path}: the bytes received do not have the planned checksum")
    target = cache_path(ref)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.parent / f".{target.name}.{os.getpid()}.part"
    part.write_bytes(data)
    part.replace(target)
    return str(target)


def cache_path(ref: FileRef) -> Path:
    """Where this machine keeps a file's bytes it was sent: under the checksum, with the
    file's name (which keeps .gz, which the reader goes by)."""
    return Path(tempfile.gettempdir()) / "batchd-sweep-files" / ref.sha256 / Path(ref.path).name


def published_bytes(sha256: str) -> bytes | None:
    """A trace's bytes published on the Dask cluster this runs in, or None outside one."""
    if not in_dask_worker():
        return None
    from distributed import get_client

    client = get_client()
    name = DATASET_PREFIX + sha256
    if name not in client.list_datasets():
        return None
    data = client.get_dataset(name).result()
    return data if isinstance(data, bytes) else None


def in_dask_worker() -> bool:
    try:
        from distributed import get_worker
    except ImportError:
        return False
    try:
        get_worker()
    except ValueError:
        return False
    return True
