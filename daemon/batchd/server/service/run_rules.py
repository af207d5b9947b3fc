"""The rules of a job that runs for real: at submission, when it changes machine, at its end.

A job submitted to a machine whose executor is ``local`` runs its script on this host
as its owner, so the submission is refused (nothing changes) when it cannot: another
user submitting for the owner, an owner without an account here or that this daemon
may not run (root without ``acl_roots``; anyone but the daemon's own user when the
daemon is not root), an emulated runtime (BATCHD_RUNTIME) or a moldable range (both
emulation only), an output path on another host, a bad shell list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.execution.account import AccountError, account, check_runnable
from batchd.execution.codes import JOB_EXEC_FAIL2
from batchd.execution.spec import EXITED, FAILED, MEM, STOPPED, WALLTIME, EndReport
from batchd.server.errors import bad_request, forbidden
from batchd.server.outputs import output_path, pick_shell, this_host
from batchd.server.records import JobRecord
from batchd.server.slurm_paths import job_path

if TYPE_CHECKING:
    from batchd.server.schemas import JobSubmit
    from batchd.site.config import SiteConfig

RUNTIME_VAR = "BATCHD_RUNTIME"


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def check_runs_here(rec: JobRecord, site: SiteConfig, machine: int, moldable: bool) -> str:
    """Refuse a job that cannot run as its owner on ``machine`` (``moldable``: it has, or
    would have, a range of widths); its home directory."""
    name = site.machine[machine].name
    if RUNTIME_VAR in rec.variables:
        raise bad_request(
            f"{RUNTIME_VAR}: machine {name} runs job scripts for real; an emulated runtime "
            "does not apply there (leave it out)"
        )
    if moldable:
        raise bad_request(
            f"-l nodes=MIN-MAX: machine {name} runs job scripts for real; moldable jobs are "
            "emulated only"
        )
    try:
        acct = account(rec.owner)
        check_runnable(acct, site.server.acl_roots)
    except AccountError as exc:
        raise forbidden(f"machine {name} runs jobs as their owner: {exc}") from None
    return acct.home


def run_for_real(rec: JobRecord, body: JobSubmit, site: SiteConfig, submitter: str) -> None:
    """A new job of an executing machine: checked, and given its output paths and shell."""
    job = rec.job
    if submitter != rec.owner:
        raise forbidden(
            f"{submitter} may not submit a job as {rec.owner} to machine "
            f"{site.machine[job.machine].name}: its jobs run as their owner"
        )
    home = check_runs_here(rec, site, job.machine, job.mold is not None)
    array = body.array_indices is not None
    if rec.front_end == "slurm":
        rec.workdir = rec.workdir or home
        slurm_outputs(rec, body.output_path, body.error_path, array)
        rec.shell = body.shell
        job.external = True
        job.runtime = job.estimate
        return
    workdir = rec.variables.get("PBS_O_WORKDIR") or home
    if not workdir.startswith("/"):
        raise bad_request(f"PBS_O_WORKDIR={workdir!r}: give an absolute path")
    try:
        rec.output_path = output_path(body.output_path, "o", job.name, rec.seq, array, workdir)
        rec.error_path = output_path(body.error_path, "e", job.name, rec.seq, array, workdir)
        if body.shell is not None:
            pick_shell(body.shell)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    rec.join = body.join_path or "n"
    rec.shell = body.shell
    rec.variables.setdefault("PBS_O_HOST", this_host())
    job.external = True
    job.runtime = job.estimate  # unknown until it ends: plans use the walltime


def slurm_outputs(rec: JobRecord, output: str | None, error: str | None, array: bool) -> None:
    """A job from sbatch: its output and error paths, patterns kept (expanded at its
    start), relative ones in its working directory; its error joined into its output
    unless given apart, as sbatch does."""
    workdir = rec.workdir or "/"
    host = this_host()
    out = job_path(output, workdir, array)
    rec.output_path = f"{host}:{out}"
    if error is None:
        rec.error_path, rec.join = rec.output_path, "oe"
    else:
        rec.error_path, rec.join = f"{host}:{job_path(error, workdir, array)}", "n"


def moved(rec: JobRecord, site: SiteConfig, machine: int) -> None:
    """A waiting job altered or moved onto ``machine``: it runs for real there or is
    emulated (checked before anything changes: call ``check_move`` first)."""
    job = rec.job
    if not site.machine[machine].executes:
        job.external = False
        job.runtime = rec.runtime_given if rec.runtime_given is not None else job.estimate
        return
    job.external = True
    job.runtime = job.estimate
    if rec.output_path is None and rec.front_end == "slurm":
        rec.workdir = rec.workdir or account(rec.owner).home
        slurm_outputs(rec, None, None, rec.array is not None)
    elif rec.output_path is None:
        workdir = rec.variables.get("PBS_O_WORKDIR") or account(rec.owner).home
        seq, array = rec.pbs_seq, rec.array is not None
        rec.output_path = output_path(None, "o", job.name, seq, array, workdir)
        rec.error_path = output_path(None, "e", job.name, seq, array, workdir)
        rec.variables.setdefault("PBS_O_HOST", this_host())


def check_move(rec: JobRecord, site: SiteConfig, machine: int, moldable: bool) -> None:
    if site.machine[machine].executes:
        check_runs_here(rec, site, machine, moldable)


Ending = tuple[str, tuple[str, str] | None, str | None]


def ended_outcome(rec: JobRecord, report: EndReport | None, why: str, node_fail: str) -> Ending:
    """How a job whose processes ended goes on: (its outcome, (reason, words) when it goes
    back to its queue instead, its comment if not the usual one). A job that finishes has
    its Exit_status and resources_used set on the record; one that goes back has neither.

    It goes back when it was being stopped to (the first request's reason stands), or when
    its supervisor was lost (``report`` None) and node_fail is requeue, unless it was being
    stopped to end (deleted, say): that stands too."""
    lost = f"its supervisor was lost ({why})"
    outcome, comment = _finished(rec, report, lost)
    stopping = rec.job.result.stopping
    back: tuple[str, str] | None = None
    if stopping == "requeue":
        back = rec.requeue_why or ("rerun", "requeued")
    elif report is None and node_fail == "requeue" and rec.rerunable and stopping != "end":
        back = ("node_fail", lost)
    if back is not None:
        rec.requeue_why = None
        rec.exit_status = rec.used = rec.term_signal = None  # it runs again
    return outcome, back, comment


def _finished(rec: JobRecord, report: EndReport | None, lost: str) -> tuple[str, str | None]:
    """The outcome and comment of a job whose processes ended, its Exit_status and
    resources_used set on the record."""
    job = rec.job
    if report is None:
        rec.exit_status = JOB_EXEC_FAIL2
        return "node_fail", f"Job killed: {lost}"
    rec.exit_status = report.status
    rec.term_signal = report.signal or None
    rec.used = {
        "walltime": max(report.end - report.start, 0.0),
        "cput": report.cput,
        "mem": float(report.mem),
        "vmem": float(report.vmem),
    }
    job.runtime = max(int(report.end - report.start), 0)
    if report.reason == FAILED:
        return "failed", f"Job could not start: {_printable(report.message)}"
    if report.reason == WALLTIME:
        return "walltime", f"Job killed: {_printable(report.message)}"
    if report.reason == MEM:
        return "mem", f"Job killed: {_printable(report.message)}"
    if report.reason == STOPPED:
        return job.result.outcome or "cancelled", None
    assert report.reason == EXITED
    if report.status == 0:
        return "ok", None
    return "failed", f"Job run and finished with exit status {report.status}"
