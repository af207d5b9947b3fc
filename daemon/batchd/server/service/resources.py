"""A submission's resources checked against the site, and turned into chunks on nodes.

PBS's rules (``pbs_resources(7B)``, the server's ``set_select_and_place``):

- ``select`` and ``place`` (new syntax) do not go with ``nodes`` nor with job-wide
  per-node resources (``ncpus``, ``mem``, the site's per-node ones); ``place``
  needs ``select``.
- ``nodes=N[:ppn=P][:cpp=C][:PROP][+...]`` becomes ``N:ncpus=P*C[:mem=M/NODES]
  [:PROP=True][:mpiprocs=P]`` chunks placed ``scatter`` (``#excl``/``#shared``
  add the sharing); a job-wide ``ncpus`` multiplies each chunk's CPUs if it is a
  multiple of the spec's, a job-wide ``mem`` is shared out over the nodes.
- Otherwise job-wide ``ncpus``, ``mem`` and per-node resources make one chunk
  placed ``pack``; without any, ``nodes`` (default 1) chunks of one CPU, ``scatter``.

Every refusal is a 400 naming the resource and, for a chunk too large, the limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from batchd.model.chunks import (
    ARRANGEMENTS,
    Chunk,
    ChunkError,
    Place,
    Value,
    check_chunk,
    pack_chunks,
    parse_place,
    shared_layout,
)
from batchd.model.sizes import SizeError, parse_size
from batchd.server.errors import bad_request
from batchd.server.jobresources import JobResources, shared
from batchd.server.resource_schemas import ChunkIn
from batchd.server.schemas import JobSubmit
from batchd.site.config import SiteConfig
from batchd.site.resources import BUILTIN, ResourceConfig, convert

UNKNOWN = "Unknown resource"
NOT_IN_SELECT = 'Resource invalid in "select" specification'
JOB_WIDE = '"-lresource=" cannot be used with "select" or "place", resource is'
NODES_WITH_SELECT = "Cannot be used with select or place: nodes"
PLACE_NO_SELECT = 'Cannot have "place" without "select"'
BAD_VALUE = "Illegal attribute or resource value"
_NODE_PART = re.compile(r"^([0-9]+)?(.*)$")


class ResourceRules:
    """The site's resources; ``request`` admits a submission's."""

    def __init__(self, site: SiteConfig) -> None:
        self.site = site

    def known(self) -> str:
        names = [*BUILTIN, *(r.name for r in self.site.resource)]
        return ", ".join(names)

    def _custom(self, name: str) -> ResourceConfig:
        res = self.site.resource_named(name)
        if res is None:
            raise bad_request(f"{UNKNOWN}: {name} (this site has {self.known()})")
        return res

    def _value(self, res: ResourceConfig, value: Any) -> Value:
        try:
            return convert(res, value)
        except ValueError as exc:
            raise bad_request(f"{BAD_VALUE}: {exc}") from None

    def request(self, body: JobSubmit, machine: int) -> JobResources | None:
        """The job's resources on ``machine``, or None for a moldable job (whole nodes of
        the width the scheduler chooses). Nothing changes; a refusal is a 400."""
        wide = {name: value for name, value in body.resources.items()}
        per_node = [n for n in wide if n in ("ncpus", "mem") or self._is_per_node(n)]
        job = self._job_wide({n: v for n, v in wide.items() if n not in per_node})
        new = body.select is not None or body.place is not None
        if body.nodes_spec is not None and "nodes" in body.model_fields_set:
            raise bad_request("give nodes or nodes_spec, not both")
        spec = body.nodes_spec
        if spec is None and "nodes" in body.model_fields_set and body.nodes_max is None:
            spec = str(body.nodes)  # nodes: N is -l nodes=N
        if new and spec is not None:
            raise bad_request(NODES_WITH_SELECT)
        if new and per_node:
            raise bad_request(f"{JOB_WIDE}: {per_node[0]}")
        if body.place is not None and body.select is None:
            raise bad_request(PLACE_NO_SELECT)
        if body.nodes_max is not None:
            self.check_moldable(machine)
            if new or per_node or body.nodes_spec is not None:
                raise bad_request(
                    "nodes=MIN-MAX: a moldable job takes whole nodes; it cannot ask for "
                    "select, place, nodes specs, ncpus or mem"
                )
            return None
        place = self._place(body.place)
        if body.select is not None:
            chunks = tuple(self._chunk(c, i) for i, c in enumerate(body.select, 1))
        elif spec is not None:
            extra = [n for n in per_node if n not in ("ncpus", "mem")]
            if extra:
                raise bad_request(
                    f"{BAD_VALUE}: {extra[0]}: with nodes= only ncpus and mem may be "
                    "job-wide; ask for it in select chunks"
                )
            chunks, place = self._nodes(spec, wide)
        elif per_node:
            chunks = (self._one_chunk(wide, per_node),)
            place = Place("pack")
        else:
            chunks, place = (Chunk(count=body.nodes),), Place("scatter")
        return self._placed(chunks, place, tuple(sorted(job.items())), spec, machine)

    def reservation_select(self, select: list[ChunkIn], nodes: int, machine: int) -> str:
        """A reservation's chunks, each checked to fit on a node of ``machine`` (which it
        holds whole), as Resource_List.select shows them; their counts must be ``nodes``."""
        chunks = [self._chunk(c, i) for i, c in enumerate(select, 1)]
        count = sum(c.count for c in chunks)
        if count != nodes:
            raise bad_request(f"select: {count} chunks; nodes says {nodes}: give the same number")
        shape = self.site.node_shape(machine)
        sizes = self.site.size_resources()
        for i, chunk in enumerate(chunks, 1):
            try:
                check_chunk(chunk, i, shape, sizes)
            except ChunkError as exc:
                raise bad_request(f"{exc}, on machine {self.site.machine[machine].name}") from None
        return "+".join(c.text(sizes) for c in chunks)

    def _is_per_node(self, name: str) -> bool:
        res = self.site.resource_named(name)
        return res is not None and res.per == "node"

    def _job_wide(self, wide: Mapping[str, Any]) -> dict[str, Value]:
        out: dict[str, Value] = {}
        for name, value in wide.items():
            if name in BUILTIN:
                raise bad_request(
                    f"{BAD_VALUE}: {name} is not a job-wide resource here; use select, "
                    "place, nodes or walltime as their own fields"
                )
            res = self._custom(name)
            got = self._value(res, value)
            limit = res.available
            if isinstance(limit, int) and isinstance(got, int) and got > limit:
                raise bad_request(
                    f"{name}: {value} requested; the site has {res.available} "
                    f"(resource {name}, available)"
                )
            out[name] = got
        return out

    def _place(self, text: str | None) -> Place:
        if text is None:
            return Place()
        try:
            return parse_place(text)
        except ChunkError as exc:
            raise bad_request(str(exc)) from None

    def _mem(self, value: Any, where: str) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise bad_request(f"{BAD_VALUE}: {where}mem={value}: must not be negative")
            return value
        try:
            return parse_size(str(value))
        except SizeError as exc:
            raise bad_request(f"{BAD_VALUE}: {where}mem: {exc}") from None

    def _customs(self, items: Mapping[str, Any], where: str) -> tuple[tuple[str, Value], ...]:
        out = []
        for name, value in sorted(items.items()):
            if name in BUILTIN or name == "nodect":
                raise bad_request(f"{NOT_IN_SELECT}, resource is: {name}")
            res = self._custom(name)
            if res.per != "node":
                raise bad_request(f"{NOT_IN_SELECT}, resource is: {name} (a per-job resource)")
            out.append((name, self._value(res, value)))
        return tuple(out)

    def _chunk(self, c: ChunkIn, index: int) -> Chunk:
        where = f"select chunk {index}: "
        return Chunk(
            count=c.count,
            ncpus=1 if c.ncpus is None else c.ncpus,
            mem=None if c.mem is None else self._mem(c.mem, where),
            mpiprocs=c.mpiprocs,
            ompthreads=c.ompthreads,
            custom=self._customs(c.custom, where),
        )

    def _one_chunk(self, wide: Mapping[str, Any], per_node: list[str]) -> Chunk:
        """Job-wide ncpus, mem and per-node resources without select: one chunk."""
        ncpus = wide.get("ncpus", 1)
        if isinstance(ncpus, bool) or not isinstance(ncpus, int) or ncpus < 0:
            if not (isinstance(ncpus, str) and ncpus.isdigit()):
                raise bad_request(f"{BAD_VALUE}: ncpus={ncpus}: a non-negative integer")
            ncpus = int(ncpus)
        mem = self._mem(wide["mem"], "") if "mem" in wide else None
        customs = {n: wide[n] for n in per_node if n not in ("ncpus", "mem")}
        return Chunk(count=1, ncpus=ncpus, mem=mem, custom=self._customs(customs, ""))

    def _nodes(self, spec: str, wide: Mapping[str, Any]) -> tuple[tuple[Chunk, ...], Place]:
        """``-l nodes=`` converted as PBS converts it."""
        text, _, mods = spec.partition("#")
        sharing = None
        for mod in mods.split("#") if mods else []:
            if mod.lower() in ("excl", "shared"):
                sharing = mod.lower()
            else:
                raise bad_request(f"{BAD_VALUE}: nodes={spec}: #{mod}: only #excl or #shared")
        parts = []
        for part in text.split("+"):
            m = _NODE_PART.match(part)
            assert m is not None
            count = int(m.group(1)) if m.group(1) else 1
            rest = m.group(2)
            if m.group(1) is None and not rest:
                raise bad_request(f"node(s) specification error: nodes={spec}")
            if count < 1 or (rest and not rest.startswith(":") and m.group(1)):
                raise bad_request(f"node(s) specification error: nodes={spec}")
            ppn = cpp = 1
            props: dict[str, Value] = {}
            for word in filter(None, rest.lstrip(":").split(":")):
                key, eq, val = word.partition("=")
                key = key.lower()
                if key == "ppn" and eq and val.isdigit() and int(val) >= 1:
                    ppn = int(val)
                elif key in ("cpp", "ncpus") and eq and val.isdigit():
                    cpp = int(val)
                elif not eq:
                    props[key] = True
                else:
                    raise bad_request(f"node(s) specification error: nodes={spec}: {word}")
            parts.append((count, ppn, cpp, props))
        total_cpus = sum(n * ppn * cpp for n, ppn, cpp, _ in parts)
        factor = 1
        if "ncpus" in wide:
            ncpus = wide["ncpus"]
            if not str(ncpus).isdigit() or int(ncpus) % max(total_cpus, 1):
                raise bad_request(
                    f"{BAD_VALUE}: ncpus={ncpus}: with nodes={spec} it must be a multiple "
                    f"of the {total_cpus} CPUs the nodes ask for"
                )
            factor = max(int(ncpus) // max(total_cpus, 1), 1)
        node_count = sum(n for n, *_ in parts)
        mem = None
        if "mem" in wide:
            mem = self._mem(wide["mem"], "") // 1024 // node_count * 1024
        chunks = []
        for count, ppn, cpp, props in parts:
            custom = self._customs(props, "") if props else ()
            chunks.append(
                Chunk(
                    count=count,
                    ncpus=ppn * cpp * factor,
                    mem=mem,
                    mpiprocs=ppn if ppn != 1 else None,
                    custom=custom,
                )
            )
        return tuple(chunks), Place("scatter", sharing)

    def check_moldable(self, machine: int) -> None:
        """A moldable job takes whole nodes: refused on a machine of shared nodes."""
        conf = self.site.machine[machine]
        if conf.shared:
            raise bad_request(
                f"nodes=MIN-MAX: a moldable job takes whole nodes; machine {conf.name} "
                "shares its nodes (use a queue of a machine of whole nodes)"
            )

    def altered(
        self,
        res: JobResources | None,
        reshaped: bool,
        width: int,
        moldable: bool,
        old: int,
        new: int,
    ) -> JobResources | None:
        """A waiting job's resources after qalter or qmove, from machine ``old`` to ``new``:
        given a width or a moldable range (``reshaped``), whole nodes (None), or on shared
        nodes ``nodes=WIDTH`` as PBS converts it (chunks of one CPU, each on a node of its
        own); else its chunks as they are, placed again on another machine."""
        if reshaped:
            if moldable:
                self.check_moldable(new)
            if not self.site.machine[new].shared:
                return None
            return self._placed((Chunk(count=width),), Place("scatter"), (), str(width), new)
        if res is not None and new != old:
            return self.moved(res, new)
        return res

    def moved(self, res: JobResources, machine: int) -> JobResources:
        """The same request on another machine (qalter -q to a queue of another machine)."""
        return self._placed(res.chunks, res.place, res.job, res.nodes_spec, machine)

    def _check_count(self, chunks: tuple[Chunk, ...], arrangement: str, machine: int) -> None:
        """Chunks that no machine of the site could ever hold are refused before they are
        placed one by one (fewer are left to the machine's and queue's limits, which name
        the queues that would take the job)."""
        total = sum(c.count for c in chunks)
        machines = self.site.machine
        nodes = sum(m.nodes for m in machines)
        if arrangement in ("scatter", "vscatter") and total > nodes:
            if self.site.grid_table is not None:
                raise bad_request(
                    f"nodes: {total} nodes requested; the grid's machines have {nodes} in all"
                )
            conf = self.site.machine[machine]
            raise bad_request(
                f"nodes: {total} nodes requested; machine {conf.name} has {conf.nodes}"
            )
        cores = sum(m.nodes * m.ncpus for m in machines)
        if total > cores:
            raise bad_request(
                f"select: {total} chunks requested; the site's nodes have {cores} cores in all"
            )

    def _placed(
        self,
        chunks: tuple[Chunk, ...],
        place: Place,
        job: tuple[tuple[str, Value], ...],
        nodes_spec: str | None,
        machine: int,
    ) -> JobResources:
        conf = self.site.machine[machine]
        arrangement = place.arrangement or ("free" if conf.shared else "scatter")
        assert arrangement in ARRANGEMENTS
        sizes = self.site.size_resources()
        self._check_count(chunks, arrangement, machine)
        shape = self.site.node_shape(machine)
        cores: tuple[int, ...] = ()
        spread = True
        try:
            if conf.shared:
                layout = shared_layout(chunks, arrangement, place.sharing, shape, sizes)
                groups, cores, spread = layout.groups, layout.cores, layout.spread
            else:
                groups = pack_chunks(chunks, arrangement, shape, sizes)
        except ChunkError as exc:
            raise bad_request(f"{exc}, on machine {conf.name}") from None
        if conf.shared and spread and len(groups) > conf.nodes:
            raise bad_request(
                f"select: the chunks need {len(groups)} nodes of their own; machine "
                f"{conf.name} has {conf.nodes}"
            )
        return shared(
            JobResources(
                chunks=chunks,
                place=place,
                arrangement=arrangement,
                groups=tuple(tuple(g) for g in groups),
                cores=cores,
                spread=spread,
                job=job,
                nodes_spec=nodes_spec,
                sizes=frozenset(n for c in chunks for n, _ in c.custom if n in sizes)
                | frozenset(n for n, _ in job if n in sizes),
            )
        )
