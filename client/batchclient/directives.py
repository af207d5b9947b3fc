"""``#PBS`` directives at the top of a job script.

As qsub reads them: every line before the first one that is neither blank nor
a comment; a directive is ``#PBS`` (after optional leading blanks) followed by
options written as on the command line. Command-line options take precedence.
An error names the script and the line: ``job.sh:3: #PBS -l nodes=0: ...``.
"""

from __future__ import annotations

import shlex

PREFIX = "#PBS"


class DirectiveError(ValueError):
    pass


def where(source: str, number: int) -> str:
    """``job.sh:3``: the script (its path, or STDIN) and the line of a directive."""
    return f"{source}:{number}"


def directives(
    script: str, prefix: str = PREFIX, source: str = "STDIN"
) -> list[tuple[int, list[str]]]:
    """``(line number, words)`` of each directive, in order; ``source`` names the script."""
    found: list[tuple[int, list[str]]] = []
    for number, line in enumerate(script.splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if not text.startswith("#"):
            break
        if text.startswith(prefix) and (len(text) == len(prefix) or text[len(prefix)].isspace()):
            try:
                words = shlex.split(text[len(prefix) :])
            except ValueError as exc:
                raise DirectiveError(f"{where(source, number)}: {text}: {exc}") from None
            if words:
                found.append((number, words))
    return found
