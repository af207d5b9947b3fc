"""HTTP/1.1 on a connected stream socket: what the commands need, no more.

``http.client`` would do, but importing it (with ``email`` for the headers, and
``ssl``) costs every command about 20 ms of its start. A :class:`Connection`
sends one request at a time, all in one write, and reads the whole answer: the
status line, the headers, then the body by ``Content-Length``, in chunks
(``Transfer-Encoding: chunked``, as the daemon streams ``GET /jobs``) or up to
the end of the connection. The connection stays open for the next request
unless the server closes it (``Connection: close``, HTTP/1.0, a body that ends
with the connection). Nothing is decoded: no content coding is asked for
(``Accept-Encoding: identity``).

Socket errors (``OSError``) reach the caller as they are; a server that closes
the connection before the first byte of an answer gives
:class:`RemoteDisconnected` (a ``ConnectionResetError``, as ``http.client``'s:
what a kept-alive connection that the server dropped while idle looks like);
anything else that is not HTTP/1.x as read here gives :class:`BadAnswer`.
"""

from __future__ import annotations

import _socket  # the base of socket.socket and ssl.SSLSocket, without importing either

MAX_LINE = 65536  # a status or header line, or a chunk's size line (http.client's limit)
MAX_HEADERS = 100
_RECV = 65536
_NO_BODY = (204, 304)
_HEX = "0123456789abcdefABCDEF"


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


class BadAnswer(Exception):
    """The server answered something that is not HTTP/1.x; the message says what."""


class RemoteDisconnected(ConnectionResetError):
    """The server closed the connection without answering."""


class Response:
    """A whole answer: status, reason, headers (names lowercased, repeats joined with
    ``", "``) and body."""

    __slots__ = ("body", "headers", "reason", "status")

    def __init__(self, status: int, reason: str, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body


class Connection:
    """HTTP/1.1 on ``sock``, one request at a time (:meth:`request`). After an answer
    that ends the connection, :attr:`closed` is true and the socket is closed."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.closed = False
        self._buf = bytearray()

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def request(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None = None,
    ) -> Response:
        """Send ``method target`` with ``headers`` (plus Content-Length when there is a
        body, or the method is one that has one) and read the answer."""
        if self.closed:
            raise BadAnswer("the connection is closed")
        lines = [f"{method} {target} HTTP/1.1"]
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        for line in lines:  # no header injection (http.client refuses these too)
            if "\r" in line or "\n" in line or "\0" in line:
                raise ValueError(f"a control character in the request: {line!r}")
        head = "\r\n".join(lines)
        self.sock.sendall(head.encode("latin-1") + b"\r\n\r\n" + (body or b""))
        response, close = self._answer(method)
        if close:
            self.close()
        return response

    # -- reading ------------------------------------------------------------------

    def _answer(self, method: str) -> tuple[Response, bool]:
        """The answer and whether it ends the connection."""
        while True:
            version, status, reason = self._status_line()
            headers = self._headers()
            if not 100 <= status < 200:
                break  # an interim answer (100 Continue...) is followed by the real one
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        close = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)
        if method == "HEAD" or status in _NO_BODY:
            return Response(status, reason, headers, b""), close
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.rpartition(",")[2].strip().lower() == "chunked":
                return Response(status, reason, headers, self._chunked()), close
            return Response(status, reason, headers, self._to_end()), True
        length = headers.get("content-length")
        if length is None:
            return Response(status, reason, headers, self._to_end()), True
        values = {v.strip() for v in length.split(",")}  # repeats must agree
        size = values.pop()
        if values or not _digits(size):
            raise BadAnswer(f"a bad Content-Length: {length!r}")
        return Response(status, reason, headers, self._exactly(int(size), "the body")), close

    def _status_line(self) -> tuple[str, int, str]:
        if not self._buf and not self._recv():
            raise RemoteDisconnected("Remote end closed connection without response")
        line = self._line("the status line")
        version, _, rest = line.partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or len(code) != 3 or not _digits(code):
            raise BadAnswer(f"not an HTTP/1.x status line: {line[:80]!r}")
        return version, int(code), reason.strip()

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        last = ""
        for _ in range(MAX_HEADERS + 1):
            line = self._line("the headers")
            if not line:
                return headers
            if line[0] in " \t" and last:  # an obsolete folded line continues the last one
                headers[last] += " " + line.strip()
                continue
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise BadAnswer(f"not a header line: {line[:80]!r}")
            last = name.lower()
            value = value.strip()
            headers[last] = f"{headers[last]}, {value}" if last in headers else value
        raise BadAnswer(f"more than {MAX_HEADERS} headers")

    def _chunked(self) -> bytes:
        parts = []
        while True:
            line = self._line("a chunk's size")
            size = line.partition(";")[0].strip()  # a chunk extension is ignored
            if not size or size.strip(_HEX):
                raise BadAnswer(f"not a chunk size: {line[:80]!r}")
            count = int(size, 16)
            if count == 0:
                break
            parts.append(self._exactly(count, "a chunk"))
            if self._line("a chunk's end"):
                raise BadAnswer("a chunk longer than its size")
        while self._line("the trailer"):  # trailer fields: not used
            pass
        return b"".join(parts)

    def _to_end(self) -> bytes:
        while self._recv():
            pass
        data = bytes(self._buf)
        self._buf.clear()
        return data

    def _exactly(self, count: int, what: str) -> bytes:
        buf = self._buf
        if len(buf) >= count:
            data = bytes(buf[:count])
            del buf[:count]
            return data
        # The rest is read into place, not through the buffer (a body of megabytes).
        out = bytearray(count)
        got = len(buf)
        out[:got] = buf
        buf.clear()
        with memoryview(out) as view:
            while got < count:
                received = self.sock.recv_into(view[got:])
                if not received:
                    raise BadAnswer(
                        f"the connection closed after {got} of the {count} bytes of {what}"
                    )
                got += received
        return bytes(out)

    def _line(self, what: str) -> str:
        """The next line without its end (CRLF, or LF alone), as latin-1 text."""
        buf = self._buf
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end >= 0:
                break
            if len(buf) > MAX_LINE:
                raise BadAnswer(f"a line longer than {MAX_LINE} bytes in {what}")
            start = len(buf)
            if not self._recv():
                raise BadAnswer(f"the connection closed in {what}")
        if end > MAX_LINE:
            raise BadAnswer(f"a line longer than {MAX_LINE} bytes in {what}")
        line = bytes(buf[:end]).rstrip(b"\r").decode("latin-1")
        del buf[: end + 1]
        return line

    def _recv(self) -> bool:
        """Read what the server sent next into the buffer; False at the end."""
        data = self.sock.recv(_RECV)
        self._buf += data
        return bool(data)
