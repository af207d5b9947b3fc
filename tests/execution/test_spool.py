"""The spool: private to the daemon's user, records whole or absent, the supervisor's lock."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from batchd.execution import spool
from users import as_root


def test_a_missing_spool_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "a" / "spool"
    fd = spool.open_spool(str(path))
    os.close(fd)
    assert path.stat().st_mode & 0o777 == 0o700


def test_a_spool_open_to_others_or_a_symlink_is_refused(tmp_path: Path) -> None:
    open_one = tmp_path / "open"
    open_one.mkdir(mode=0o755)
    open_one.chmod(0o755)
    with pytest.raises(spool.SpoolError, match=r"may be used by others \(mode 0755\)"):
        spool.open_spool(str(open_one))
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(spool.SpoolError, match="a symlink is refused"):
        spool.open_spool(str(link))


@pytest.mark.skipif(not as_root(), reason="a directory of another user's: root chowns it")
def test_a_spool_of_another_user_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(spool.SpoolError, match="is owned by uid 65534"):
        spool.open_spool(str(theirs))


def test_records_and_the_lock(tmp_path: Path) -> None:
    base = spool.open_spool(str(tmp_path / "spool"))
    assert spool.read_record(base, "12", spool.END) is None
    spool.write_record(base, "12", spool.END, '{"a": 1}')
    assert spool.read_record(base, "12", spool.END) == '{"a": 1}'
    assert sorted(os.listdir(base)) == ["12.end"]  # the temporary name is gone
    assert not spool.lock_held(base, "12") and spool.lock_pid(base, "12") is None
    lock = spool.take_lock(base, "12")
    assert spool.lock_held(base, "12") and spool.lock_pid(base, "12") == os.getpid()
    with pytest.raises(BlockingIOError):
        spool.take_lock(base, "12")  # one supervisor per job
    os.close(lock)
    assert not spool.lock_held(base, "12")
    fd = os.open("12.lock", os.O_RDONLY, dir_fd=base)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a reader's shared lock is not the supervisor's
    os.close(fd)
    spool.make_control(base, "12")
    spool.make_control(base, "12")  # there already: kept
    assert spool.job_keys(base) == ["12"]
    spool.remove(base, "12")
    assert spool.job_keys(base) == [] and os.listdir(base) == []
    spool.remove(base, "12")  # already gone: nothing to do
    os.close(base)


def test_a_key_is_a_plain_name(tmp_path: Path) -> None:
    base = spool.open_spool(str(tmp_path / "spool"))
    for bad in ("../x", "a/b", "", ".hidden", "x y"):
        with pytest.raises(ValueError, match="is not a spool key"):
            spool.write_record(base, bad, spool.END, "{}")
    os.close(base)


def test_a_record_is_never_read_through_a_symlink(tmp_path: Path) -> None:
    base = spool.open_spool(str(tmp_path / "spool"))
    target = tmp_path / "elsewhere"
    target.write_text("not a record")
    os.symlink(target, "1.end", dir_fd=base)
    with pytest.raises(OSError):
        spool.read_record(base, "1", spool.END)
    os.close(base)
