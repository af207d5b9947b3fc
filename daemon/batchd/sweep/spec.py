"""The executor options, standard library only: building the CLI parser stays cheap."""

from __future__ import annotations

from dataclasses import dataclass

LOCAL_DASK = "local"  # --dask without an address: a LocalCluster on this machine


@dataclass(frozen=True)
class ExecutorSpec:
    """The executor options: ``workers`` (None: the CPU count), ``dask`` (None: no Dask;
    ``local``: a LocalCluster; an address or a scheduler file: an existing cluster)."""

    workers: int | None = None
    dask: str | None = None

    def options(self) -> list[str]:
        """The options as given, for the command-line echo."""
        out = [] if self.workers is None else ["--workers", str(self.workers)]
        if self.dask == LOCAL_DASK:
            out.append("--dask")
        elif self.dask is not None:
            out += ["--dask", self.dask]
        return out
