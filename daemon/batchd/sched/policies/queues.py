"""Queue windows and stopped queues as window classes: the gate a site puts around its policy.

A job of a queue with a window (``[[queue]] window``) runs only while the window
is open and, with ``must_fit``, only if its walltime ends by the close; a job of a
stopped queue (``started = false``) waits until the queue is started. Both the
daemon and ``batchd replay`` wrap the site's policy in this gate, so a site file
gives the same schedule in both. How the waits are told is what ``qstat -f``
shows after ``Not Running:``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job
from batchd.model.times import hms
from batchd.model.windows import Stopped, TimeWindow, make_window
from batchd.sched.core.policy import Overflow, Policy
from batchd.sched.policies.gate import Classify, WindowClass, WindowGate, shifted


@dataclass(frozen=True)
class QueueSpec:
    """What the gate needs of a queue: its name, its window setting, whether it is started."""

    name: str
    window: str | list[str] = "any"
    started: bool = True

    @property
    def gated(self) -> bool:
        return not self.started or self.window != "any"


class QueueClass(WindowClass):
    """The jobs of one windowed or stopped queue."""

    def __init__(self, name: str, window: TimeWindow, tz: dt.tzinfo, origin: int) -> None:
        self.name = name
        self.window = window
        self.tz = tz
        self.origin = origin

    def stamp(self, t: int) -> str:
        """A time as the windows are written: local time of the calendar's zone."""
        local = dt.datetime.fromtimestamp(t + self.origin, self.tz)
        return local.strftime("%Y-%m-%d %H:%M:%S")

    def closed(self, opens: int | None) -> str:
        if isinstance(self.window, Stopped):
            return f"queue {self.name} is stopped"
        if opens is None:
            return f"queue {self.name} is closed ({self.window.text}) and does not open"
        return f"queue {self.name} is closed ({self.window.text}), opens at {self.stamp(opens)}"

    def unfit(self, job: Job, closes: int) -> str:
        return (
            f"walltime {hms(job.estimate)} does not fit before queue {self.name} "
            f"closes at {self.stamp(closes)}"
        )


def queue_classes(
    queues: Sequence[QueueSpec], calendar: PrimeCalendar, origin: int = 0
) -> Classify:
    """Class each job by its queue; jobs of queues open at all times have none."""
    classes: dict[str, QueueClass] = {}
    for q in queues:
        if not q.started:
            classes[q.name] = QueueClass(q.name, Stopped(), calendar.tz, origin)
        elif q.window != "any":
            window = shifted(make_window(q.window, calendar), origin)
            classes[q.name] = QueueClass(q.name, window, calendar.tz, origin)

    def classify(job: Job) -> WindowClass | None:
        return classes.get(job.queue)

    return classify


def queue_gate(
    inner: Policy,
    queues: Sequence[QueueSpec],
    calendar: PrimeCalendar,
    *,
    origin: int = 0,
    overflow: Overflow = "kill",
    must_fit: bool = True,
) -> WindowGate:
    """``inner`` behind the site's queue windows (it passes everything when none is gated)."""
    return WindowGate(
        inner.name,
        inner,
        queue_classes(queues, calendar, origin),
        overflow=overflow,
        must_fit=must_fit,
    )
