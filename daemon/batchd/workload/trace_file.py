"""Opening a trace: a regular file, plain or gzip, read in pieces of bounded size.

A directory, a device (``/dev/zero`` never ends) or a pipe is refused before it is
read. Lines are read at most ``MAX_LINE`` characters at a time, so that one huge line
is an error rather than all of memory, and gzip data that ends early or is damaged is
an error naming the file and the line it reached.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from batchd.workload.swf_fields import MAX_LINE, PathLike, SWFError, shown

__all__ = [
    "CompressedDataError",
    "ENCODING",
    "ERRORS",
    "GZIP_MAGIC",
    "iter_bytes",
    "open_binary",
    "open_text",
    "text_lines",
]

GZIP_MAGIC = b"\x1f\x8b"
# Text is read as UTF-8; undecodable bytes survive a read/write round trip unchanged.
ENCODING = "utf-8"
ERRORS = "surrogateescape"
_CHUNK = 1 << 20
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISSOCK, "a socket"),
)


class CompressedDataError(SWFError):
    """Gzip data that ends before its end or does not decompress."""


def _check_regular(path: PathLike, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise SWFError(path, None, f"{kind}, not a trace file: give a file (plain or gzip)")


def trace_path_problem(path: PathLike) -> str | None:
    """Why ``path`` cannot be read as a trace (``"PATH: no such trace file"``, ``"PATH: a
    directory, not a trace file: ..."``), or None for a regular file."""
    try:
        _check_regular(path, os.stat(path).st_mode)
    except FileNotFoundError:
        return f"{path}: no such trace file"
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    except SWFError as exc:
        return str(exc)
    return None


def open_binary(path: PathLike) -> BinaryIO:
    """The file at ``path`` opened for reading bytes; SWFError unless it is a regular file.

    The type is looked at before opening (opening a pipe would wait for a writer) and
    again on what was opened.
    """
    _check_regular(path, os.stat(path).st_mode)
    # O_NONBLOCK: a pipe put in the file's place since is opened without waiting for a
    # writer, and refused below (it changes nothing for a regular file).
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    fh = os.fdopen(fd, "rb")
    try:
        _check_regular(path, os.fstat(fh.fileno()).st_mode)
    except BaseException:
        fh.close()
        raise
    return fh


class _GzipOwning(gzip.GzipFile):
    """A GzipFile that closes the file it reads (GzipFile leaves a given one open)."""

    def __init__(self, fh: BinaryIO) -> None:
        super().__init__(fileobj=fh, mode="rb")
        self._owned = fh

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._owned.close()


def open_text(path: PathLike) -> TextIO:
    """Open a plain or gzip-compressed file as text; gzip is recognised by its magic bytes."""
    fh = open_binary(path)
    try:
        magic = fh.read(2)
        fh.seek(0)
    except BaseException:
        fh.close()
        raise
    if magic == GZIP_MAGIC:
        return io.TextIOWrapper(_GzipOwning(fh), ENCODING, ERRORS)
    return io.TextIOWrapper(fh, ENCODING, ERRORS)


def text_lines(path: PathLike, fh: TextIO) -> Iterator[tuple[int, str]]:
    """(1-based line number, line with its end) of an open trace, each line at most
    ``MAX_LINE`` characters: a longer line, or gzip data that ends early or is damaged,
    raises :class:`SWFError` naming the line."""
    read = fh.readline
    limit = MAX_LINE + 1
    line_no = 0
    while True:
        try:
            line = read(limit)
        except EOFError:
            raise CompressedDataError(
                path, line_no + 1, "the gzip data ends early (the file is cut short)"
            ) from None
        except (zlib.error, gzip.BadGzipFile) as exc:
            raise CompressedDataError(
                path, line_no + 1, f"the gzip data is damaged: {exc}"
            ) from None
        if not line:
            return
        line_no += 1
        if len(line) == limit and line[-1] != "\n":
            raise SWFError(
                path,
                line_no,
                f"the line is longer than {MAX_LINE:,} characters (it begins {shown(line[:40])})",
            )
        yield line_no, line


def iter_bytes(path: PathLike) -> Iterator[bytes]:
    """The bytes of a trace, decompressed when it is gzip, in pieces of at most a MiB.

    Raises :class:`CompressedDataError` (without a line) when gzip data ends early or
    is damaged.
    """
    with open_binary(path) as fh:
        piece = fh.read(_CHUNK)
        if piece[:2] != GZIP_MAGIC:
            while piece:
                yield piece
                piece = fh.read(_CHUNK)
            return
        yield from _inflate(path, piece, fh)


def _inflate(path: PathLike, pending: bytes, fh: BinaryIO) -> Iterator[bytes]:
    """Decompress gzip members one after the other (zero bytes between them are padding),
    never more than a MiB of output per step."""
    inflater = None
    while True:
        if inflater is None:
            pending = pending.lstrip(b"\0")
            while not pending:
                pending = fh.read(_CHUNK)
                if not pending:
                    return
                pending = pending.lstrip(b"\0")
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            if not pending:
                pending = fh.read(_CHUNK)
                if not pending:
                    out = inflater.flush()
                    if out:
                        yield out
                    if not inflater.eof:
                        raise CompressedDataError(
                            path, None, "the gzip data ends early (the file is cut short)"
                        )
                    return
            out = inflater.decompress(pending, _CHUNK)
        except zlib.error as exc:
            raise CompressedDataError(path, None, f"the gzip data is damaged: {exc}") from None
        if out:
            yield out
        if inflater.eof:
            pending = inflater.unused_data
            inflater = None
        else:
            pending = inflater.unconsumed_tail
