"""What every Slurm command shares: Slurm's error line (``sbatch: error: ...``), its exit
codes, and an argument parser whose refusals are worded as Slurm words them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .. import cli
from ..cli import terminal_columns
from ..hints import Any, NoReturn
from ..text import escape

EXIT_ERROR = 1  # Slurm's commands exit 1 on any error


class SlurmError(cli.UsageError):
    """A refusal: printed as ``PROG: error: MESSAGE``, exit 1, nothing sent."""


class SlurmParser(argparse.ArgumentParser):
    """argparse whose errors are Slurm's one-line refusals (exit 1), not argparse's usage."""

    def __init__(
        self,
        prog: str,
        usage: str | None = None,
        help_flags: tuple[str, ...] = ("--help", "-h"),
        **kwargs: Any,
    ) -> None:
        width = terminal_columns() - 2
        super().__init__(
            prog=prog,
            usage=usage,
            add_help=False,
            allow_abbrev=True,  # as getopt_long: an unambiguous prefix of a long option
            formatter_class=lambda prog: argparse.HelpFormatter(prog, width=width),
            **kwargs,
        )
        # squeue and sinfo take -h for --noheader: they ask for --help alone.
        self.add_argument(*help_flags, action="help", help="show this help and exit")

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            option = message.removeprefix("unrecognized arguments: ").split()[0]
            raise SlurmError(f"unrecognized option '{option}'")
        raise SlurmError(message)


def say_error(prog: str, message: str) -> None:
    text = escape(" ".join(str(message).split("\n")))
    sys.stderr.write(f"{prog}: error: {text}\n")


def run(prog: str, body: Callable[[list[str]], int], argv: Sequence[str] | None) -> int:
    """Run a command's body; every failure ends in one ``PROG: error:`` line and exit 1."""
    return cli.run(prog, body, argv, tell=say_error, usage=EXIT_ERROR, refused=EXIT_ERROR)
