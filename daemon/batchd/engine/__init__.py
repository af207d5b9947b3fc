"""The event core and its clocks."""

from batchd.engine.clock import Clock, RealClock, ScaledClock, VirtualClock
from batchd.engine.core import Engine, MachineState, StuckJobsError

__all__ = [
    "Clock",
    "Engine",
    "MachineState",
    "RealClock",
    "ScaledClock",
    "StuckJobsError",
    "VirtualClock",
]
