"""What a policy sees, what it answers, and what it can do: the policy protocol.

A policy is handed a ``MachineView`` (now, capacity, free nodes, running jobs
with their estimated ends) whenever something happens and answers with
placements: which waiting jobs start now, on which machine, how wide. The
engine validates and allocates. A policy does no I/O and reads no clock; its
only state is its queue and plan, so it can be copied and run on copies of the
queue.

Everything a policy can do is declared here, with a default, and never
discovered with getattr: it is built from a ``BuildContext`` (machine, calendar,
seeded generator, a factory for the policies it wraps); it explains why a
waiting job does not start (``explain``), names the order in force (``order``),
reports switches and tuning to an observer that wrappers pass on (``observe``),
and may ask to be woken at times of its own (``next_wakeup``, ``expired``).
"""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeVar

from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job

if TYPE_CHECKING:
    from concurrent.futures import Future  # not at run time: it imports logging and threading

    import numpy as np

    from batchd.sched.core.forecast import Forecaster
    from batchd.sched.core.order import OrderKey
    from batchd.sched.core.outline import PlanOutline

Overflow = Literal["kill", "requeue"]
# The key under which the registry gives its name lookup (name -> spec, or ValueError) to
# the validation of a policy's parameters: a wrapper checks the name of what it wraps.
KNOWN_POLICY = "known_policy"
P = TypeVar("P", bound="Policy")
T = TypeVar("T")


class MachineView(Protocol):
    """The engine's picture of one machine at ``now``."""

    @property
    def index(self) -> int: ...
    @property
    def now(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def free(self) -> int: ...

    def running_ends(self) -> list[int]:
        """Estimated ends of running jobs, ascending (never before now + 1)."""
        ...

    def running_widths(self) -> list[int]:
        """Widths of running jobs, in the order of ``running_ends``."""
        ...

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``running_ends`` and ``running_widths`` as int64 arrays, to be read before
        the running jobs change (``running_arrays_of`` makes them from the lists)."""
        ...

    @property
    def overrun(self) -> bool:
        """True while a running job is past its estimate (only without killing)."""
        ...

    def reservations(self) -> list[tuple[int, int, int]]:
        """(start, end, width) of advance reservations not yet begun, by start."""
        ...


class Placement(NamedTuple):
    """A policy's decision: ``job`` starts now on ``machine`` with ``width`` nodes."""

    job: Job
    machine: int
    width: int


class PolicyObserver(Protocol):
    """Who wants to know when a self-tuning policy switches or tunes, or a searching
    policy has searched (the live metrics)."""

    def switched(self, old: str, new: str) -> None: ...

    def tuned(self, case: str, seconds: float) -> None: ...

    def searched(self, seconds: float, stopped: str) -> None:
        """A search of one step took ``seconds``; ``stopped``: generations or budget."""
        ...


class QuietObserver:
    """Nobody is listening (a replay)."""

    def switched(self, old: str, new: str) -> None:
        pass

    def tuned(self, case: str, seconds: float) -> None:
        pass

    def searched(self, seconds: float, stopped: str) -> None:
        pass


QUIET = QuietObserver()


class Offload(Protocol):
    """Where a policy's long computation runs off the thread that schedules.

    The daemon's is a worker thread: the event loop goes on answering requests, and the
    daemon runs a scheduling pass when the work is done (the policy then takes its
    result). A replay has none: a policy computes within its pass.
    """

    def submit(self, work: Callable[[], T]) -> Future[T]: ...


class PolicyBuilder(Protocol):
    """Builds a policy by name (the registry's ``make_policy``)."""

    def __call__(
        self, name: str, params: Mapping[str, str] | None, context: BuildContext
    ) -> Policy: ...


@dataclass(frozen=True)
class BuildContext:
    """What a policy is built for.

    ``machine`` is the index of the machine it serves and ``nodes`` its size (None: a
    policy that needs the size takes the capacity it first sees). Calendar time is
    emulated time plus ``origin``: a replayed trace counts from 0 and its header says
    when that was; the daemon's clock counts from the epoch. ``seed`` seeds ``rng``,
    the only source of randomness a policy may use. ``offload`` runs long searches off
    the daemon's event loop (None in a replay: they run in the pass). ``builder``
    builds the policies a policy wraps: the registry gives itself when it builds one.
    """

    machine: int = 0
    nodes: int | None = None
    calendar: PrimeCalendar = field(default_factory=PrimeCalendar.default)
    origin: int = 0
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)
    offload: Offload | None = None
    builder: PolicyBuilder | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.rng.seed(self.seed)

    def given(self, builder: PolicyBuilder) -> BuildContext:
        """This context with ``builder`` to build wrapped policies (itself if it has it)."""
        if self.builder is builder:
            return self
        twin = copy.copy(self)  # not dataclasses.replace: that would seed ``rng`` again
        object.__setattr__(twin, "builder", builder)
        return twin

    def build(self, name: str, params: Mapping[str, str] | None = None) -> Policy:
        """A policy that this one wraps, built for the same machine, calendar and clock."""
        if self.builder is None:
            raise ValueError(
                f"cannot build policy {name!r}: this context was given no builder "
                "(build the wrapping policy with batchd.sched.registry.make_policy)"
            )
        return self.builder(name, params, self)


class Policy(ABC):
    """A scheduling policy for one machine."""

    name: str = ""
    serves_in_order = False  # no job starts before the one ahead (FCFS without backfill)
    wakes = False  # asks the engine to wake it at times of its own (next_wakeup)
    grid_wide = False  # a grid's port: a job may be wider than the machine it arrives at
    machine = 0  # the index of the machine it serves (its placements name it)
    observer: PolicyObserver = QUIET
    _forecaster: Forecaster | None = None

    # -- events -----------------------------------------------------------------
    @abstractmethod
    def job_submitted(self, view: MachineView, job: Job) -> None:
        """A job joined the waiting queue."""

    def job_ended(self, view: MachineView, job: Job) -> None:  # noqa: B027
        """A running job ended (completed or killed)."""

    def job_resumed(self, view: MachineView, job: Job) -> None:  # noqa: B027
        """A job that was running before a restart runs on (same nodes, same start)."""

    @abstractmethod
    def withdraw(self, view: MachineView, job: Job) -> None:
        """A waiting job leaves the queue without starting (deleted or held)."""

    def invalidate(self) -> None:  # noqa: B027
        """The machine changed shape (nodes, reservations): plans must be made again."""

    # -- decisions --------------------------------------------------------------
    @abstractmethod
    def schedule(self, view: MachineView) -> list[Placement]:
        """The waiting jobs to start now; they leave the queue."""

    def place(self, job: Job) -> Placement:
        """A rigid job on this policy's machine at its requested width."""
        return Placement(job, self.machine, job.width)

    def place_all(self, jobs: list[Job]) -> list[Placement]:
        """Rigid jobs on this policy's machine at their requested widths."""
        if not jobs:
            return []
        # tuple.__new__ in C, not Placement's generated __new__: once per started job.
        new, machine = tuple.__new__, self.machine
        return [new(Placement, (job, machine, job.width)) for job in jobs]

    @abstractmethod
    def waiting(self) -> list[Job]:
        """The waiting jobs in the order the policy serves them."""

    def head(self) -> Job | None:
        """The first waiting job in the policy's order (None: none waits)."""
        jobs = self.waiting()
        return jobs[0] if jobs else None

    def planned_width(self, job: Job) -> int:
        """The width a waiting job is planned to start with (a moldable policy's choice)."""
        return job.width

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        """Every waiting job with its planned start (NEVER: it cannot fit).

        Policies that keep no full plan answer with a full plan of their queue in
        their order: the estimate ``qstat -T`` shows.
        """
        jobs = self.waiting()
        return list(zip(jobs, self._forecast().plan(view, jobs), strict=True))

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        """The planned start of one waiting job, exactly as ``planned_starts`` gives it
        (NEVER: it cannot fit, or it does not wait here), where the policy can tell it
        without planning its whole queue; None where it cannot (ask ``planned_starts``)."""
        return None

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        """The outline of ``planned_starts`` (its head and extent), exactly as a walk of
        it gives it, where the policy can tell it without planning or walking its whole
        queue; None where it cannot (walk ``planned_starts``)."""
        return None

    def _forecast(self) -> Forecaster:
        from batchd.sched.core.forecast import Forecaster

        if self._forecaster is None:
            self._forecaster = Forecaster(in_order=self.serves_in_order)
        return self._forecaster

    # -- what it tells ----------------------------------------------------------
    def explain(self, job: Job, now: int) -> str | None:
        """Why a waiting job cannot start now for a reason of the policy's own, or None."""
        return None

    def order(self) -> str:
        """The name of the queue order in force, as the policy's metrics and listings show it:
        FCFS, SJF or LJF for the backfilling families (a self-tuning policy's current one),
        others name their own (GA, PRIO-FIFO, ...)."""
        return self.name.split("-")[0].upper()

    def observe(self, observer: PolicyObserver) -> None:
        """Report switches and tuning to ``observer``; wrappers pass it on."""
        self.observer = observer

    def find(self, kind: type[P]) -> P | None:
        """This policy, or one it wraps, if it is a ``kind``."""
        return self if isinstance(self, kind) else None

    def deadline(self, job: Job) -> tuple[int, Overflow] | None:
        """When a running job must end because its window closes, and how (None: never)."""
        return None

    def report(self) -> dict[str, Any]:
        """Policy-specific statistics for the replay summary."""
        return {}

    # -- its own time -----------------------------------------------------------
    def next_wakeup(self, now: int) -> int | None:
        """A time after ``now`` at which the policy must be asked again (``wakes`` only)."""
        return None

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        """Running jobs to end at a wake-up: (job, "kill" or "requeue")."""
        return []


class WrappingPolicy(Policy):
    """A policy in front of another (``inner``): it keeps some jobs back by a rule of its
    own and leaves the rest to the inner policy, whose order and widths are its own."""

    inner: Policy

    def order(self) -> str:
        return self.inner.order()

    def planned_width(self, job: Job) -> int:
        return self.inner.planned_width(job)

    def observe(self, observer: PolicyObserver) -> None:
        self.observer = observer
        self.inner.observe(observer)

    def find(self, kind: type[P]) -> P | None:
        return self if isinstance(self, kind) else self.inner.find(kind)


class OrderedPolicy(Policy):
    """A policy whose waiting jobs are one queue sorted by an order key (no plan)."""

    def __init__(self, name: str, key: OrderKey) -> None:
        from batchd.sched.core.order import OrderedQueue

        self.name = name
        self.queue = OrderedQueue(key)

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.queue.insert(job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)

    def waiting(self) -> list[Job]:
        return list(self.queue.jobs)

    def head(self) -> Job | None:
        return self.queue.jobs[0] if self.queue.jobs else None

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        jobs = self.queue.jobs
        return list(zip(jobs, self._forecast().plan_queue(view, self.queue), strict=True))

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        return self._forecast().start_of(view, self.queue, job)

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        return self._forecast().outline_queue(view, self.queue)
