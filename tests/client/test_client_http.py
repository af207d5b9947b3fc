"""The commands' own HTTP/1.1 (batchclient.http11, through transport.Client) against a
scripted server: what goes out, status codes, bodies by length, in chunks or up to the
end, kept-alive and closed connections, and servers that misbehave."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit
from urllib.parse import quote as urllib_quote

import pytest

from batchclient import transport
from batchclient.http11 import BadAnswer, Connection, RemoteDisconnected
from batchclient.transport import (
    ApiError,
    Client,
    ConnectError,
    Endpoint,
    ProtocolError,
    quote,
)

CLOSE = None  # a step of the script: close the connection without answering


def answer(
    status: str = "200 OK", body: bytes = b"", headers: tuple[str, ...] = (), length: bool = True
) -> bytes:
    """A raw answer; ``length``: with a Content-Length for ``body``."""
    lines = [f"HTTP/1.1 {status}", *headers]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def json_answer(data: object, status: str = "200 OK", *headers: str) -> bytes:
    body = json.dumps(data).encode()
    return answer(status, body, ("Content-Type: application/json", *headers))


def chunked(*chunks: bytes, trailer: bytes = b"") -> bytes:
    """A chunked answer of ``chunks`` (the last-chunk added), with a chunk extension."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks)
    return head + body + b"0\r\n" + trailer + b"\r\n"


class Scripted:
    """A server on a Unix socket (or TCP) that reads each request whole and sends the
    next step of its script: raw bytes (then ``CLOSE`` as the next step hangs up), or
    ``CLOSE`` to hang up without answering. It records (connection number, request
    head, body)."""

    def __init__(
        self, steps: list[bytes | None], tcp: bool = False, tls: ssl.SSLContext | None = None
    ) -> None:
        self.steps = list(steps)
        self.tls = tls
        self.seen: list[tuple[int, list[str], bytes]] = []
        self.dir = tempfile.mkdtemp(prefix="bq")
        if tcp:
            self.srv = socket.create_server(("127.0.0.1", 0))
            self.endpoint = Endpoint(url=f"http://127.0.0.1:{self.srv.getsockname()[1]}", timeout=5)
        else:
            path = os.path.join(self.dir, "b.sock")
            self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.srv.bind(path)
            self.srv.listen()
            self.endpoint = Endpoint(socket_path=path, timeout=5)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        number = 0
        while self.steps:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            number += 1
            if self.tls is not None:
                try:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                except (OSError, ValueError):  # a client that refused the certificate
                    conn.close()
                    continue
            with conn, contextlib.suppress(OSError):  # a client that went away
                while self.steps:
                    request = self._read(conn)
                    if request is None:
                        break
                    self.seen.append((number, *request))
                    step = self.steps.pop(0)
                    if step is CLOSE:
                        break
                    conn.sendall(step)
                    if self.steps and self.steps[0] is CLOSE:
                        self.steps.pop(0)
                        break

    @staticmethod
    def _read(conn: socket.socket) -> tuple[list[str], bytes] | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        while len(body) < length:
            body += conn.recv(65536)
        return lines, body

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes up an accept() (close() alone does not)
            self.srv.shutdown(socket.SHUT_RDWR)
        self.srv.close()
        self.thread.join(5)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def serve() -> Iterator[type[Scripted]]:
    made: list[Scripted] = []

    class Server(Scripted):
        def __init__(
            self, steps: list[bytes | None], tcp: bool = False, tls: ssl.SSLContext | None = None
        ) -> None:
            super().__init__(steps, tcp, tls)
            made.append(self)

    yield Server
    for server in made:
        server.close()


# -- what goes out --------------------------------------------------------------------------


def test_a_request_is_one_write_with_its_headers(serve):
    server = serve([json_answer({"id": "1.hpcline"}, "201 Created")])
    client = Client(server.endpoint)
    assert client.post("/jobs", {"name": "é x"}) == {"id": "1.hpcline"}
    client.close()
    [(number, head, body)] = server.seen
    assert head[0] == "POST /jobs HTTP/1.1"
    headers = dict(line.split(": ", 1) for line in head[1:])
    assert headers == {
        "Host": "batchd",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
    }
    assert json.loads(body) == {"name": "é x"}


def test_the_token_and_the_url_prefix_over_tcp(serve):
    server = serve([json_answer({"ok": True}), json_answer({})], tcp=True)
    url = server.endpoint.url
    client = Client(Endpoint(url=f"{url}/api/", token="s3cret", timeout=5))
    assert client.get("/server", {"state": "Q R", "user": "ä/b&c"}) == {"ok": True}
    assert client.delete("/jobs/1") == {}
    client.close()
    (_, first, body), (_, second, _) = server.seen
    url = urlsplit(first[0].split(" ")[1])
    assert url.path == "/api/server" and body == b""
    assert dict(parse_qsl(url.query)) == {"state": "Q R", "user": "ä/b&c"}
    assert "Authorization: Bearer s3cret" in first
    assert second[0] == "DELETE /api/jobs/1 HTTP/1.1"
    assert not any(line.startswith("Content-Length") for line in second)  # no body, none


def test_a_control_character_in_a_header_is_refused(serve):
    server = serve([json_answer({})])
    client = Client(Endpoint(socket_path=server.endpoint.socket_path, token="a\r\nX: y"))
    with pytest.raises(ValueError, match="control character"):
        client.get("/server")
    client.close()
    assert server.seen == []


def test_quote_is_urllibs_without_safe_characters():
    for text in ("12.hpcline", "12[3].hpcline", "a b/c?d#e%f&g=h+i", "node-01_x.y~z", "é€😀", ""):
        assert quote(text) == urllib_quote(text, safe="")


# -- answers --------------------------------------------------------------------------------


def test_status_codes_and_bodies(serve):
    server = serve(
        [
            json_answer({"a": [1, 2]}),
            answer("204 No Content", length=False),
            answer("200 OK"),  # Content-Length: 0
            json_answer({"error": "not_found", "message": "Unknown Job Id 9"}, "404 Not Found"),
            answer("500 Internal Server Error", b"Internal Server Error\nmore"),
            json_answer({"error": "conflict"}, "409 Conflict"),  # no message: the status line
        ]
    )
    client = Client(server.endpoint)
    assert client.get("/a") == {"a": [1, 2]}
    assert client.delete("/b") is None
    assert client.get("/c") is None
    with pytest.raises(ApiError) as refused:
        client.get("/jobs/9")
    assert (refused.value.status, refused.value.error, refused.value.message) == (
        404,
        "not_found",
        "Unknown Job Id 9",
    )
    with pytest.raises(
        ApiError, match=r"^batchd answered HTTP 500 Internal Server Error: Internal Server Error$"
    ):
        client.get("/d")
    with pytest.raises(
        ApiError, match=r'^batchd answered HTTP 409 Conflict: \{"error": "conflict"\}$'
    ):
        client.get("/e")
    client.close()
    assert {number for number, _, _ in server.seen} == {1}  # all on one kept-alive connection


def test_a_chunked_answer(serve):
    jobs = [{"id": f"{n}.hpcline", "name": "x" * 300} for n in range(3000)]
    text = json.dumps({"jobs": jobs}).encode()
    pieces = [text[i : i + 7919] for i in range(0, len(text), 7919)]
    server = serve([chunked(*pieces, trailer=b"X-Trailer: 1\r\n"), json_answer({"next": 1})])
    client = Client(server.endpoint)
    assert client.get("/jobs") == {"jobs": jobs}
    assert client.get("/server") == {"next": 1}  # the chunked answer was read exactly
    client.close()
    assert [number for number, _, _ in server.seen] == [1, 1]


def test_an_answer_up_to_the_end_of_the_connection(serve):
    old = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + json.dumps([1]).encode()
    server = serve([old, CLOSE, json_answer([2])])
    client = Client(server.endpoint)
    assert client.get("/a") == [1]
    assert client.get("/b") == [2]  # on a new connection, without a retry
    client.close()
    assert [number for number, _, _ in server.seen] == [1, 2]


def test_connection_close_opens_a_new_connection_next_time(serve):
    server = serve([json_answer([1], "200 OK", "Connection: close"), CLOSE, json_answer([2])])
    client = Client(server.endpoint)
    assert client.post("/jobs", {}) == [1]
    assert client.post("/jobs", {}) == [2]  # a POST is never retried: this one is new
    client.close()
    assert [number for number, _, _ in server.seen] == [1, 2]


def test_an_interim_answer_is_skipped(serve):
    server = serve([b"HTTP/1.1 100 Continue\r\n\r\n" + json_answer({"ok": 1})])
    client = Client(server.endpoint)
    assert client.get("/a") == {"ok": 1}
    client.close()


# -- servers that misbehave -----------------------------------------------------------------


def test_a_server_that_closes_without_answering(serve):
    server = serve([CLOSE])
    client = Client(server.endpoint)
    with pytest.raises(ProtocolError) as lost:
        client.get("/server")
    assert str(lost.value) == (
        f"lost connection to batchd at {server.endpoint.socket_path}: "
        "remote end closed connection without response"
    )


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (answer("200 OK", b'{"a": 1}', ("Content-Length: 100",), length=False)
         , "the connection closed after 8 of the 100 bytes of the body"),
        (chunked(b'{"a": 1}')[:-5], "the connection closed in a chunk's size"),
        (chunked(b'{"a": 1}')[:-11], "the connection closed after 4 of the 8 bytes of a chunk"),
        (chunked(b'{"a": 1}')[:-2], "the connection closed in the trailer"),
        (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", "the connection closed in the headers"),
        (b"SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP/1.x status line: 'SSH-2.0-OpenSSH_9.2'"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP/1.x status line: 'HTTP/1.1 2000 OK'"),
        (answer("200 OK", b"{}", ("Content-Length: 2, 3",), length=False),
         "a bad Content-Length: '2, 3'"),
        (answer("200 OK", b"{}", ("Bad Header",)), "not a header line: 'Bad Header'"),
        (chunked(b"{}").replace(b"2;ext=1", b"zz"), "not a chunk size: 'zz'"),
        (chunked(b"{}").replace(b"2;ext=1", b"1"), "a chunk longer than its size"),
    ],
)  # fmt: skip
def test_a_broken_answer_is_one_clear_error(serve, raw, why):
    server = serve([raw, CLOSE])
    client = Client(server.endpoint)
    with pytest.raises(ProtocolError) as bad:
        client.get("/jobs")
    assert str(bad.value) == f"bad answer from batchd at {server.endpoint.socket_path}: {why}"
    assert client._conn is None  # dropped: the next request starts afresh


def test_a_line_too_long():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000 + b"\r\n\r\n")
        with pytest.raises(BadAnswer, match="a line longer than 65536 bytes in the headers"):
            Connection(ours).request("GET", "/", {})


def test_the_closed_connection_error_is_a_reset():
    # What lets a kept-alive connection that the daemon dropped be retried (transport).
    assert issubclass(RemoteDisconnected, ConnectionResetError)


def test_a_server_that_never_answers_times_out(serve):
    server = serve([])  # accepts nothing: the connection waits in the backlog
    client = Client(Endpoint(socket_path=server.endpoint.socket_path, timeout=0.2))
    with pytest.raises(ConnectError, match=r": timed out \(is the daemon running\?"):
        client.get("/server")


def test_http_client_over_the_socket_is_still_there(serve):
    server = serve([json_answer({"status": "ok"})])
    conn = transport.UnixHTTPConnection(str(server.endpoint.socket_path), timeout=5)
    try:
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())) == (200, {"status": "ok"})
    finally:
        conn.close()
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        transport.Nothing  # noqa: B018


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
def test_https_checks_the_certificate(serve, monkeypatch, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost"],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = serve([json_answer({"ok": 1}), json_answer({"ok": 2})], tcp=True, tls=context)
    port = urlsplit(server.endpoint.url).port
    with pytest.raises(ConnectError, match="certificate verify failed"):
        Client(Endpoint(url=f"https://localhost:{port}", timeout=5)).get("/a")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now the certificate is trusted
    client = Client(Endpoint(url=f"https://localhost:{port}/api", token="t", timeout=5))
    assert client.get("/a") == {"ok": 1}
    assert client.get("/b") == {"ok": 2}
    client.close()
    assert [(n, head[0]) for n, head, _ in server.seen] == [
        (2, "GET /api/a HTTP/1.1"),  # the first connection refused the certificate
        (2, "GET /api/b HTTP/1.1"),
    ]
