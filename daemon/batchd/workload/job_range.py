"""A range of a trace's jobs by their numbers: SDSC-BLUE jobs 5,000 to 10,000 (Lee's utility paper, sec. 7).

``slice_jobs`` writes every comment line of a trace (the header, and any comment
between jobs) and the job lines whose job number (SWF field 1) lies in
``first..last``, each as read, so the slice keeps the trace's header facts,
queues and ``key=value`` tokens; a note after the header says where it came
from. A file ending in ``.gz`` is written compressed (byte-identical across runs).
"""

from __future__ import annotations

from pathlib import Path

from batchd.workload.swf import PathLike, SWFError, _open_write, open_text

__all__ = ["parse_job_range", "slice_jobs"]


def parse_job_range(text: str) -> tuple[int, int]:
    """``"5000-10000"`` -> (5000, 10000): job numbers, the first at most the last."""
    first_text, sep, last_text = text.strip().partition("-")
    if not sep or not first_text.strip().isdigit() or not last_text.strip().isdigit():
        raise ValueError(f"job range {text!r}: expected FIRST-LAST, e.g. 5000-10000")
    first, last = int(first_text), int(last_text)
    if first > last:
        raise ValueError(f"job range {text!r}: the first job number is above the last")
    return first, last


def slice_jobs(src: PathLike, dst: PathLike, first: int, last: int) -> int:
    """Write the comments and the job lines numbered ``first`` to ``last`` of ``src``.

    Returns the number of job lines written; a range with no job in it, or a job line
    whose first field is not a whole number, is an error naming the file (and line).
    """
    if first > last:
        raise ValueError(f"job range {first}-{last}: the first job number is above the last")
    kept = 0
    note = f"; Note: jobs numbered {first} to {last} of {Path(src).name}\n"
    with open_text(src) as fin, _open_write(dst) as out:
        for line_no, line in enumerate(fin, 1):
            fields = line.split(maxsplit=1)
            if not fields or line.lstrip().startswith(";"):
                out.write(line)
                continue
            if note:
                out.write(note)
                note = ""
            try:
                number = int(fields[0])
            except ValueError:
                raise SWFError(src, line_no, f"{fields[0]!r} is not an integer", 1) from None
            if first <= number <= last:
                out.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    if kept == 0:
        raise ValueError(f"{src}: no job numbered {first} to {last}")
    return kept
