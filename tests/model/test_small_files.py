"""Reading a small configuration file: what is refused, with which words, and what is read."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from batchd.model import small_files
from batchd.model.small_files import FileRefused, may_quote, read_small_file


def _stat(mode: int, uid: int = 0, size: int = 0) -> os.stat_result:
    return os.stat_result((mode, 1, 1, 1, uid, 0, size, 0, 0, 0))


def test_a_regular_file_is_read_whole_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_bytes(b"x" * 100)
    assert read_small_file(path, cap=100).data == b"x" * 100  # exactly the cap is allowed
    assert read_small_file(str(path)).data == b"x" * 100
    with pytest.raises(FileRefused, match=r"^is larger than 99 bytes$"):
        read_small_file(path, cap=99)


def test_the_cap_is_said_in_mebibytes_when_whole_and_in_bytes_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * ((2 << 20) + 1))
    with pytest.raises(FileRefused, match=r"^is larger than 2 MiB$"):
        read_small_file(path, cap=2 << 20)
    with pytest.raises(FileRefused, match=r"^is larger than 1 MiB$"):
        read_small_file(path)
    with pytest.raises(FileRefused, match=r"^is larger than 1,500,000 bytes$"):
        read_small_file(path, cap=1_500_000)


def test_a_file_that_grew_after_its_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing"
    path.write_bytes(b"x" * 11)
    real_fstat = os.fstat

    def looks_small(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return _stat(st.st_mode, st.st_uid, size=10)

    monkeypatch.setattr(os, "stat", lambda p: _stat(stat.S_IFREG | 0o644, size=10))
    monkeypatch.setattr(os, "fstat", looks_small)
    with pytest.raises(FileRefused, match=r"^is larger than 10 bytes$"):
        read_small_file(path, cap=10)


def test_what_is_not_a_regular_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match=r"^is a directory$"):
        read_small_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused, match=r"^is a FIFO$"):
        read_small_file(fifo)
    with pytest.raises(FileRefused, match=r"^is a device$"):
        read_small_file("/dev/zero")
    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(FileRefused, match=r"^is a socket$"):
            read_small_file(sock_path)


def test_a_block_device_and_an_unknown_kind_are_named_too() -> None:
    assert small_files._kind(stat.S_IFBLK | 0o660) == "is a device"
    assert small_files._kind(stat.S_IFLNK | 0o777) == "is not a regular file"
    assert small_files._kind(stat.S_IFREG | 0o644) is None


def test_the_file_is_opened_without_waiting_being_inherited_or_taking_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "site.toml"
    path.write_bytes(b"[machine]\n")
    flags: list[int] = []
    real_open = os.open

    def spy(p: str | Path, f: int, *rest: int) -> int:
        flags.append(f)
        return real_open(p, f, *rest)

    monkeypatch.setattr(os, "open", spy)
    assert read_small_file(path).data == b"[machine]\n"
    wanted = os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
    assert len(flags) == 1
    assert flags[0] & wanted == wanted
    assert flags[0] & os.O_ACCMODE == os.O_RDONLY


def test_whether_the_content_may_be_quoted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "site.toml"
    path.write_bytes(b"")
    path.chmod(0o644)
    assert read_small_file(path).quotable is True
    path.chmod(0o600)
    monkeypatch.setattr(os, "getuid", lambda: 0)
    assert read_small_file(path).quotable is (path.stat().st_uid != 0)
    # root's own private file stays quiet; a user's own private file may be quoted
    assert may_quote(_stat(stat.S_IFREG | 0o600, uid=0)) is False
    monkeypatch.setattr(os, "getuid", lambda: 1234)
    assert may_quote(_stat(stat.S_IFREG | 0o600, uid=1234)) is True
    assert may_quote(_stat(stat.S_IFREG | 0o600, uid=1235)) is False
    assert may_quote(_stat(stat.S_IFREG | 0o604, uid=1235)) is True
