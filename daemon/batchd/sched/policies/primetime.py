"""The prime/non-prime time scheme of Lo and Mache's prime-time paper as a policy: ``primetime``.

Jobs within the prime-time limits (``prime_nodes`` and ``prime_runtime``, by
their request) are small and may run at any time; the others are large and run
in non-prime time only, each starting only if its estimate ends before
non-prime time does (sec. 4). A job that asks for at most 15 minutes, or for at
most 3% of the nodes, is always small. Limits are absolute (nodes, a duration)
or percentages of the machine and of the weekday prime slot, as in the paper's
10%..100% sweep; 100%/100% makes every job small (one queue). Within each
class the short-term discipline is ``fcfs`` or ``easy`` (the paper's two) or
any policy of the registry. Large jobs still running when non-prime time ends
overflow: killed (the paper's assumption) or requeued.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from batchd.model.calendar import (
    NONPRIME,
    CalendarError,
    Period,
    PrimeCalendar,
    resolve_timezone,
)
from batchd.model.holidays import load_holidays
from batchd.model.job import Job
from batchd.model.times import parse_duration
from batchd.model.windows import CalendarWindow
from batchd.sched.core.policy import KNOWN_POLICY, BuildContext, MachineView
from batchd.sched.policies.gate import WindowClass, WindowGate, shifted

EXEMPT_RUNTIME = 15 * 60  # sec. 4: always small
EXEMPT_SHARE = 0.03  # sec. 4: at most 3% of the nodes is always small
DISCIPLINES = {"fcfs": "fcfs", "easy": "fcfs-easy"}
_LIMIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_limit(text: str, what: str) -> tuple[float, bool]:
    """(value, is_percent) of a limit such as "30%", "32" or "04:00:00"."""
    m = _LIMIT.match(text)
    if m is not None:
        pct = float(m.group(1))
        if not 0 < pct <= 100:
            raise ValueError(f"{what}: a percentage must be in (0, 100], got {text!r}")
        return pct, True
    if what == "prime_nodes":
        if not text.strip().isdigit() or int(text) <= 0:
            raise ValueError(f"prime_nodes: expected a node count or a percentage, got {text!r}")
        return float(int(text)), False
    try:
        seconds = parse_duration(text.strip())
    except ValueError:
        raise ValueError(
            f"prime_runtime: expected seconds, HH:MM:SS or a percentage, got {text!r}"
        ) from None
    if seconds <= 0:
        raise ValueError(f"prime_runtime: must be positive, got {text!r}")
    return float(seconds), False


class PrimeTimeParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prime_nodes: str = "100%"
    prime_runtime: str = "100%"
    discipline: str = "easy"
    overflow: Literal["kill", "requeue"] = "kill"
    calendar: str = "default"
    timezone: str | None = None
    must_fit: bool = True

    @field_validator("prime_nodes", "prime_runtime")
    @classmethod
    def _limit(cls, value: str, info: ValidationInfo) -> str:
        parse_limit(value, info.field_name or "limit")
        return value

    @field_validator("discipline")
    @classmethod
    def _discipline(cls, value: str, info: ValidationInfo) -> str:
        name = DISCIPLINES.get(value, value)
        if name == "primetime":
            raise ValueError("discipline: primetime cannot be its own discipline")
        # The registry validates with its name lookup as the context (KNOWN_POLICY);
        # without it, an unknown discipline is refused when the policy is built.
        known = (info.context or {}).get(KNOWN_POLICY)
        if known is not None:
            try:
                known(name)
            except ValueError as exc:
                raise ValueError(f"discipline: {exc} (or fcfs, easy)") from None
        return value

    @field_validator("calendar")
    @classmethod
    def _calendar(cls, value: str) -> str:
        if value != "default":
            try:
                load_holidays(value)
            except CalendarError as exc:
                raise ValueError(f"calendar: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _tz(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                resolve_timezone(value)
            except CalendarError as exc:
                raise ValueError(f"timezone: {exc}") from None
        return value

    def make_calendar(self, site: PrimeCalendar) -> PrimeCalendar:
        """The calendar it runs by: ``site`` (the site's or the default), or its own file.

        The ``timezone`` parameter wins over the site's time zone.
        """
        tz = resolve_timezone(self.timezone) if self.timezone else site.tz
        if self.calendar == "default":
            return site.with_tz(tz)
        return load_holidays(self.calendar, tz)


class NonPrimeTime(WindowClass):
    """Large jobs: they run in non-prime time of a calendar, on a clock that starts at ``origin``."""

    def __init__(self, calendar: PrimeCalendar, origin: int) -> None:
        self.calendar = calendar
        self.origin = origin
        self.window = shifted(CalendarWindow(calendar, NONPRIME), origin)

    def _stamp(self, t: int) -> str:
        local = datetime.fromtimestamp(t + self.origin, self.calendar.tz)
        return local.strftime("%Y-%m-%d %H:%M:%S %Z")

    def closed(self, opens: int | None) -> str:
        when = "never" if opens is None else f"at {self._stamp(opens)}"
        return f"it runs in {NONPRIME} time, which opens {when}"

    def unfit(self, job: Job, closes: int) -> str:
        return f"its walltime does not fit before {NONPRIME} time ends at {self._stamp(closes)}"


class PrimeTime(WindowGate):
    """Small jobs at any time, large ones in non-prime time, one discipline within each."""

    def __init__(self, params: PrimeTimeParams, context: BuildContext) -> None:
        self.calendar = params.make_calendar(context.calendar)
        self.origin = context.origin
        self.large = NonPrimeTime(self.calendar, self.origin)
        inner = context.build(DISCIPLINES.get(params.discipline, params.discipline))
        super().__init__(
            "primetime",
            inner,
            self.job_class,
            overflow=params.overflow,
            must_fit=params.must_fit,
        )
        self.params = params
        self.nodes_limit = parse_limit(params.prime_nodes, "prime_nodes")
        self.runtime_limit = parse_limit(params.prime_runtime, "prime_runtime")
        self.machine_nodes = 0
        self.max_nodes = 0
        self.max_runtime: int | None = None
        self.exempt_nodes = 0
        if context.nodes is not None:
            self.set_machine(context.nodes)

    def set_machine(self, nodes: int) -> None:
        """Resolve the percentage limits for a machine of ``nodes`` nodes."""
        self.machine_nodes = nodes
        value, pct = self.nodes_limit
        self.max_nodes = int(nodes * value / 100 + 1e-9) if pct else int(value)
        value, pct = self.runtime_limit
        slot = self.calendar.prime_slot_seconds()
        # 100% of the slot means no runtime limit at all: 100/100 is one queue.
        if pct and value >= 100:
            self.max_runtime = None
        else:
            self.max_runtime = int(slot * value / 100 + 1e-9) if pct else int(value)
        self.exempt_nodes = int(nodes * EXEMPT_SHARE + 1e-9)

    def is_small(self, job: Job) -> bool:
        if job.estimate <= EXEMPT_RUNTIME or job.width <= self.exempt_nodes:
            return True
        runtime_ok = self.max_runtime is None or job.estimate <= self.max_runtime
        return job.width <= self.max_nodes and runtime_ok

    def job_class(self, job: Job) -> WindowClass | None:
        return None if self.is_small(job) else self.large

    def is_large(self, job: Job) -> bool:
        """Whether the job is classed large (non-prime): as when it arrived, for the limits
        are fixed from the first arrival on (the gate forgets the classes of ended jobs)."""
        return self.job_class(job) is not None

    def period(self, t: int) -> tuple[Period, int | None]:
        """The calendar period at emulated time ``t`` and when it ends (emulated time)."""
        at = t + self.origin
        change = self.calendar.next_change(at)
        return self.calendar.period_at(at), None if change is None else change - self.origin

    def job_submitted(self, view: MachineView, job: Job) -> None:
        if not self.machine_nodes:
            self.set_machine(view.capacity)  # built without a machine size: the one it sees
        super().job_submitted(view, job)

    def limits(self) -> dict[str, int | None]:
        return {
            "prime_nodes": self.max_nodes,
            "prime_runtime": self.max_runtime,
            "exempt_runtime": EXEMPT_RUNTIME,
            "exempt_nodes": self.exempt_nodes,
        }
