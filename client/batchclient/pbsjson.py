"""``qstat -f -F json``: PBS Pro's JSON form of the full display.

As PBS's qstat builds it (``src/cmds/qstat.c``): ``timestamp``, ``pbs_version``,
``pbs_server`` and ``Jobs``, an object of jobs by id, each with the attributes of
``qstat -f``; ``name.resource`` attributes nested in an object ``name``,
``Variable_List`` as an object, numbers as numbers, everything else as strings.
Tools such as Parsl's PBSProProvider read it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence

from .attrs import job_attrs
from .hints import Any
from .jobsink import JobSink
from .text import json_safe

VERSION = "batchd"
_NUMBER = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")


def value_of(text: str) -> Any:
    """A number when the text is one (as PBS parses each value), else the text."""
    return json.loads(text) if _NUMBER.match(text) else text


def job_object(job: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in job_attrs(job):
        if name == "Variable_List":
            out[name] = {k: value_of(v) for k, v in (job.get("variables") or {}).items()}
        elif name == "Job_Name":
            out[name] = value
        elif name == "array":
            out[name] = True  # PBS writes the array attribute as a JSON boolean
        elif "." in name:
            attr, _, resource = name.partition(".")
            out.setdefault(attr, {})[resource] = value_of(value)
        else:
            out[name] = value_of(value)
    return out


class PbsJsonSink(JobSink):
    """Collects the jobs and writes PBS Pro's JSON document at the end."""

    def __init__(self) -> None:
        super().__init__(full=True)
        self.jobs: dict[str, dict[str, Any]] = {}

    def add(self, jobs: Sequence[dict[str, Any]]) -> None:
        for job in jobs:
            self.jobs[job["id"]] = job_object(job)

    def finish(self, server_info: Callable[[], tuple[str, int]]) -> None:
        if self.server is None:
            self.server, self.now = server_info()
        doc: dict[str, Any] = {
            "timestamp": self.now,
            "pbs_version": VERSION,
            "pbs_server": self.server,
        }
        if self.jobs:
            doc["Jobs"] = self.jobs
        text = json.dumps(doc, indent=4, ensure_ascii=False)
        sys.stdout.write(json_safe(text) + "\n")
