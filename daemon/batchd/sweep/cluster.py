"""Runs on a Dask cluster: a LocalCluster, or an existing scheduler by address or file.

Each run is one task (``pure=False``, one worker thread per process for the
GIL-bound replays on a LocalCluster). The traces are published on the cluster once
(``batchd-trace-CHECKSUM``) for workers that do not share the file system
(``files.FileRef.local_path`` decides per worker). When a worker dies, the
scheduler runs its tasks again elsewhere; the result of each task reaches
``on_done`` once, and the store writes each key once besides.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from batchd.sweep import SweepError
from batchd.sweep.executor import Done
from batchd.sweep.files import DATASET_PREFIX, FileChanged, FileRef, sha256_bytes


class DaskExecutor:
    def __init__(self, address: str | None, workers: int | None) -> None:
        self.address = address  # None: a LocalCluster
        self.count = workers or os.cpu_count() or 1
        self.connected = 0

    def describe(self) -> str:
        if self.address is None:
            return f"a local Dask cluster of {self.count} workers"
        return f"the Dask cluster at {self.address}"

    def workers(self) -> int:
        return self.connected or self.count

    def connect(self) -> tuple[Any, Any]:
        """The client, and the LocalCluster it owns (None for an existing scheduler)."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise SweepError(
                "--dask needs the dask and distributed packages: pip install 'batchd[sweep]'"
            ) from None
        if self.address is None:
            cluster = LocalCluster(
                n_workers=self.count,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
            return Client(cluster), cluster
        try:
            if self.address.endswith(".json") and Path(self.address).is_file():
                return Client(scheduler_file=self.address, timeout="20s"), None
            return Client(self.address, timeout="20s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"--dask {self.address}: cannot reach the scheduler: {exc}") from None

    def run(
        self,
        items: Sequence[Any],
        work: Callable[[Any], Any],
        on_done: Done,
        *,
        files: Sequence[FileRef] = (),
    ) -> None:
        if not items:
            return
        from distributed import as_completed

        client, cluster = self.connect()
        published: list[str] = []
        futures: dict[Any, Any] = {}
        try:
            self.connected = len(client.scheduler_info().get("workers", {})) or self.count
            published = publish(client, files)
            futures = {client.submit(work, item, pure=False): item for item in items}
            for future in as_completed(futures):
                item = futures.pop(future)
                if future.status == "finished":
                    on_done(item, future.result(), None)
                else:
                    on_done(item, None, future.exception())
        finally:
            if futures:
                client.cancel(list(futures))
            for name in published:
                client.unpublish_dataset(name)
            client.close()
            if cluster is not None:
                cluster.close()


def publish(client: Any, files: Sequence[FileRef]) -> list[str]:
    """Each trace's bytes on the cluster under its checksum; the names published."""
    names: list[str] = []
    for ref in {f.sha256: f for f in files}.values():
        name = DATASET_PREFIX + ref.sha256
        data = Path(ref.path).read_bytes()
        if sha256_bytes(data) != ref.sha256:
            raise FileChanged(f"{ref.path}: the file changed after the sweep started")
        if name in client.list_datasets():
            continue  # another sweep on this cluster published the same bytes
        client.publish_dataset(**{name: client.scatter(data)})
        names.append(name)
    return names
