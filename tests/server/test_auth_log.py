"""A real daemon's log never holds the text of an Authorization header, however it is
malformed: each failure is logged with its peer, reason and the header's length only."""

from __future__ import annotations

import json
import secrets
import socket
from pathlib import Path

from daemon_proc import Daemon


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def send(port: int, header: bytes) -> bytes:
    """One request with ``header`` as its Authorization value, sent as raw bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(
            b"GET /server HTTP/1.1\r\nHost: batchd\r\nAuthorization: " + header
            + b"\r\nConnection: close\r\n\r\n"
        )  # fmt: skip
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_malformed_headers_never_reach_the_log(tmp_path: Path) -> None:
    marks = [f"SeCrEt{secrets.token_hex(8)}" for _ in range(12)]
    shapes = [
        b"Bearer %s",  # a wrong token
        b"Bearer %s\x01x",  # a control character: the parser refuses the line
        b"Bearer %s\x00",
        b"Bearer %s\x7f",
        b"Bearer %s\r",  # a bare CR
        b"Bearer %s\xff\xfe",  # not UTF-8
        "Bearer %sé".encode(),  # not ASCII
        b"Basic %s",  # another scheme
        b"%s",  # no scheme
        b"Bearer  %s  trailing words",
        b"Bearer %s" + b"A" * 9000,  # longer than a header line may be
        b"Bearer %s\r\nAuthorization: Bearer again",  # two of them
    ]
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice:{secrets.token_hex(16)}\n")
    tokens.chmod(0o600)
    port = free_port()
    with Daemon(tmp_path, "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens)) as d:
        answers = [
            send(port, shape % mark.encode()) for shape, mark in zip(shapes, marks, strict=True)
        ]
        status, _ = d.call("GET", "/healthz")
        assert status == 200
    for answer in answers:
        assert answer.split(b" ")[1] in (b"400", b"401", b"431"), answer[:80]
    assert b" 500 " not in b"".join(a.split(b"\r\n")[0] for a in answers)
    text = d.log.read_text(errors="replace")
    for mark in marks:
        assert mark not in text and mark.lower() not in text.lower()
    events = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    failed = [e for e in events if e["event"] == "auth_failed"]
    assert failed and all(set(e) >= {"peer", "reason", "header_length"} for e in failed)
    assert {e["reason"] for e in failed} >= {"unknown_token", "not_bearer"}
    assert any(e["event"] == "bad_http_request" for e in events)
    assert "Traceback" not in text
