"""sbatch: submit a batch script to batchd, as Slurm's sbatch does.

The script comes from a file (its arguments after it) or stdin, or is ``--wrap``'s
command; its ``#SBATCH`` lines give options that the command line's override. Prints
``Submitted batch job 12`` (``--parsable``: ``12``), or with ``--test-only`` when and
where the job would start, submitting nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from ..hints import Any
from ..transport import Client
from .command import SlurmError, run
from .options import read_options, sbatch_parser
from .request import build_body, check_script, script_with_args
from .submit import array_exit_code, post_job, resolve, test_only, wait_job

PROG = "sbatch"


def wrap_script(command: str) -> str:
    """``--wrap``: the command as a script (src/sbatch/sbatch.c: script_wrap)."""
    return f"#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{command}\n"


def read_script(path: str | None) -> tuple[str, str, str]:
    """(script, default job name, its name in messages) from a file or stdin."""
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                return fh.read(), os.path.basename(path), path
        except OSError:
            raise SlurmError(f"Unable to open file {path}") from None
    if sys.stdin.isatty():
        raise SlurmError("no script: give a script file, pipe one on stdin, or use --wrap")
    return sys.stdin.read(), "sbatch", "stdin"


def build_request(
    argv: Sequence[str],
    script: str | None = None,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], Any]:
    """(the request before the daemon's part, the options); SlurmError for bad input.
    ``script``: the script's text instead of reading the file or stdin."""
    cli = sbatch_parser(PROG).parse_args(list(argv))
    env = os.environ if environ is None else environ
    if cli.wrap is not None:
        if cli.script is not None:
            raise SlurmError("--wrap: give a command or a script, not both")
        text, name, source = wrap_script(cli.wrap), "wrap", "--wrap"
    elif script is not None:
        text = script
        name = os.path.basename(cli.script) if cli.script else "sbatch"
        source = cli.script or "stdin"
    else:
        text, name, source = read_script(cli.script)
    try:
        check_script(text)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    opts = read_options(cli, text if cli.wrap is None else None, source, PROG)
    try:
        text = script_with_args(text, list(cli.args or []), source)
        body, skipped = build_body(opts, text, _default_name(name), cwd or os.getcwd(), env, PROG)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    if skipped:
        shown = ", ".join(repr(n) for n in sorted(skipped)[:5])
        sys.stderr.write(f"{PROG}: warning: not exported (not a name, or a control "
                         f"character in the value): {shown}\n")  # fmt: skip
    return body, opts


def _default_name(name: str) -> str:
    """A script's name as a job name batchd takes (blanks, '@' and ':' become '_')."""
    cleaned = "".join("_" if ch.isspace() or ch in "@:" else ch for ch in name)
    return cleaned[:236] or "sbatch"


def _main(argv: list[str]) -> int:
    body, opts = build_request(argv)
    client = Client()
    resolve(client, opts, body)
    if opts.test_only:
        sys.stderr.write(f"{PROG}: {test_only(client, body)}\n")
        return 0
    job = post_job(client, body)
    seq = job["seq"]
    if opts.parsable:
        sys.stdout.write(f"{seq}\n")
    else:
        sys.stdout.write(f"Submitted batch job {seq}\n")
    if not opts.wait:
        return 0
    sys.stdout.flush()
    ended = wait_job(client, job["id"])
    return array_exit_code(client, ended)


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
