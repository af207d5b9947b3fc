"""qmgr's ``create``, ``set`` and ``delete queue``: PBS attribute names to the API's fields,
and the daemon's refusals as qmgr prints them::

    qmgr obj=big svr=default: Unknown queue big
    qmgr: Error (15018) returned from server
"""

from __future__ import annotations

from .hints import Any
from .timefmt import parse_duration

# The daemon's error codes as PBS's error numbers (pbs_error.h).
PBS_ERRNO = {
    "unknown_queue": 15018,  # PBSE_UNKQUE
    "not_found": 15018,
    "queue_exists": 15025,  # PBSE_QUEEXIST
    "queue_busy": 15027,  # PBSE_OBJBUSY
    "bad_value": 15014,  # PBSE_BADATVAL
    "bad_request": 15014,
    "forbidden": 15007,  # PBSE_PERM
    "unknown_attribute": 15002,  # PBSE_NOATTR
}
BOOLS = {"true": True, "t": True, "y": True, "1": True, "false": False, "f": False, "n": False,
         "0": False}  # fmt: skip
ATTRS = {
    "enabled": "enabled",
    "started": "started",
    "resources_max.nodect": "max_nodes",
    "max_nodes": "max_nodes",
    "resources_max.walltime": "max_walltime",
    "resources_default.walltime": "default_walltime",
    "window": "window",
    "machine": "machine",
    "max_run": "max_run",
    "max_running": "max_run",  # Torque's and old PBS's name
    "max_user_run": "max_user_run",
    "max_queued": "max_queued",
    "max_queuable": "max_queued",  # Torque's name
    "max_user_queued": "max_user_queued",
    "max_user_queuable": "max_user_queued",  # Torque's name
}
LIMIT_FIELDS = ("max_run", "max_user_run", "max_queued", "max_user_queued")
KNOWN = ", ".join(["queue_type", *ATTRS])


class QmgrServerError(Exception):
    """A refusal, printed as qmgr prints the server's: two lines on stderr."""

    def __init__(self, obj: str, message: str, errno: int) -> None:
        super().__init__(message)
        self.obj = obj
        self.message = message
        self.errno = errno

    def lines(self) -> list[str]:
        return [
            f"qmgr obj={self.obj} svr=default: {self.message}",
            f"qmgr: Error ({self.errno}) returned from server",
        ]


def queue_fields(obj: str, attrs: list[tuple[str, str, str]]) -> dict[str, Any]:
    """``resources_max.walltime = 01:00:00, enabled = True`` -> the API's fields."""
    out: dict[str, Any] = {}
    for attr, _, value in attrs:
        if attr == "queue_type":
            if value.lower() not in ("e", "execution"):
                raise QmgrServerError(
                    obj, f"queue_type = {value}: batchd has execution queues only", 15014
                )
            continue
        field = ATTRS.get(attr)
        if field is None:
            raise QmgrServerError(
                obj, f"Undefined attribute {attr} (batchd's queues have {KNOWN})", 15002
            )
        out[field] = _value(obj, attr, field, value)
    return out


def limit_value(obj: str, attr: str, value: str) -> int:
    """A run or queued limit: a count of jobs, 0 or more."""
    if not value.isdigit():
        raise QmgrServerError(
            obj, f"Illegal attribute or resource value {attr} = {value}: give a number of jobs",
            15014,
        )  # fmt: skip
    return int(value)


def _value(obj: str, attr: str, field: str, value: str) -> Any:
    if field in ("enabled", "started"):
        flag = BOOLS.get(value.lower())
        if flag is None:
            raise QmgrServerError(
                obj, f"Illegal attribute or resource value {attr} = {value}", 15014
            )
        return flag
    if field == "max_nodes":
        if not value.isdigit() or int(value) < 1:
            raise QmgrServerError(
                obj, f"Illegal attribute or resource value {attr} = {value}", 15014
            )
        return int(value)
    if field in LIMIT_FIELDS:
        return limit_value(obj, attr, value)
    if field in ("max_walltime", "default_walltime"):
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise QmgrServerError(
                obj, f"Illegal attribute or resource value {attr} = {value}: {exc}", 15014
            ) from None
    return value
