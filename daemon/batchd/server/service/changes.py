"""One change of state: caught up and saved first, then the change, one scheduling
pass and one commit (``BatchService`` is one ``Changes``).

A request first finds the engine caught up with the clock and committed
(``catch_up``, which the app's middleware calls for every request), so what it reads
has been saved. An operation (``service.operations``) makes its change inside
``change``. When the state file takes no writes (a full disk, an I/O error), reads
and the scheduling loop go on and their records wait in the store for a retry; a
change is refused with 503 before it starts, and one whose own commit fails is
undone: the parts are built again from the state file, as at a restart, so that
nothing of it is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import structlog

from batchd.model.times import CLOCK_MAX
from batchd.server.errors import ApiError, unavailable
from batchd.server.store import SaveError, StoreError

if TYPE_CHECKING:
    from batchd.engine.clock import Clock
    from batchd.engine.core import Engine
    from batchd.metrics.live import LiveMetrics
    from batchd.server.service.history import History
    from batchd.server.service.journal import Journal
    from batchd.server.service.runs import Runs
    from batchd.server.service.saving import SaveStatus
    from batchd.server.service.scheduler import Scheduler
    from batchd.server.service.searches import SearchWorker
    from batchd.server.store import Saved, Store

log = structlog.get_logger("batchd")


def not_saved(cause: str) -> ApiError:
    return unavailable(
        f"the state could not be saved: {cause}; nothing was changed, try again later"
    )


class Changes:
    """The engine kept at the clock's now, its records committed, and each change made
    whole or not at all."""

    clock: Clock
    engine: Engine
    metrics: LiveMetrics
    scheduler: Scheduler
    runs: Runs | None
    searches: SearchWorker
    journal: Journal
    history: History
    saving: SaveStatus
    store: Store
    replay: Any
    lost: str | None
    on_lost: list[Callable[[], None]]

    if TYPE_CHECKING:

        @property
        def now(self) -> int: ...

        def _build(self, now: int) -> None: ...

        def restore(self, saved: Saved) -> None: ...

    def sync(self) -> None:
        """Process every event up to the clock's now (each event second has its pass),
        then the ends of jobs that ran for real (and a pass), then the pass a finished
        search asks for. The engine stops at the clock's last date: past it, the
        scheduling loop stops the daemon, and nothing beyond it is ever saved."""
        now = min(self.clock.now(), CLOCK_MAX)
        nxt = self.engine.next_event_time()
        due = nxt is not None and nxt <= now
        if now > self.engine.now or due:
            self.metrics.timed(lambda: self.engine.advance_to(now))
            if due:
                self.scheduler.changed()
            else:
                self.scheduler.clock_moved(now)
        if self.runs is not None and self.runs.apply_ends():
            self._pass()  # what ended for real gives its nodes to the queue now
        if self.searches.take_due():
            self._pass()

    def catch_up(self) -> None:
        """The engine at the clock's now, and everything that happened until then saved
        (or kept for the next try, while the state file takes no writes)."""
        if self.lost is not None:
            raise self._lost_answer()
        self.sync()
        self.save()

    def tick(self) -> None:
        """The scheduling loop's heartbeat: caught up, and the clock saved with the rest."""
        self.sync()
        self.save(clock=True)

    def save(self, *, clock: bool = False, force: bool = False) -> bool:
        """Commit what changed, unless saving fails and its retry is not due yet (or
        ``force``). A failure is logged once, and what could not be written waits for
        the next try: the clock and the jobs the loop started or ended are no request
        that could be refused. True if everything is saved."""
        write = force or self.saving.due()
        try:
            self.journal.commit(self.engine.now, clock=clock, write=write)
        except SaveError:
            return False
        if write:
            self._purge()
        return write and not self.saving.failing

    def save_clock(self) -> None:
        """Before an answer leaves: the emulated now it shows is saved, so that a restart
        after a crash never resumes the clock before a time a caller has seen. While the
        state file takes no writes it waits with the rest (a read is answered all the same)."""
        if self.journal.clock_moved(self.engine.now):
            self.save(clock=True)

    def commit(self, *, clock: bool = False) -> None:
        """Commit what changed (``SaveError`` if it could not be written); then the
        history forgets what ended over its duration ago (on the emulated clock)."""
        self.journal.commit(self.engine.now, clock=clock)
        self._purge()

    def _purge(self) -> None:
        with contextlib.suppress(SaveError):  # tried again at the next commit
            self.history.purge(self.engine.now)

    def _pass(self) -> None:
        """What a change queued arrives and one scheduling pass runs."""
        self.metrics.timed(lambda: self.engine.instant(self.engine.now))
        self.scheduler.changed()

    def settle(self) -> None:
        """After a change: one scheduling pass, then save (``SaveError`` if it failed)."""
        self._pass()
        self.commit()

    @contextlib.contextmanager
    def change(self) -> Iterator[None]:
        """A change of state: caught up and saved first, then the change, then one
        scheduling pass and one commit. It is refused with 503 (nothing changed) while
        the state cannot be saved, and undone if its own commit fails."""
        self.ready()
        yield
        try:
            self.settle()
        except SaveError as exc:
            raise self._undo(exc.cause) from None

    def ready(self) -> None:
        """Before a change: everything until now saved, else 503 before anything changes."""
        if self.lost is not None:
            raise self._lost_answer()
        self.sync()
        if not self.saving.due():
            raise not_saved(self.saving.cause or "")
        try:
            self.commit()
        except SaveError as exc:
            raise not_saved(exc.cause) from None

    def _undo(self, cause: str) -> ApiError:
        """A change whose commit failed: the state goes back to the state file, which holds
        everything until the change (``ready`` saved it), as a restart would find it.
        Counters of the events the change caused are not taken back."""
        store = self.store
        assert store is not None  # without a store nothing fails to save
        try:
            saved = store.load()
        except StoreError as exc:
            self._lose(f"{cause}; reading it back: {exc}")
            return self._lost_answer()
        store.discard()
        self.metrics.tally.clear()
        self._build(self.engine.now)
        self.restore(saved)
        if self.replay is not None:
            self.replay.resume()
        log.warning("change_undone", error=cause, now=self.now)
        return not_saved(cause)

    def _lose(self, why: str) -> None:
        """The state file can be neither written nor read: nothing more is saved, so that
        a change refused with 503 can never be; the daemon stops (``on_lost``)."""
        self.lost = why
        log.error("state_lost", error=why, state=self.saving.state)
        if self.store is not None:
            self.store.discard()
        self.journal.store = None
        for fn in self.on_lost:
            fn()

    def _lost_answer(self) -> ApiError:
        return unavailable(
            f"the state file can be neither written nor read ({self.lost}); the daemon stops"
        )
