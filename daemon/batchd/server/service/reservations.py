"""Advance reservations: nodes of one machine held for a fixed window that no policy moves.

Each reservation has a queue, ``R<seq>`` as in PBS, for the jobs that run inside
it: the queue takes jobs from its creation until the window closes (or the
reservation is deleted), at most as wide as the reservation; a job without a
walltime gets the reservation's duration.
"""

from __future__ import annotations

import re

from batchd.engine import restored
from batchd.engine.core import Engine
from batchd.model.reservation import Reservation, ResvState
from batchd.model.times import hms, stamp
from batchd.server.admin_schemas import ReservationCreate
from batchd.server.errors import bad_request, conflict, not_found
from batchd.server.records import SEQ_DIGITS, resv_from_row, resv_to_row
from batchd.server.service.journal import Journal
from batchd.site.tables import QueueConfig


class Reservations:
    def __init__(self, server: str, journal: Journal, per_node: list[int]) -> None:
        self.server = server
        self.journal = journal
        self.per_node = per_node  # each machine's units to a node: its cores when shared
        self.items: dict[int, Reservation] = {}
        self.seq = 0
        self._saved: dict[int, ResvState] = {}
        journal.before_commit.append(self.flush)

    def resv_id(self, seq: int) -> str:
        return f"R{seq}.{self.server}"

    def create(
        self, engine: Engine, machine: int, nodes_total: int, owner: str, body: ReservationCreate
    ) -> Reservation:
        """Hold ``body.nodes`` nodes of ``machine`` from the start asked for (or the first fit)."""
        from batchd.sched.core.plans import base_profile

        m = engine.machines[machine]
        now = engine.now
        per = self.per_node[machine]  # shared nodes: a node is its cores to the planners
        width = body.nodes * per
        if width > m.capacity:
            raise bad_request(
                f"nodes: {body.nodes} nodes requested; {m.capacity // per} of {nodes_total} "
                f"nodes of machine {m.machine.name} are in service"
            )
        profile = base_profile(m, 0)
        if body.start == "asap":
            start = profile.earliest_start(width, body.duration, now)
        else:
            start = now if body.start == "now" else int(body.start)
            if start < now:
                raise bad_request(f"start: {stamp(start)} is in the past (now {stamp(now)})")
            if profile.earliest_start(width, body.duration, start) != start:
                raise conflict(
                    f"reservation of {body.nodes} nodes for {hms(body.duration)} at "
                    f"{stamp(start)} does not fit around running jobs and reservations; "
                    "try start=asap"
                )
        self.seq += 1
        resv = Reservation(
            id=self.seq,
            start=start,
            end=start + body.duration,
            width=width,
            machine=machine,
            owner=owner,
            name=body.name,
            queue=f"R{self.seq}",
        )
        self.items[resv.id] = resv
        self.journal.save_meta(resv_seq=self.seq)
        engine.add_reservation(resv)
        return resv

    def find(self, text: str) -> Reservation:
        raw = text.strip()
        body = raw[1:] if raw[:1] in ("R", "r") else raw
        seq_text, _, server = body.partition(".")
        if not re.fullmatch(f"[0-9]{{1,{SEQ_DIGITS}}}", seq_text) or (
            server and server != self.server
        ):
            raise bad_request(f"{text!r} is not a reservation id (R<seq>.{self.server})")
        resv = self.items.get(int(seq_text))
        if resv is None:
            raise not_found(f"Unknown reservation {text}")
        return resv

    def of_queue(self, name: str) -> Reservation | None:
        """The reservation whose queue this is, while it takes jobs (not finished)."""
        if name[:1] != "R" or not name[1:].isdigit():
            return None
        resv = self.items.get(int(name[1:]))
        if resv is None or resv.queue != name or resv.state is ResvState.FINISHED:
            return None
        return resv

    def owner_of(self, name: str) -> str | None:
        """The owner of the reservation whose queue this is (while it takes jobs), or None."""
        resv = self.of_queue(name)
        return None if resv is None else resv.owner

    def queue_config(self, name: str, machine_names: list[str]) -> QueueConfig | None:
        """An open reservation's queue as the admission checks see it."""
        resv = self.of_queue(name)
        if resv is None:
            return None
        return QueueConfig(
            name=name,
            max_nodes=resv.width // self.per_node[resv.machine],
            default_walltime=resv.duration,
            machine=machine_names[resv.machine],
        )

    def queue_configs(self, machine_names: list[str]) -> list[QueueConfig]:
        out = []
        for resv in self.items.values():
            q = self.queue_config(resv.queue, machine_names) if resv.queue else None
            if q is not None:
                out.append(q)
        return out

    def delete(self, engine: Engine, resv: Reservation) -> None:
        if resv.state is ResvState.FINISHED:
            raise conflict(f"reservation {self.resv_id(resv.id)} has already finished")
        engine.remove_reservation(resv)

    def flush(self) -> None:
        """Save the reservations whose state moved since the last commit."""
        for resv in self.items.values():
            if self._saved.get(resv.id) is not resv.state:
                self._saved[resv.id] = resv.state
                self.journal.put_reservation(resv_to_row(resv))

    def restore(self, engine: Engine, rows: list[dict[str, object]], machines: int) -> None:
        """Reservations saved before a stop: running ones first, then the confirmed ones
        (see ``restore_confirmed``), so that nodes taken out meanwhile are known."""
        now = engine.now
        for row in rows:
            resv = resv_from_row(row)
            if not 0 <= resv.machine < machines:
                continue
            self.items[resv.id] = resv
            self._saved[resv.id] = resv.state
            if resv.state is not ResvState.FINISHED and resv.end <= now:
                restored.reservation_passed(resv)
            elif resv.state is ResvState.RUNNING:
                engine.add_reservation(resv)

    def closed_queues(self) -> dict[str, int]:
        """The queues of finished reservations, with when each ended."""
        return {
            r.queue: r.end for r in self.items.values() if r.queue and r.state is ResvState.FINISHED
        }

    def restore_confirmed(self, engine: Engine) -> None:
        now = engine.now
        for resv in self.items.values():
            if resv.state is ResvState.CONFIRMED:
                resv.start = max(resv.start, now)  # due while the daemon was down: opens now
                engine.add_reservation(resv)
