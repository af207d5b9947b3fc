"""The job options of sbatch, srun and salloc, and the ``#SBATCH`` lines of a script.

The options are read as Slurm reads them (src/sbatch/opt.c): from ``#SBATCH`` lines
first, then from the command line, whose options win. Each value is checked here, so
that a bad ``#SBATCH`` line is named by the script and line it is on; the translation
into batchd's request is in :mod:`.request`.
"""

from __future__ import annotations

import argparse
import shlex

from ..hints import Any
from .command import SlurmError, SlurmParser
from .values import check_values

PREFIX = "#SBATCH"

# Slurm options batchd has no counterpart for: refused by name, never ignored.
UNSUPPORTED = (
    ("-q", "--qos"), ("-C", "--constraint"), ("-w", "--nodelist"), ("-x", "--exclude"),
    ("-G", "--gpus"), ("--gres",), ("--gpus-per-node",), ("--gpus-per-task",),
    ("--reservation",), ("--mail-type",), ("--mail-user",), ("-M", "--clusters"),
    ("-L", "--licenses"), ("-i", "--input"), ("--tmp",),
    ("-s", "--oversubscribe"), ("--mincpus",), ("--mem-per-gpu",),
    ("-F", "--nodefile"), ("--switches",), ("--deadline",), ("--prefer",),
    ("-k", "--no-kill"), ("--het-group",), ("--container",), ("--uid",), ("--gid",),
)  # fmt: skip


class _Unsupported(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        raise SlurmError(f"{self.option_strings[-1]}: not supported by batchd")


def add_job_options(p: argparse.ArgumentParser) -> None:
    """What the three commands share: the job's name, size, limits, place and environment."""
    add = p.add_argument
    add("-J", "--job-name", dest="job_name", metavar="NAME", help="the job's name")
    add("-N", "--nodes", dest="nodes", metavar="N[-MAX]",
        help="nodes (MIN-MAX: a moldable job, the scheduler chooses the width)")  # fmt: skip
    add("-n", "--ntasks", dest="ntasks", metavar="N", help="tasks (default 1 per node)")
    add("--ntasks-per-node", dest="ntasks_per_node", metavar="N", help="tasks on each node")
    add("-c", "--cpus-per-task", dest="cpus_per_task", metavar="N", help="CPUs of each task")
    add("--mem", dest="mem", metavar="SIZE[K|M|G|T]", help="memory per node (MB by default)")
    add("--mem-per-cpu", dest="mem_per_cpu", metavar="SIZE[K|M|G|T]", help="memory per CPU")
    add("-t", "--time", dest="time", metavar="TIME",
        help="time limit: MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN, D-H:MIN:SEC or UNLIMITED")  # fmt: skip
    add("-p", "--partition", dest="partition", metavar="PARTITION", help="the queue")
    add("-A", "--account", dest="account", metavar="ACCOUNT", help="the account charged")
    add("--exclusive", dest="exclusive", nargs="?", const="exclusive", metavar="user|mcs",
        help="the job's nodes are its own")  # fmt: skip
    add("-D", "--chdir", dest="chdir", metavar="DIR",
        help="the job's working directory (default: the current directory)")  # fmt: skip
    add("--export", dest="export", metavar="ALL|NONE|[ALL,]VAR[=VAL],...",
        help="the environment the job gets (default ALL)")  # fmt: skip
    add("-d", "--dependency", dest="dependency", metavar="TYPE:ID[:ID],...",
        help="after, afterok, afternotok, afterany (ID or ID_TASK), singleton")  # fmt: skip
    add("-H", "--hold", dest="hold", action="store_true", default=None, help="submit held")
    add("--begin", dest="begin", metavar="TIME", help="not before TIME (now+1hour, 16:00, ...)")
    add("--nice", dest="nice", nargs="?", const="100", metavar="N",
        help="lower the job's priority by N (default 100)")  # fmt: skip
    add("--requeue", dest="requeue", action="store_true", default=None,
        help="the job may be requeued (the default)")  # fmt: skip
    add("--no-requeue", dest="requeue", action="store_false", help="never requeue the job")
    for flags in UNSUPPORTED:
        p.add_argument(*flags, nargs="?", action=_Unsupported, help=argparse.SUPPRESS)


def add_batch_options(p: argparse.ArgumentParser) -> None:
    """sbatch's own: output files, arrays, --wrap, --wait, --parsable, --test-only."""
    add = p.add_argument
    add("-o", "--output", dest="output", metavar="PATTERN",
        help="standard output (%%j %%x %%A %%a %%u %%N expanded; default slurm-%%j.out)")  # fmt: skip
    add("-e", "--error", dest="error", metavar="PATTERN",
        help="standard error (default: into the output)")  # fmt: skip
    add("-a", "--array", dest="array", metavar="A-B[:S][%M]",
        help="a job array: indices A to B by S, at most M running")  # fmt: skip
    add("--wrap", dest="wrap", metavar="COMMAND", help="run COMMAND under /bin/sh: no script")
    add("-W", "--wait", dest="wait", action="store_true", default=None,
        help="wait for the job to end and exit with its exit code")  # fmt: skip
    add("--parsable", dest="parsable", action="store_true", default=None,
        help="print only the job id")  # fmt: skip
    add("--test-only", dest="test_only", action="store_true", default=None,
        help="say when the job would start; submit nothing")  # fmt: skip
    add("--signal", dest="signal", metavar="[B:]SIG[@SECONDS]",
        help="send SIG SECONDS (default 60) before the time limit: to the job's steps, "
        "or with B: to the script alone")  # fmt: skip
    add("--open-mode", dest="open_mode", metavar="append|truncate",
        help="append to the output and error files instead of truncating them")  # fmt: skip
    add("--comment", dest="comment", metavar="TEXT",
        help="a comment kept with the job (squeue %%k, sacct Comment, scontrol)")  # fmt: skip
    add("--wckey", dest="wckey", metavar="KEY",
        help="a workload characterization key: accepted, kept nowhere (no accounting)")  # fmt: skip


def sbatch_parser(prog: str = "sbatch", script: bool = True) -> SlurmParser:
    usage = f"{prog} [OPTIONS...] [script [ARGS...]]"
    p = SlurmParser(prog, usage=usage, description="Submit a batch script to batchd.")
    add_job_options(p)
    add_batch_options(p)
    if script:
        p.add_argument("script", nargs="?", help="the job script (default: stdin)")
        p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def merge(base: argparse.Namespace, top: argparse.Namespace) -> argparse.Namespace:
    """``top`` (a later line, or the command line) over ``base``: the values it sets win."""
    out = argparse.Namespace(**vars(base))
    for one, other in (("mem", "mem_per_cpu"), ("mem_per_cpu", "mem")):
        if getattr(top, one, None) is not None:  # the two are one request: the later wins
            setattr(out, other, None)
    for key, value in vars(top).items():
        if value is not None:
            setattr(out, key, value)
    return out


def directive_lines(script: str) -> list[tuple[int, list[str]]]:
    """``(line number, words)`` of each ``#SBATCH`` line: those before the first line (after
    the ``#!`` one) that is neither blank nor a comment; ``#`` after the options starts a
    comment. ValueError naming the line for unbalanced quotes."""
    found: list[tuple[int, list[str]]] = []
    for number, line in enumerate(script.splitlines(), start=1):
        text = line.strip()
        if number == 1 and text.startswith("#!"):
            continue
        if not text:
            continue
        if not text.startswith("#"):
            break
        rest = text[len(PREFIX) :]
        if not text.startswith(PREFIX) or (rest and not rest[0].isspace()):
            continue
        lexer = shlex.shlex(rest, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError as exc:
            raise ValueError(f"line {number}: {text}: {exc}") from None
        if words:
            found.append((number, words))
    return found


def read_options(
    cli: argparse.Namespace, script: str | None, source: str, prog: str = "sbatch"
) -> argparse.Namespace:
    """The command line's options over those of the script's ``#SBATCH`` lines, each
    line checked on its own (an error names ``source:LINE``)."""
    dparser = sbatch_parser(prog, script=False)
    merged = dparser.parse_args([])
    if script is not None:
        try:
            lines = directive_lines(script)
        except ValueError as exc:
            raise SlurmError(f"{source}: {exc}") from None
        for number, words in lines:
            try:
                ns = dparser.parse_args(words)
                check_values(ns)
            except (SlurmError, ValueError) as exc:
                raise SlurmError(f"{source}:{number}: {PREFIX} {' '.join(words)}: {exc}") from None
            merged = merge(merged, ns)
    try:
        check_values(cli)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    own = argparse.Namespace(**{k: v for k, v in vars(cli).items() if k not in ("script", "args")})
    return merge(merged, own)
