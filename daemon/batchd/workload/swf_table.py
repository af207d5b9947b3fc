"""Reading a whole SWF trace at once: its job lines as 18 columns.

:func:`batchd.workload.swf.iter_swf` converts one line at a time, which is exact but
slow. :func:`read_swf_table` reads the file in one go and converts a column at a time.
It handles the regular files of the Parallel Workloads Archive and returns ``None``
for anything else; the caller then uses the exact reader, which gives the same values,
or the precise error.

How it works. The job lines follow the header (the leading comment block). Lines of
one length are joined into a block in which every line has the same width. The tokens
of the block's first line give the layout: one cut at a blank position between each
pair of neighbouring tokens, checked blank on every line of the block (the lines that
are not, whose fields a wider value pushed along, go to a block of their own). The
cuts split every line into 18 regions. A region with the same text on every line
(``-1`` for an unknown field, mostly) is a constant, parsed once with the exact
reader's rule; a single digit on every line is translated to its value. Every other
region is gathered, one plane (the same character position of every line) at a time,
into a JSON array with a comma after each line's text, and parsed by the C JSON
decoder: one column per call, so that the ints of a column are made one after the
other and lie together in memory, which later passes over the column depend on.

Why that is exact: the bytes of those regions are limited to digits, blanks, ``-``
and ``.``, so the decoder can only read numbers, and a JSON number without exponent
is a text for which ``int()`` (no ``.``) or ``float()`` (a ``.``) gives the same value
as the exact reader does. The decoder refuses everything else that can occur there,
and with it the whole file: two tokens in one region (a line with more fields), an
empty region (fewer), ``05``, ``1.``, ``.5``, ``-``, ``1-2``. Lines are at most 256
characters long, so no number can overflow a float.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import compress

from batchd.workload.swf import SWFHeader, _parse_number
from batchd.workload.swf_fields import (
    DURATION_FIELDS,
    DURATION_MAX,
    FIELD_MAX,
    MAX_LINE,
    N_FIELDS,
    PathLike,
    field_problem,
)
from batchd.workload.trace_file import ENCODING, ERRORS, CompressedDataError, iter_bytes

__all__ = ["Column", "SWFTable", "parse_swf_table", "read_swf_table"]

# A column: the values of one field, one per row, or the one value of every row.
Column = list[int | float] | int | float

_ALLOWED = b"0123456789 -.\0"  # in a region (b"\0": where a comma will go)
_MAX_WIDTH = 256  # longest job line (without its end) the table reads
_MAX_BLOCKS = 64  # more layouts than this: use the exact reader
# A larger trace (once decompressed) is left to the exact reader, which streams it.
TABLE_MAX_BYTES = 1 << 30
# The widest region (in characters) whose numbers are all within the field's bounds.
_SAFE_WIDTH = [
    len(str(DURATION_MAX)) - 1 if k in DURATION_FIELDS else len(str(FIELD_MAX)) - 1
    for k in range(N_FIELDS)
]
_TOKEN = re.compile(rb"\S+")
_IS_BLANK = bytes(1 if c == 0x20 else 0 for c in range(256))
_NOT_BLANK = bytes(0 if c == 0x20 else 1 for c in range(256))
_DECODE = json.JSONDecoder().raw_decode
_DIGIT_VALUE = bytes(c - 0x30 if 0x30 <= c <= 0x39 else 0 for c in range(256))


@dataclass(slots=True)
class SWFTable:
    """The job lines of a trace, a column per SWF field, and its header.

    ``columns[i]`` holds field ``i + 1`` of every row, or its one value when that is
    the same on every row. Rows are the job lines in file order, unless ``order`` is
    given: then row ``r`` is job line ``order[r]`` (0-based, counting job lines only).
    ``floats`` holds the (0-based) fields with a float on some row.
    """

    header: SWFHeader
    columns: list[Column]
    rows: int
    order: list[int] | None = None
    floats: frozenset[int] = frozenset()


class _Irregular(Exception):
    """The lines are not of a kind the table reads; the exact reader takes over."""


class _Split(Exception):
    """A block holds lines of more than one layout: the plane (one character of every
    line) at a cut of the first line's layout, blank on the lines that share it."""

    def __init__(self, plane: bytes) -> None:
        self.plane = plane


@dataclass(slots=True)
class _Block:
    data: bytes  # the lines, each followed by b"\n"
    rows: int
    width: int  # bytes per line without b"\n"
    order: list[int] | None  # job line of each row, when not simply 0, 1, 2, ...
    lines: list[bytes] | None = None  # the same lines, once they were needed


def read_swf_table(path: PathLike, first: int | None = None) -> SWFTable | None:
    """The trace at ``path`` as a table, or None when the exact reader must read it.

    With ``first``, only the first ``first`` job lines are read into the table; the
    one after them is still checked, as the exact reader parses it before stopping.
    Then only the start of the file that holds them is read. File errors (no such
    file, no permission, not a regular file) are raised as by the exact reader.
    """
    if first is not None and first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    try:
        data = _read_data(path, first)
    except CompressedDataError:
        return None  # the exact reader says where
    if data is None:
        return None
    return parse_swf_table(data, first, str(path))


def _read_data(path: PathLike, first: int | None) -> bytes | None:
    """The (decompressed) bytes of the trace, or with ``first`` those of its first lines
    up to and with the ``first + 1``-th job line; None beyond ``TABLE_MAX_BYTES``."""
    pieces: list[bytes] = []
    size = 0
    look_at = 0  # the size at which to look whether the lines read are enough
    open_line = 0  # bytes since the last b"\n"
    for piece in iter_bytes(path):
        pieces.append(piece)
        size += len(piece)
        if size > TABLE_MAX_BYTES:
            return None
        # Lines within a piece are at most a MiB long: look at those across pieces.
        newline = piece.find(b"\n")
        if newline == -1:
            open_line += len(piece)
        else:
            if open_line + newline > MAX_LINE:
                return None
            open_line = len(piece) - piece.rfind(b"\n") - 1
        if open_line > MAX_LINE:
            return None  # the exact reader names the line
        if first is not None and size >= look_at:
            data = b"".join(pieces)
            pieces = [data]
            try:
                end = _end_of_job_line(data, first + 1)
            except _Irregular:
                return None
            if end is not None:
                return data[:end]
            look_at = 2 * size
    return b"".join(pieces)


def _end_of_job_line(data: bytes, count: int) -> int | None:
    """The offset after the ``count``-th line that follows the header, if ``data`` has it."""
    if data.count(b"\n") <= count:
        return None
    _, pos = _read_header(data)
    for _ in range(count):
        pos = data.find(b"\n", pos) + 1
        if pos == 0:
            return None
    return pos


def parse_swf_table(data: bytes, first: int | None = None, source: str = "") -> SWFTable | None:
    """The SWF text ``data`` (bytes, not compressed) as a table; see :func:`read_swf_table`.

    ``source``: the file the header is said to come from in its errors.
    """
    if first is not None and first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:  # a lone carriage return ends a line for the text reader
            return None
    try:
        header, start = _read_header(data, source)
        body = _job_lines(data, start)
        blocks = _blocks(body, first)
        return _table(header, blocks)
    except _Irregular:
        return None


def _read_header(data: bytes, source: str = "") -> tuple[SWFHeader, int]:
    """The leading comment block (as :func:`~batchd.workload.swf.read_header` reads it)
    and the offset of the first job line. Raises :class:`_Irregular` on a line longer
    than the exact reader reads."""
    lines: list[str] = []
    numbers: list[int] = []
    pos = 0
    size = len(data)
    line_no = 0
    while pos < size:
        end = data.find(b"\n", pos)
        if end == -1:
            end = size
        if end - pos > MAX_LINE:
            raise _Irregular
        line_no += 1
        text = data[pos:end].decode(ENCODING, ERRORS)
        stripped = text.strip()
        if stripped:
            if not stripped.startswith(";"):
                break
            lines.append(text)
            numbers.append(line_no)
        pos = end + 1
    return SWFHeader(lines, numbers, source), pos


def _job_lines(data: bytes, start: int) -> bytes:
    """The lines from ``start`` on, each ending in b"\\n", without blank lines at the end."""
    stop = len(data.rstrip())
    if stop <= start:
        return b""
    end = data.find(b"\n", stop)
    if end == -1:
        return data[start:] + b"\n"  # the last line has no end
    return data[start : end + 1]


def _blocks(body: bytes, first: int | None) -> list[_Block]:
    """The job lines as blocks of lines of equal length, at most ``first`` of them.

    Raises :class:`_Irregular` when the line after the first ``first`` does not parse.
    """
    if not body:
        return []
    width = body.find(b"\n")
    stride = width + 1
    total, rest = divmod(len(body), stride)
    if not rest and body[width::stride] == b"\n" * total:  # one length: no copies
        rows = total if first is None else min(total, first)
        if rows < total:
            _check_line(body[rows * stride : rows * stride + width])
            body = body[: rows * stride]
        return [_Block(body, rows, width, None)] if rows else []
    lines = body.split(b"\n")
    lines.pop()  # after the last b"\n"
    if first is not None and first < len(lines):
        _check_line(lines[first])
        del lines[first:]
    if not lines:
        return []
    lengths = list(map(len, lines))
    sizes = sorted(set(lengths))
    if len(sizes) > _MAX_BLOCKS:
        raise _Irregular
    if len(sizes) == 1:
        return [_Block(b"\n".join(lines) + b"\n", len(lines), sizes[0], None, lines)]
    order = sorted(range(len(lines)), key=lengths.__getitem__)  # stable: file order kept
    ordered = list(map(lines.__getitem__, order))
    blocks = []
    lo = 0
    for size in sizes:
        hi = lo + lengths.count(size)
        part = ordered[lo:hi]
        blocks.append(_Block(b"\n".join(part) + b"\n", hi - lo, size, order[lo:hi], part))
        lo = hi
    return blocks


def _check_line(line: bytes) -> None:
    """Raise :class:`_Irregular` unless the exact reader parses this job line."""
    parts = line.split()
    if len(parts) != N_FIELDS:
        raise _Irregular
    try:
        for k, text in enumerate(parts):
            if field_problem(k, _parse_number(text.decode(ENCODING, ERRORS))) is not None:
                raise _Irregular
    except ValueError:
        raise _Irregular from None


def _table(header: SWFHeader, blocks: list[_Block]) -> SWFTable:
    """Parse every block (splitting those that hold several layouts) into one table."""
    if not blocks:
        return SWFTable(header, [[] for _ in range(N_FIELDS)], 0)
    done: list[tuple[_Block, list[Column]]] = []
    floats: set[int] = set()
    work = blocks[::-1]
    count = len(blocks)
    while work:
        block = work.pop()
        try:
            done.append((block, _parse_block(block, floats)))
        except _Split as split:
            count += 1
            if count > _MAX_BLOCKS:
                raise _Irregular from None
            work.extend(_split_block(block, split.plane)[::-1])
    if len(done) == 1:
        block, columns = done[0]
        return SWFTable(header, columns, block.rows, block.order, frozenset(floats))
    columns = [_concat([cols[i] for _, cols in done], [b.rows for b, _ in done]) for i in range(18)]
    order: list[int] = []
    for block, _ in done:
        order += block.order if block.order is not None else range(block.rows)
    rows = len(order)
    if order == list(range(rows)):
        return SWFTable(header, columns, rows, None, frozenset(floats))
    return SWFTable(header, columns, rows, order, frozenset(floats))


def _concat(parts: list[Column], sizes: list[int]) -> Column:
    """One column from the same column of several blocks."""
    first = parts[0]
    if not isinstance(first, list) and all(
        not isinstance(p, list) and p == first and type(p) is type(first) for p in parts
    ):
        return first
    out: list[int | float] = []
    for part, size in zip(parts, sizes, strict=True):
        if isinstance(part, list):
            out += part
        else:
            out += [part] * size
    return out


def _split_block(block: _Block, plane: bytes) -> list[_Block]:
    """The lines of ``block`` blank in ``plane``, and the others, as two blocks."""
    lines = block.lines
    if lines is None:
        lines = block.data.split(b"\n")
        lines.pop()
    order = block.order if block.order is not None else list(range(block.rows))
    out = []
    for table in (_IS_BLANK, _NOT_BLANK):
        mask = plane.translate(table)
        part = list(compress(lines, mask))
        if not part:  # the first line is not blank there either: not a layout of columns
            raise _Irregular
        out.append(
            _Block(
                b"\n".join(part) + b"\n", len(part), block.width, list(compress(order, mask)), part
            )
        )
    return out


def _parse_block(block: _Block, floats: set[int]) -> list[Column]:
    """The 18 columns of a block of equal-width lines; see the module's docstring.

    Adds to ``floats`` the fields that have a float. Raises :class:`_Split` when the
    lines do not all share the first line's layout, :class:`_Irregular` when they are
    not all regular job lines.
    """
    data, rows, width = block.data, block.rows, block.width
    if width > _MAX_WIDTH:
        raise _Irregular
    stride = width + 1
    first = data[:width]
    spans = [m.span() for m in _TOKEN.finditer(first)]
    if len(spans) != N_FIELDS:
        raise _Irregular
    blank = b" " * rows
    cuts: list[int] = []
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):  # gaps of line 1
        plane = data[end::stride]
        if plane != blank:
            if start - 1 == end or data[start - 1 :: stride] != blank:
                raise _Split(plane)
            end = start - 1
        cuts.append(end)
    bounds = [-1, *cuts, width]

    # Constant regions: every plane (one column of characters) as on the first line.
    # Digits alone in one plane: their values. The other regions go to the decoder.
    columns: list[Column] = []
    variable: list[int] = []
    same: dict[int, bytes] = {}
    for k in range(N_FIELDS):
        lo, hi = bounds[k] + 1, bounds[k + 1]
        for p in range(hi - 1, lo - 1, -1):
            char = first[p]
            line = same.get(char)
            if line is None:
                line = same[char] = bytes((char,)) * rows
            plane = data[p::stride]
            if plane != line:
                if (
                    p == hi - 1
                    and spans[k][1] - spans[k][0] == 1
                    and plane.isdigit()
                    and all(data[q::stride] == blank for q in range(lo, p))
                ):
                    columns.append(list(plane.translate(_DIGIT_VALUE)))
                    break
                variable.append(k)
                columns.append([])
                break
        else:
            start, end = spans[k]
            try:
                value = _parse_number(first[start:end].decode())
            except ValueError:
                raise _Irregular from None
            if field_problem(k, value) is not None:
                raise _Irregular  # the exact reader names the line
            columns.append(value)
            if type(value) is float:
                floats.add(k)
    if not variable:
        return columns

    # Each variable region, gathered a plane at a time, as a JSON array "[v,v,...]":
    # one column of values, made one after the other (so a column's ints lie together).
    comma = b"," * rows
    for k in variable:
        lo, hi = bounds[k] + 1, bounds[k + 1]
        size = hi - lo + 1  # the region and a comma
        text = bytearray(1 + rows * size)
        for j, p in enumerate(range(lo, hi), 1):
            text[j::size] = data[p::stride]
        if text.translate(None, _ALLOWED):  # b"\0" where the commas go
            raise _Irregular
        if b"." in text:  # without exponents, the one way to a JSON float
            floats.add(k)
        text[size::size] = comma
        text[0] = 0x5B  # "["
        text[-1] = 0x5D  # "]"
        try:
            values, _ = _DECODE(text.decode("ascii"))
        except ValueError:
            raise _Irregular from None
        if len(values) != rows:
            raise _Irregular
        if hi - lo > _SAFE_WIDTH[k] and (
            field_problem(k, min(values)) or field_problem(k, max(values))
        ):
            raise _Irregular  # the exact reader names the line
        columns[k] = values
    return columns
