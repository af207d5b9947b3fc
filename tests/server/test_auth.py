"""Who is calling: the token file, the bearer header, the Unix peer, the open paths."""

from __future__ import annotations

import os
import pwd
import socket
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from batchd.server.auth import (
    NEED_TOKEN,
    AuthFailure,
    TokenFileError,
    daemon_user,
    is_open,
    is_page,
    load_tokens,
    peer_user,
    token_digests,
    token_user,
    user_name,
)

ALICE = "a" * 16
BOB = "b" * 40


def token_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_tokens_are_read_past_comments_blanks_and_spaces(tmp_path: Path) -> None:
    path = token_file(tmp_path, f"# users\n\n  alice : {ALICE}  \nbob:{BOB}\n")
    assert load_tokens(path) == {ALICE: "alice", BOB: "bob"}
    assert load_tokens(str(path)) == {ALICE: "alice", BOB: "bob"}


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o610, 0o601])
def test_a_token_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = token_file(tmp_path, f"alice:{ALICE}\n", mode)
    with pytest.raises(TokenFileError) as refused:
        load_tokens(path)
    assert str(refused.value) == (
        f"{path}: the token file must not be readable by others (chmod 600)"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"alice {ALICE}\n", 1),  # no colon
        (f"# first\n :{ALICE}\n", 2),  # no user
        ("alice:" + "a" * 15 + "\n", 1),  # 15 characters
        (f"alice:{ALICE}\nbob:  {'b' * 15}  \n", 2),  # 15 once stripped
    ],
)
def test_a_bad_line_is_named_by_its_number(tmp_path: Path, text: str, line: int) -> None:
    path = token_file(tmp_path, text)
    with pytest.raises(TokenFileError) as refused:
        load_tokens(path)
    assert str(refused.value) == (
        f"{path}: line {line}: expected USER:TOKEN with a token of 16 characters or more"
    )


def test_a_token_of_sixteen_characters_is_enough(tmp_path: Path) -> None:
    assert load_tokens(token_file(tmp_path, f"alice:{'x' * 16}\n")) == {"x" * 16: "alice"}


def test_a_token_may_hold_colons_and_any_character(tmp_path: Path) -> None:
    token = "abc:def:ghi:jklmnopé"
    assert load_tokens(token_file(tmp_path, f"alice:{token}\n")) == {token: "alice"}


def test_an_empty_or_missing_token_file_is_refused(tmp_path: Path) -> None:
    path = token_file(tmp_path, "# nobody yet\n\n")
    with pytest.raises(TokenFileError) as refused:
        load_tokens(path)
    assert str(refused.value) == f"{path}: no USER:TOKEN lines"
    missing = tmp_path / "none"
    with pytest.raises(TokenFileError) as refused:
        load_tokens(missing)
    assert str(refused.value) == f"{missing}: cannot read the token file: No such file or directory"


def asked(header: str | None) -> Any:
    headers = {} if header is None else {"Authorization": header}
    return make_mocked_request("GET", "/jobs", headers=headers)


def test_the_bearer_token_names_its_user() -> None:
    digests = token_digests({ALICE: "alice", BOB: "bob"})
    assert token_user(asked(f"Bearer {ALICE}"), digests) == "alice"
    assert token_user(asked(f"bearer   {BOB} "), digests) == "bob"
    assert token_user(asked(f"BEARER {BOB}"), digests) == "bob"


@pytest.mark.parametrize(
    ("header", "reason", "message"),
    [
        (None, "missing", NEED_TOKEN),
        (f"Basic {ALICE}", "not_bearer", NEED_TOKEN),
        (ALICE, "not_bearer", NEED_TOKEN),
        ("Bearer   ", "empty", NEED_TOKEN),
        (f"Bearer {ALICE}x", "unknown_token", "the bearer token is not valid"),
    ],
)
def test_a_request_without_a_valid_token_says_why(
    header: str | None, reason: str, message: str
) -> None:
    with pytest.raises(AuthFailure) as refused:
        token_user(asked(header), token_digests({ALICE: "alice"}))
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")
    assert (refused.value.reason, refused.value.message) == (reason, message)
    assert refused.value.length == (0 if header is None else len(header))


class Headers:
    """A request as aiohttp hands it over: an undecodable header byte is a surrogate."""

    def __init__(self, header: str) -> None:
        self.headers = {"Authorization": header}


def test_a_token_with_undecodable_bytes_is_compared_not_an_error() -> None:
    odd = "\udcff" * 16
    digests = token_digests({odd: "alice", ALICE: "bob"})
    assert token_user(Headers(f"Bearer {odd}"), digests) == "alice"  # type: ignore[arg-type]
    with pytest.raises(AuthFailure) as refused:
        token_user(Headers("Bearer \udcfe"), digests)  # type: ignore[arg-type]
    assert refused.value.reason == "unknown_token"


def test_only_health_metrics_the_document_and_the_page_are_open() -> None:
    for path in ("/", "/healthz", "/metrics", "/openapi.json", "/ui", "/ui/app.js"):
        assert is_open(path), path
    for path in ("/jobs", "/uix", "/ui.js", "/metrics/x", "/server"):
        assert not is_open(path), path
    assert is_page("/ui") and is_page("/ui/") and is_page("/ui/style.css")
    assert not is_page("/") and not is_page("/uix") and not is_page("/u")


def test_users_are_named_by_the_password_database_or_their_uid() -> None:
    assert user_name(0) == "root"
    unused = max(entry.pw_uid for entry in pwd.getpwall()) + 1
    assert user_name(unused) == f"uid{unused}"
    assert daemon_user() == pwd.getpwuid(os.geteuid()).pw_name


class Gone:
    """A request whose connection has closed: aiohttp gives no transport."""

    transport = None


class Transport:
    def __init__(self, sock: socket.socket | None) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> socket.socket | None:
        return self.sock if name == "socket" else None


def test_the_peer_is_the_user_at_the_other_end_of_a_unix_socket() -> None:
    here, there = socket.socketpair(socket.AF_UNIX)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        on_unix = make_mocked_request("GET", "/jobs", transport=Transport(here))
        assert peer_user(on_unix) == pwd.getpwuid(os.getuid()).pw_name
        on_tcp = make_mocked_request("GET", "/jobs", transport=Transport(tcp))
        assert peer_user(on_tcp) is None
        closed = make_mocked_request("GET", "/jobs", transport=Transport(None))
        assert peer_user(closed) is None
        assert peer_user(Gone()) is None  # type: ignore[arg-type]
    finally:
        for s in (here, there, tcp):
            s.close()


HIGH_UID = 3_000_000_000  # above 2^31: a signed read would make it negative


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can connect as another uid")
def test_a_peer_uid_above_2_31_is_read_as_the_unsigned_number_it_is() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.settimeout(10)
    # An abstract name: no directory whose permissions the other uid would need.
    listener.bind(f"\0batchd-test-peer-{os.getpid()}")
    listener.listen(1)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        try:
            os.setgid(HIGH_UID)
            os.setuid(HIGH_UID)
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(listener.getsockname())
            client.recv(1)
        finally:
            os._exit(0)
    try:
        conn, _ = listener.accept()
        with conn:
            request = make_mocked_request("GET", "/jobs", transport=Transport(conn))
            assert peer_user(request) == f"uid{HIGH_UID}"
    finally:
        os.waitpid(child, 0)
        listener.close()
