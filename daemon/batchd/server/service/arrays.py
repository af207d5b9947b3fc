"""Job arrays (``qsub -J X-Y[:Z][%N]``): one record per array, its subjobs ordinary jobs.

The array's record keeps its request (what each subjob is made from), its range and a
letter per subjob: Q (queued, or held with the array), R (running) or X (finished or
deleted). A subjob is made when it may be scheduled: all of them at once when the
array has no limit, so that they are scheduled as that many jobs submitted then, in
index order; with ``%N`` the next one (in index order) each time one ends, while
fewer than N are made and unfinished. A made subjob is an ordinary job record
(``records``), saved once something happens to it (it starts, ends, is deleted); the
subjobs made and never touched are made again at a restart, from the array's letters.

PBS's rules: qdel of the array deletes its unfinished subjobs (running ones are killed
as qdel kills a job), qdel of a subjob only that subjob; qhold, qrls and qalter act on
arrays, not on subjobs ("Invalid request"); qalter only before a subjob has begun.
"""

from __future__ import annotations

from batchd.engine import transitions
from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.model.states import PENDING_STATES, JobState
from batchd.server.arrays import (
    EXPIRED,
    MAX_ARRAY_SEQ,
    QUEUED,
    RUNNING,
    ArraySpec,
    RangeError,
    parse_indices,
    split_key,
)
from batchd.server.errors import bad_request, conflict
from batchd.server.records import JobRecord, drop_holds, merge_holds
from batchd.server.schemas import JobAlter, JobSubmit
from batchd.server.service.access import Caller, may_act_on, may_hold
from batchd.server.service.lifecycle import Lifecycle
from batchd.server.subjobs import subjob_record

INVALID = "Invalid request"  # PBSE_IVALREQ: PBS's answer for a subjob it does not act on
BAD_STATE = "Request invalid for state of job"
THROTTLED = "Not Running: Number of concurrent running subjobs limit reached"
TOO_BIG = "Array job exceeds server or queue size limit"


class ArrayJobs:
    def __init__(self, lifecycle: Lifecycle) -> None:
        self.life = lifecycle
        self.arrays = lifecycle.arrays
        self.records = lifecycle.records
        self.engine = lifecycle.engine
        self.journal = lifecycle.journal
        self.events = lifecycle.events
        self.server = lifecycle.server
        # Each array's made, unfinished subjobs by position; where to look for the next.
        self.live: dict[int, dict[int, JobRecord]] = {}
        self._next: dict[int, int] = {}
        self._ending: set[int] = set()  # arrays being deleted: make no more subjobs
        lifecycle.on_subjob.append(self.subjob_moved)

    # -- submission -------------------------------------------------------------------
    def submit(self, caller: Caller, body: JobSubmit) -> JobRecord:
        """Validate everything first (a refused array changes nothing), then the array joins
        and its first subjobs are made."""
        assert body.array_indices is not None
        limit = self.life.site.server.max_array_size
        try:
            start, end, step, listed = parse_indices(body.array_indices, limit + 1)
        except RangeError as exc:
            raise bad_request(f"illegal -J value: {exc}") from None
        spec = ArraySpec(start, end, step, body.max_run_subjobs, indices=listed)
        if spec.count > limit:
            raise bad_request(
                f"{TOO_BIG}: {body.array_indices} makes {spec.count} subjobs; this server's "
                f"max_array_size is {limit}"
            )
        if not body.rerunable:
            raise bad_request("cannot submit non-rerunable Array Job (job arrays are rerunnable)")
        if body.depend:
            raise bad_request(
                "depend: batchd's job arrays take no dependencies (-W depend); submit the "
                "array once the jobs it waits for have ended"
            )
        if self.life.seq + 1 > MAX_ARRAY_SEQ:
            raise bad_request(f"job numbers above {MAX_ARRAY_SEQ} cannot be job arrays in batchd")
        owner = self.life.owner_of(caller, body)
        rec = self.life.new_record(body, owner, caller.user)
        rec.array = spec
        now = self.engine.now
        self.life.seq = rec.seq
        self.journal.save_meta(seq=rec.seq)
        self.arrays[rec.seq] = rec
        self.journal.touch(rec)
        job = rec.job
        if rec.hold_types:
            transitions.first_state(job, JobState.HELD)
            rec.comment = "Job held by user"
        elif rec.exec_time is not None and rec.exec_time > now:
            transitions.first_state(job, JobState.WAITING)
        else:
            rec.etime = now
        self.events.queued(rec, caller.user)
        self.live[rec.seq] = {}
        self._next[rec.seq] = 0
        self.fill(rec)
        return rec

    # -- making subjobs ---------------------------------------------------------------
    def fill(self, parent: JobRecord) -> None:
        """Make the array's next queued subjobs, in index order, up to its limit."""
        spec = parent.array
        assert spec is not None
        seq = parent.seq
        if parent.job.state is JobState.FINISHED or seq in self._ending:
            return
        live = self.live.setdefault(seq, {})
        limit = spec.max_run or spec.count
        pos = self._next.get(seq, 0)
        queued = QUEUED.encode()
        while len(live) < limit:
            pos = spec.letters.find(queued, pos)
            if pos < 0:
                pos = spec.count
                break
            if pos not in live:
                self._make(parent, pos)
            pos += 1
        self._next[seq] = pos

    def _make(self, parent: JobRecord, pos: int) -> None:
        spec = parent.array
        assert spec is not None
        now = self.engine.now
        rec = subjob_record(parent, spec.index(pos), self.server, now)
        self.records[rec.seq] = rec
        self.live[parent.seq][pos] = rec
        self.journal.count(rec)
        job = rec.job
        if job.state is JobState.WAITING:
            self.life.arm_one(rec)
        elif job.state is JobState.QUEUED:
            rec.etime = now
            if job.submit >= now:
                self.engine.submit(job)  # with the array: an arrival, in index order
            else:
                self.engine.enqueue(job)  # later (%N): it queues from the array's submission

    def throttled(self, parent: JobRecord) -> bool:
        """Whether the array's limit keeps its next queued subjobs from being made."""
        spec = parent.array
        assert spec is not None
        return spec.max_run is not None and len(self.live.get(parent.seq, ())) >= spec.max_run

    # -- what happens to subjobs ------------------------------------------------------
    def subjob_moved(self, rec: JobRecord) -> None:
        """A subjob started, ended or went back to its queue: its letter, the array's state,
        and the next subjob if one ended."""
        seq, index = split_key(rec.seq)
        parent = self.arrays.get(seq)
        if parent is None or parent.array is None:
            return
        spec = parent.array
        pos = spec.position(index)
        if pos is None:
            return
        job = rec.job
        if job.state in (JobState.RUNNING, JobState.EXITING):
            spec.set(pos, RUNNING)
            if parent.job.start < 0 or job.start < parent.job.start:
                parent.job.start = job.start
        elif job.state is JobState.FINISHED:
            spec.set(pos, EXPIRED)
            self.live.get(seq, {}).pop(pos, None)
            status = rec.exit_status
            if status is not None and status > 0:
                spec.failed = True
            elif status is not None and status < 0:
                spec.killed = True
            elif status is None and job.result.outcome != "ok":
                spec.killed = True  # an emulated subjob (no exit status) that did not end ok
        else:
            spec.set(pos, QUEUED)
        self.journal.touch(parent)
        if spec.done:
            self._finish(parent)
        elif job.state is JobState.FINISHED:
            self.fill(parent)

    def _finish(self, parent: JobRecord) -> None:
        """Every subjob has expired: the array finishes (F), as PBS's chk_array_doneness."""
        spec = parent.array
        assert spec is not None
        job = parent.job
        ran = job.start >= 0
        outcome = "ok" if ran and spec.exit_status() == 0 else "cancelled"
        transitions.array_finished(job, self.engine.now, outcome)
        # An emulated array ran no process: it has no exit status, as its subjobs have none.
        parent.exit_status = spec.exit_status() if ran and job.external else None
        parent.comment = "Job Array finished" if ran else "Job Array deleted before it ran"
        self.events.ended(parent)
        self.journal.touch(parent)
        self.live.pop(parent.seq, None)
        self._next.pop(parent.seq, None)

    # -- requests ---------------------------------------------------------------------
    def _parent_of(self, rec: JobRecord) -> JobRecord:
        parent = self.arrays.get(rec.pbs_seq)
        if parent is None:  # its array has finished: so has the subjob
            raise conflict(f"job {self.life.jid(rec)} has already finished")
        return parent

    def delete(self, caller: Caller, rec: JobRecord) -> JobRecord:
        """qdel of an array or of one subjob."""
        jid = self.life.jid(rec)
        may_act_on(caller, rec.owner, "delete", jid)
        if rec.state is JobState.FINISHED:
            raise conflict(f"job {jid} has already finished")
        if rec.array is not None:
            self._delete_array(caller, rec)
            return rec
        parent = self._parent_of(rec)
        if self.records.get(rec.seq) is rec:
            return self.life.delete_record(caller, rec)
        # Not made yet (its turn had not come): it expires, as PBS removes it from the queue.
        spec = parent.array
        assert spec is not None and rec.subjob_index is not None
        pos = spec.position(rec.subjob_index)
        assert pos is not None
        self.events.said(rec, f"Job deleted at request of {self.events.who(caller.user)}")
        self._expire_unmade(parent, [pos])
        return rec

    def _delete_array(self, caller: Caller, parent: JobRecord) -> None:
        spec = parent.array
        assert spec is not None
        seq = parent.seq
        self.events.said(parent, f"Job deleted at request of {self.events.who(caller.user)}")
        live = dict(self.live.get(seq, {}))
        queued = ord(QUEUED)
        unmade = [p for p, x in enumerate(spec.letters) if x == queued and p not in live]
        self._ending.add(seq)
        try:
            if unmade:
                self._expire_unmade(parent, unmade, finish=not live)
            for pos in sorted(live):
                self.life.delete_record(caller, live[pos])
        finally:
            self._ending.discard(seq)

    def _expire_unmade(
        self,
        parent: JobRecord,
        positions: list[int],
        finish: bool = True,
        outcome: str = "cancelled",
    ) -> None:
        """Subjobs never made leave unrun (deleted, or their reservation ended)."""
        spec = parent.array
        assert spec is not None
        for pos in positions:
            spec.set(pos, EXPIRED)
            self.life.metrics.job_left_unrun(parent.job.queue, outcome)
        self.journal.touch(parent)
        if finish and spec.done:
            self._finish(parent)

    def _whole_array(self, rec: JobRecord, what: str) -> None:
        """qhold, qrls and qalter act on arrays, never on subjobs (PBSE_IVALREQ)."""
        if rec.subjob_index is not None:
            raise bad_request(
                f"{INVALID} {self.life.jid(rec)} ({what} acts on jobs and job arrays, "
                "not on subjobs)"
            )

    def hold(self, caller: Caller, rec: JobRecord, types: str) -> JobRecord:
        self._whole_array(rec, "qhold")
        jid = self.life.jid(rec)
        may_hold(caller, rec.owner, types, "hold", jid)
        if rec.state is JobState.FINISHED:
            raise conflict(f"job {jid} is finished; only queued, waiting or held jobs can be held")
        rec.hold_types = merge_holds(rec.hold_types, types)
        transitions.array_held(rec.job)
        rec.comment = f"Job held by {caller.user}"
        self.events.said(rec, f"Holds {types} set at request of {self.events.who(caller.user)}")
        for sub in self._waiting_subjobs(rec):
            self.engine.hold(sub.job)
            sub.hold_types = merge_holds(sub.hold_types, types)
            sub.comment = rec.comment
            self.journal.touch(sub)
        self.journal.touch(rec)
        return rec

    def release(self, caller: Caller, rec: JobRecord, types: str) -> JobRecord:
        self._whole_array(rec, "qrls")
        jid = self.life.jid(rec)
        may_hold(caller, rec.owner, types, "release", jid)
        if rec.job.state is not JobState.HELD:
            raise conflict(f"job {jid} is not held")
        self.events.said(
            rec, f"Holds {types} released at request of {self.events.who(caller.user)}"
        )
        rec.hold_types = drop_holds(rec.hold_types, types)
        if not rec.hold_types:
            rec.comment = None
            waiting = rec.exec_time is not None and rec.exec_time > self.engine.now
            transitions.array_released(rec.job, waiting=waiting)
            rec.etime = self.engine.now
        self.journal.touch(rec)
        for sub in self._waiting_subjobs(rec):
            if sub.state is JobState.HELD:
                self.life.release_record(sub, types)
        self.fill(rec)
        return rec

    def alter(self, caller: Caller, rec: JobRecord, body: JobAlter) -> JobRecord:
        """qalter of an array: the array and the subjobs made so far, until one has begun."""
        self._whole_array(rec, "qalter")
        jid = self.life.jid(rec)
        spec = rec.array
        assert spec is not None
        if rec.state is JobState.FINISHED or spec.begun:
            may_act_on(caller, rec.owner, "alter", jid)
            raise conflict(
                f"{BAD_STATE} {jid} (its subjobs have begun; qalter changes arrays none of "
                "whose subjobs has run)"
            )
        self.life.alter_record(caller, rec, body, in_engine=False)  # checks everything first
        for sub in self._waiting_subjobs(rec):
            self.life.alter_record(caller, sub, body)
        return rec

    def _waiting_subjobs(self, parent: JobRecord) -> list[JobRecord]:
        live = self.live.get(parent.seq, {})
        return [live[p] for p in sorted(live) if live[p].state in PENDING_STATES]

    def reservation_closed(self, resv: Reservation, waiting: list[Job]) -> None:
        """A reservation ended or was deleted: the arrays in its queue lose their subjobs
        that never ran, made or not (its running ones were killed by the engine)."""
        why = f"Job deleted: its reservation R{resv.id} ended"
        for parent in list(self.arrays.values()):
            spec = parent.array
            if parent.job.queue != resv.queue or spec is None:
                continue
            seq = parent.seq
            live = dict(self.live.get(seq, {}))
            queued = ord(QUEUED)
            unmade = [p for p, x in enumerate(spec.letters) if x == queued and p not in live]
            self._ending.add(seq)
            try:
                self._expire_unmade(parent, unmade, finish=False, outcome="resv_end")
                for pos in sorted(live):
                    if live[pos].state in PENDING_STATES:
                        self.life.finish_unrun(live[pos], "resv_end", why)
            finally:
                self._ending.discard(seq)
            if spec.done and parent.job.state is not JobState.FINISHED:
                self._finish(parent)

    # -- what qstat says --------------------------------------------------------------
    def comment(self, rec: JobRecord) -> str | None:
        """An array's comment, or a subjob's that waits for its turn under the limit."""
        if rec.array is not None:
            if rec.state is not JobState.FINISHED and self.throttled(rec):
                running = rec.array.tally()[RUNNING]
                if running:
                    return f"{THROTTLED} ({running} of its subjobs are running)"
                return THROTTLED
            return rec.comment
        parent = self.arrays.get(rec.pbs_seq)
        if parent is not None and self.records.get(rec.seq) is None and self.throttled(parent):
            return THROTTLED
        return None

    # -- a restart --------------------------------------------------------------------
    def restore(self, parents: list[JobRecord]) -> None:
        """The saved arrays, and their subjobs restored as jobs (before any of those ends)."""
        for parent in parents:
            self.arrays[parent.seq] = parent
            self.live[parent.seq] = {}
            self._next[parent.seq] = 0
        for rec in self.records.values():
            if rec.subjob_index is None or rec.state is JobState.FINISHED:
                continue
            owner = self.arrays.get(rec.pbs_seq)
            if owner is None or owner.array is None:
                continue
            pos = owner.array.position(rec.subjob_index)
            if pos is not None:
                self.live[owner.seq][pos] = rec

    def fill_all(self) -> None:
        """After a restart: the subjobs that were made and never saved are made again."""
        for parent in list(self.arrays.values()):
            self.fill(parent)
