"""A job's PBS resources as admitted: its chunks, place, job-wide resources, and the
chunks on each of its nodes; saved with the job, shown as ``Resource_List.*`` and
``exec_vnode``, summed per node for ``qnodes``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any
from weakref import WeakValueDictionary

from batchd.model.chunks import Chunk, Place, Value, show_value
from batchd.model.job import Job
from batchd.model.sizes import format_size

# qstat -a's NDS, TSK and Req'd Memory: what the job tables show of the resource list.
TABLE_RESOURCES = frozenset(("mem", "ncpus", "nodect"))


@dataclass(frozen=True, slots=True, weakref_slot=True)
class JobResources:
    chunks: tuple[Chunk, ...]
    place: Place
    arrangement: str  # the one in force: the place asked for, else the machine's default
    # The chunks (indexes into ``chunks``, one per chunk counted) on each of the job's
    # nodes, in the order of its nodes: fixed at admission, so the width is len(groups).
    groups: tuple[tuple[int, ...], ...]
    job: tuple[tuple[str, Value], ...] = ()  # per-job resources (-l NAME=VALUE)
    nodes_spec: str | None = None  # -l nodes= as written (old syntax), converted to chunks
    sizes: frozenset[str] = frozenset()  # the custom resources here of type size
    # On a machine whose nodes are shared: the cores each group takes of its node (the
    # groups are then pieces, and several may share a node unless ``spread``); empty on
    # a machine of whole nodes.
    cores: tuple[int, ...] = ()
    spread: bool = True

    @property
    def width(self) -> int:
        """What the scheduler counts: nodes, or cores on a machine of shared nodes."""
        return sum(self.cores) if self.cores else len(self.groups)

    @property
    def nodect(self) -> int:
        """PBS's nodect: the number of chunks."""
        return sum(c.count for c in self.chunks)

    def select_text(self) -> str:
        return "+".join(c.text(self.sizes) for c in self.chunks)

    def resource_list(self) -> dict[str, str]:
        """``Resource_List.*`` but walltime: select, place, nodect and the sums of ncpus,
        mem and mpiprocs over the chunks (as PBS sets them), per-job resources, nodes."""
        out = {
            "ncpus": self._ncpus(),
            "nodect": str(self.nodect),
            "place": self.place.text(self.arrangement),
            "select": self.select_text(),
        }
        if (mem := self._mem()) is not None:
            out["mem"] = mem
        if any(c.mpiprocs is not None for c in self.chunks):
            out["mpiprocs"] = str(sum(c.count * (c.mpiprocs or 0) for c in self.chunks))
        for name, value in self.job:
            out[name] = show_value(value, name in self.sizes)
        if self.nodes_spec is not None:
            out["nodes"] = self.nodes_spec
        return out

    def table_resources(self) -> dict[str, str]:
        """Of ``resource_list``, what the job tables show (``TABLE_RESOURCES``), in its
        order, without making the rest (no per-job resource has those names: PBS keeps
        them, and the site may define none of them)."""
        out = {"ncpus": self._ncpus(), "nodect": str(self.nodect)}
        if (mem := self._mem()) is not None:
            out["mem"] = mem
        return out

    def _ncpus(self) -> str:
        return str(sum(c.count * c.ncpus for c in self.chunks))

    def _mem(self) -> str | None:
        if all(c.mem is None for c in self.chunks):
            return None
        return format_size(sum(c.count * (c.mem or 0) for c in self.chunks))

    def on_node(self, position: int) -> dict[str, int]:
        """The consumable amounts the job's chunks take on its ``position``-th node."""
        used: dict[str, int] = {}
        if position >= len(self.groups):
            return used
        for u in self.groups[position]:
            chunk = self.chunks[u]
            used["ncpus"] = used.get("ncpus", 0) + chunk.ncpus
            if chunk.mem is not None:
                used["mem"] = used.get("mem", 0) + chunk.mem
            for name, value in chunk.custom:
                if isinstance(value, int) and not isinstance(value, bool):
                    used[name] = used.get(name, 0) + value
        return used

    def exec_vnode(self, hosts: list[str]) -> str:
        """``(node001:ncpus=2:mem=4194304kb)+(node002:ncpus=2)``: one part per chunk, on
        ``hosts``, the job's node names in order (memory in kb, as PBS shows it)."""
        parts = []
        for host, group in zip(hosts, self.groups, strict=False):
            for u in group:
                chunk = self.chunks[u]
                text = f"{host}:ncpus={chunk.ncpus}"
                if chunk.mem is not None:
                    kb = chunk.mem % 1024 == 0
                    text += f":mem={chunk.mem // 1024}kb" if kb else f":mem={chunk.mem}b"
                for name, value in chunk.custom:
                    if isinstance(value, int) and not isinstance(value, bool):
                        text += f":{name}={show_value(value, name in self.sizes)}"
                parts.append(f"({text})")
        return "+".join(parts)

    def to_row(self) -> dict[str, Any]:
        return {
            "chunks": [
                {
                    "count": c.count,
                    "ncpus": c.ncpus,
                    "mem": c.mem,
                    "mpiprocs": c.mpiprocs,
                    "ompthreads": c.ompthreads,
                    "custom": [list(kv) for kv in c.custom],
                }
                for c in self.chunks
            ],
            "place": [self.place.arrangement, self.place.sharing, self.place.group],
            "arrangement": self.arrangement,
            "groups": [list(g) for g in self.groups],
            "job": [list(kv) for kv in self.job],
            "nodes_spec": self.nodes_spec,
            "sizes": sorted(self.sizes),
            **({"cores": list(self.cores), "spread": self.spread} if self.cores else {}),
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> JobResources:
        arrangement, sharing, group = row["place"]
        return cls(
            chunks=tuple(
                Chunk(
                    count=int(c["count"]),
                    ncpus=int(c["ncpus"]),
                    mem=c["mem"],
                    mpiprocs=c["mpiprocs"],
                    ompthreads=c["ompthreads"],
                    custom=tuple((str(k), v) for k, v in c["custom"]),
                )
                for c in row["chunks"]
            ),
            place=Place(arrangement, sharing, group),
            arrangement=str(row["arrangement"]),
            groups=tuple(tuple(int(u) for u in g) for g in row["groups"]),
            job=tuple((str(k), v) for k, v in row["job"]),
            nodes_spec=row.get("nodes_spec"),
            sizes=frozenset(row.get("sizes", ())),
            cores=tuple(int(c) for c in row.get("cores", ())),
            spread=bool(row.get("spread", True)),
        )


# Equal resources, one object: most jobs of a queue ask alike, and each one's own copy
# was some 850 bytes (a tuple per node, a frozenset, the chunks). Held weakly, by the
# fields: the last job that asks so takes its entry with it.
_alike: WeakValueDictionary[tuple[Any, ...], JobResources] = WeakValueDictionary()
_FIELDS = tuple(f.name for f in fields(JobResources))


def shared(resources: JobResources) -> JobResources:
    """The object kept for resources equal to ``resources`` (it, the first time)."""
    key = tuple(getattr(resources, name) for name in _FIELDS)
    kept = _alike.get(key)
    if kept is None:
        _alike[key] = kept = resources
    return kept


def shape_job(job: Job, resources: JobResources | None) -> None:
    """Give the engine the pieces a job on shared nodes asks for (none: whole nodes)."""
    if resources is not None and resources.cores:
        job.pieces, job.spread = resources.cores, resources.spread
    else:
        job.pieces, job.spread = None, True


def whole_nodes(width: int) -> JobResources:
    """What a job of ``width`` nodes without a resource request holds: one chunk of one
    CPU on each node (``-l nodes=N`` as PBS converts it), scattered."""
    return JobResources(
        chunks=(Chunk(count=width),),
        place=Place("scatter"),
        arrangement="scatter",
        groups=tuple((0,) for _ in range(width)),
    )
