"""What every command shares: argument parsing, exit codes, one-line errors, JSON output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

from .hints import Any, NoReturn
from .text import escape, json_safe
from .transport import ApiError, TransportError

# Exit codes (PBS exits with pbs_errno & 0xff; batchd keeps the two users test for).
EXIT_OK = 0
EXIT_REFUSED = 1  # the daemon refused (4xx), or an internal error
EXIT_USAGE = 2  # bad command line or input; also: the daemon cannot be reached
EXIT_HISTORY = 35  # PBSE_HISTJOBID: finished job asked for without -x
EXIT_UNKNOWN_JOB = 153  # PBSE_UNKJOBID: unknown job id
EXIT_BROKEN_PIPE = 141
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A bad command line or bad input: one line on stderr, exit 2, nothing sent."""


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size()`` gives it: $COLUMNS, else
    the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (ValueError, OSError):  # closed, detached, not a terminal
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit code 2 (raised, not printed)."""

    def __init__(self, prog: str, usage: str | None = None, **kwargs: Any) -> None:
        # argparse makes a help formatter at every add_argument(), and each one would
        # look up the terminal's width (importing shutil for it): look it up once here.
        width = terminal_columns() - 2
        super().__init__(
            prog=prog,
            usage=usage,
            add_help=False,
            formatter_class=lambda prog: argparse.HelpFormatter(prog, width=width),
            **kwargs,
        )
        self.add_argument("--help", action="help", help="show this help and exit")

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """``-F json`` / ``--json``: print the API's JSON instead of a table."""
    parser.add_argument("-F", dest="format", metavar="json", help="output format: json")
    parser.add_argument(
        "--json", dest="format", action="store_const", const="api", help="the API's JSON"
    )


def wants_json(fmt: str | None) -> bool:
    if fmt is None:
        return False
    if fmt == "api":  # --json
        return True
    if fmt.lower() != "json":
        raise UsageError(f"-F {fmt}: unknown format; batchd knows -F json")
    return True


def print_json(data: object) -> None:
    """Pretty and stable: two-space indent, sorted keys, lists in API order; unprintable
    characters in strings as ``\\u`` escapes, as JSON allows."""
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(json_safe(text) + "\n")


def say(prog: str, message: str) -> None:
    """One line on stderr, prefixed with the command name; unprintable characters escaped."""
    text = escape(" ".join(str(message).split("\n")))
    sys.stderr.write(f"{prog}: {text}\n")


def run(
    prog: str,
    body: Callable[[list[str]], int],
    argv: Sequence[str] | None,
    *,
    tell: Callable[[str, str], None] = say,
    usage: int = EXIT_USAGE,
    refused: int = EXIT_REFUSED,
) -> int:
    """Run a command's body; every failure ends in one line on stderr (``tell``) and an
    exit code: ``usage`` for a bad command line or an unreachable daemon, ``refused``
    for a refusal or an internal error."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = body(args)
        sys.stdout.flush()
        return code
    except (UsageError, TransportError) as exc:
        tell(prog, str(exc))
        return usage
    except ApiError as exc:
        tell(prog, exc.message)
        return refused
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        tell(prog, "interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except Exception as exc:  # never a traceback
        tell(prog, f"internal error: {type(exc).__name__}: {exc}")
        return refused


def _silence_stdout() -> None:
    # Python would complain again when it flushes stdout at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
