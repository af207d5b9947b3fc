"""Jobs that run for real: launched once their start is saved, their ends taken as events.

On a machine whose executor is ``local`` a submitted job is external: the engine
starts it as any other job and never ends it by itself. This part turns the
engine's decisions into the executor's work and the executor's reports into the
engine's transitions, in the order that keeps the state file true:

- a start is launched only after the commit that saved it, so that a start undone
  (its commit failed) or lost (the daemon died first) never ran: after a restart a
  job the state file says runs, but that no supervisor ever held, goes back to its
  queue;
- a stop or a signal (qdel, qsig, qrerun, a window or reservation closing, a node
  going down) is sent after the commit that saved the request;
- an end is applied when the daemon catches up (before the clock's events), and the
  job's spool directory is removed only after the commit that saved the end, so that
  a daemon dying in between finds the end again.

The executor lives as long as the daemon; this part is made again with the others
when a failed commit is undone, and forgets what that change asked for.
"""

from __future__ import annotations

import time

import structlog

from batchd.engine.core import Engine
from batchd.execution.account import AccountError, account, check_runnable
from batchd.execution.codes import JOB_EXEC_FAILUID
from batchd.execution.local import NEVER, RUNNING, Ended, LocalExecutor
from batchd.execution.spec import FAILED, EndReport, LaunchSpec
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.server import launchspec
from batchd.server.records import JobRecord
from batchd.server.service.journal import Journal
from batchd.server.service.lifecycle import Lifecycle

log = structlog.get_logger("batchd")


def spool_key(rec: JobRecord) -> str:
    return str(rec.seq)


class Runs:
    def __init__(self, lifecycle: Lifecycle, journal: Journal, executor: LocalExecutor) -> None:
        self.life = lifecycle
        self.engine: Engine = lifecycle.engine
        self.records = lifecycle.records
        self.executor = executor
        self.cpus = launchspec.allowed_cpus()
        self._launch: list[LaunchSpec] = []
        # (key, signal, which processes: all, steps, script); signal None: stop
        self._requests: list[tuple[str, int | None, str]] = []
        self._forget: list[str] = []
        self._failed: list[Ended] = []  # started, but no process could be launched
        self.engine.on_start.append(self.started)
        self.engine.on_stop.append(self.stopping)
        journal.on_saved.append(self.saved)
        lifecycle.runs = self

    # -- from the engine ----------------------------------------------------------------
    def started(self, job: Job) -> None:
        rec = self.records.get(job.id)
        if not job.external or rec is None or rec.job is not job:
            return
        key = spool_key(rec)
        site = self.life.site
        try:
            acct = account(rec.owner)
            check_runnable(acct, site.server.acl_roots)
            spec = launchspec.build(
                rec, acct, site, self.life.jid(rec), key, self.executor.job_cgroup(key), self.cpus
            )
        except (AccountError, ValueError) as exc:
            now = time.time()
            report = EndReport(JOB_EXEC_FAILUID, FAILED, now, now, message=str(exc))
            self._failed.append(Ended(key, report))
            return
        rec.euser, rec.egroup = acct.name, acct.group
        self._launch.append(spec)
        log.info("job_run", job=spec.job_id, user=acct.name, decided=round(time.time(), 6))

    def stopping(self, job: Job) -> None:
        rec = self.records.get(job.id)
        if rec is not None and rec.job is job:
            self._requests.append((spool_key(rec), None, "all"))

    def signal(self, rec: JobRecord, number: int, target: str = "all") -> None:
        """qsig: the signal goes to the job's processes (``target``: all, its steps, its
        script), once the request is saved."""
        self._requests.append((spool_key(rec), number, target))

    # -- after a commit -------------------------------------------------------------------
    def saved(self) -> None:
        # Ends first: a job requeued at its end may start again under the same spool key.
        forget, self._forget = self._forget, []
        for key in forget:
            self.executor.forget(key)
        launches, self._launch = self._launch, []
        for spec in launches:
            self.executor.launch(spec)
            log.info("job_launched", job=spec.job_id, at=round(time.time(), 6))
        requests, self._requests = self._requests, []
        for key, number, target in requests:
            if number is None:
                self.executor.stop(key)
            else:
                self.executor.signal(key, number, target)

    # -- ends -----------------------------------------------------------------------------
    def apply_ends(self) -> bool:
        """Take the ends the executor saw (and the launches that failed); whether any."""
        ended = self._failed + self.executor.take_ends()
        self._failed = []
        for end in ended:
            rec = self.records.get(int(end.key)) if end.key.isdigit() else None
            job = rec.job if rec is not None else None
            if rec is None or job is None or job.state not in (JobState.RUNNING, JobState.EXITING):
                log.warning("job_end_unknown", key=end.key)
            else:
                self.life.exited(rec, end.report, end.why)
            self._forget.append(end.key)
        return bool(ended)

    # -- after a restart ------------------------------------------------------------------
    def attach(self, rec: JobRecord) -> str | Ended:
        """What became of a job the state file says runs (local.LocalExecutor.attach); one
        still stopping is asked again (the request may not have been sent)."""
        found = self.executor.attach(spool_key(rec))
        if found == RUNNING and rec.state is JobState.EXITING:
            self._requests.append((spool_key(rec), None, "all"))
        if found == NEVER:
            self._forget.append(spool_key(rec))
        return found
