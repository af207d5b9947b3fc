"""qstat's job output, written a page at a time as the pages arrive.

A listing of the whole history is read in pages; each page is printed and let go,
so qstat holds one page, not every job. Only ``-T`` (sorted by estimated start)
keeps every job's line until the end. ``-F json`` writes, piece by piece, exactly
what ``print_json`` would print for ``{"server", "now", "jobs"}``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence

from . import jobtable, widetable
from .attrs import server_of
from .hints import Any

Job = dict[str, Any]
INDENT = "    "  # a job inside {"jobs": [...]} at print_json's indent of 2


class JobSink:
    """Writes jobs in one of qstat's layouts: default, alternate (-a -T -n -s), full, JSON."""

    def __init__(
        self,
        *,
        json_out: bool = False,
        alt: bool = False,
        full: bool = False,
        est: bool = False,
        nodes: bool = False,
        comments: bool = False,
        wide: bool = False,
        one_line: bool = False,
    ) -> None:
        self.json_out = json_out
        self.alt = alt
        self.full = full
        self.est = est
        self.nodes = nodes
        self.comments = comments
        self.wide = wide  # -w
        self.one_line = one_line  # -1
        self.server: str | None = None
        self.now: int | None = None
        self.count = 0
        self._sorted: list[tuple[tuple[Any, ...], int, list[str]]] = []  # -T
        self._waiting: list[Job] = []  # -T, before the server's time is known

    def listed(self, server: str, now: int) -> None:
        """The server and its time, as a listing said them (the first one counts)."""
        if self.server is None:
            self.server, self.now = server, now

    def add(self, jobs: Sequence[Job]) -> None:
        if not jobs:
            return
        first = self.count == 0
        self.count += len(jobs)
        if self.json_out:
            items = ",".join(f"\n{INDENT}{_pretty(j)}" for j in jobs)
            _write(('{\n  "jobs": [' if first else ",") + items)
        elif self.alt and self.est:
            self._keep_sorted(jobs)
        elif self.alt:
            server = self._server_name(jobs[0])
            head = self._alt_header(server) if first else []
            _lines(head + self._rows(jobs, est=False))
        elif self.full:
            _lines(widetable.full_wide(jobs) if self.wide else jobtable.full_jobs(jobs))
        elif self.wide:
            head = widetable.WIDE_DEFAULT_HEADER if first else []
            _lines(head + [widetable.wide_default_row(j) for j in jobs])
        else:
            head = jobtable.DEFAULT_HEADER if first else []
            _lines(head + [jobtable.default_row(j) for j in jobs])

    def _alt_header(self, server: str, est: bool = False) -> list[str]:
        if self.wide:
            return widetable.wide_alt_header(server, est)
        return jobtable.alt_header(server, est)

    def _rows(self, jobs: Sequence[Job], est: bool) -> list[str]:
        now = self.now or 0
        if not (self.wide or self.one_line):
            return jobtable.alt_rows(jobs, now, est, self.nodes, self.comments)
        return widetable.rows(
            jobs,
            now,
            est=est,
            nodes=self.nodes,
            comments=self.comments,
            wide=self.wide,
            one_line=self.one_line,
        )

    def _keep_sorted(self, jobs: Sequence[Job]) -> None:
        """-T: each job's sort key and lines, made once ``now`` is known."""
        if self.now is None:
            self._waiting.extend(jobs)
            return
        for job in jobs:
            key = jobtable.est_sort_key(job, self.now)
            rows = self._rows([job], est=True)
            self._sorted.append((key, len(self._sorted), rows))

    def _server_name(self, job: Job) -> str:
        return self.server or server_of(job["id"])

    def finish(self, server_info: Callable[[], tuple[str, int]]) -> None:
        """Write what is left; ``server_info`` gives the server and its time when no
        listing did and the output needs them."""
        if self.server is None and (self.json_out or self._waiting):
            self.server, self.now = server_info()
        if self.json_out:
            close = '{\n  "jobs": []' if self.count == 0 else "\n  ]"
            now, server = json.dumps(self.now), json.dumps(self.server, ensure_ascii=False)
            _write(f'{close},\n  "now": {now},\n  "server": {server}\n}}\n')
            return
        waiting, self._waiting = self._waiting, []
        self._keep_sorted(waiting)
        if self._sorted:
            self._sorted.sort(key=lambda item: item[:2])
            head = self._alt_header(self.server or "", est=True)
            _lines(head + [line for _, _, rows in self._sorted for line in rows])


def _pretty(job: Job) -> str:
    """A job as print_json prints it inside the list: indented one level more."""
    return json.dumps(job, indent=2, sort_keys=True, ensure_ascii=False).replace(
        "\n", "\n" + INDENT
    )


def _write(text: str) -> None:
    sys.stdout.write(text)


def _lines(lines: Sequence[str]) -> None:
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
