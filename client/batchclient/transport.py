"""Talking to batchd: where it listens, one JSON request, errors as exceptions.

Standard library only, so the commands start fast: ``http.client`` over a Unix
socket or over TCP when ``$BATCHD_URL`` is set. :func:`default_socket` gives the
same path as the daemon's own default (``batchd.server.paths``; a test keeps the
two in step).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from typing import Any
from urllib.parse import quote as _quote
from urllib.parse import urlencode, urlsplit

SYSTEM_SOCKET = "/run/batchd/batchd.sock"
HINT = "is the daemon running? set BATCHD_SOCKET or BATCHD_URL"


def default_socket() -> str:
    """The socket batchd listens on when nobody says otherwise.

    ``/run/batchd/batchd.sock`` if it exists (a system daemon), else your own daemon's:
    ``$XDG_RUNTIME_DIR/batchd/batchd.sock``, or ``/tmp/batchd-<uid>/batchd/batchd.sock``
    when XDG_RUNTIME_DIR is unset.
    """
    if os.path.exists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/batchd-{os.geteuid()}"
    return os.path.join(runtime, "batchd", "batchd.sock")


class TransportError(Exception):
    """The daemon could not be reached or gave no usable answer."""


class ConnectError(TransportError):
    """Nobody answers at the address (socket missing, connection refused...)."""

    def __init__(self, where: str, reason: str, hint: str = HINT) -> None:
        super().__init__(f"cannot connect to batchd at {where}: {reason} ({hint})")
        self.where = where
        self.reason = reason


class ProtocolError(TransportError):
    """The daemon answered something that is not the API's JSON."""


class ApiError(Exception):
    """A refusal from the API: a 4xx/5xx with ``{"error", "message"}``."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message


class Endpoint:
    """Where to send requests: a Unix socket path or an ``http://host:port`` URL."""

    def __init__(
        self,
        socket_path: str | None = None,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.socket_path = socket_path
        self.url = url
        self.token = token
        self.timeout = timeout

    @property
    def where(self) -> str:
        return self.url if self.url else str(self.socket_path)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Endpoint:
        """``$BATCHD_URL`` (+ ``$BATCHD_TOKEN``), else ``$BATCHD_SOCKET``, else the default."""
        env = os.environ if environ is None else environ
        timeout = 60.0
        raw_timeout = env.get("BATCHD_TIMEOUT")
        if raw_timeout:
            try:
                timeout = float(raw_timeout)
            except ValueError:
                raise TransportError(f"BATCHD_TIMEOUT={raw_timeout!r} is not a number") from None
        url = env.get("BATCHD_URL")
        if url:
            return cls(url=url, token=env.get("BATCHD_TOKEN") or None, timeout=timeout)
        return cls(socket_path=env.get("BATCHD_SOCKET") or default_socket(), timeout=timeout)


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such socket"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[0].lower() + text[1:] if text else text


class Client:
    """One connection to batchd; :meth:`request` returns the decoded JSON body."""

    def __init__(self, endpoint: Endpoint | None = None) -> None:
        self.endpoint = endpoint or Endpoint.from_env()
        self._conn: http.client.HTTPConnection | None = None
        self._prefix = ""

    # -- connection -------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is not None:
            return self._conn
        ep = self.endpoint
        if ep.url:
            parts = urlsplit(ep.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise TransportError(f"BATCHD_URL={ep.url!r}: expected http://HOST:PORT")
            try:
                port = parts.port
            except ValueError:
                raise TransportError(f"BATCHD_URL={ep.url!r}: bad port") from None
            cls = (
                http.client.HTTPSConnection
                if parts.scheme == "https"
                else http.client.HTTPConnection
            )
            self._conn = cls(parts.hostname, port, timeout=ep.timeout)
            self._prefix = parts.path.rstrip("/")
        else:
            self._conn = UnixHTTPConnection(str(ep.socket_path), ep.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- requests ---------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        query: dict[str, str] | None = None,
    ) -> Any:
        if query:
            path = f"{path}?{urlencode(query)}"
        headers = {"Host": "batchd", "Accept": "application/json"}
        if self.endpoint.token:
            headers["Authorization"] = f"Bearer {self.endpoint.token}"
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        # A kept-alive connection the daemon closed while idle fails at once: retry
        # once on a fresh one, except a POST (a submission must never go twice).
        attempts = 2 if self._conn is not None and method != "POST" else 1
        for attempt in range(attempts):
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=payload, headers=headers)
                response = conn.getresponse()
                status = response.status
                raw = response.read()
                break
            except OSError as exc:
                self.close()
                if isinstance(exc, ConnectionResetError | BrokenPipeError):
                    if attempt + 1 < attempts:
                        continue
                    raise ProtocolError(
                        f"lost connection to batchd at {self.endpoint.where}: {_reason(exc)}"
                    ) from None
                raise ConnectError(self.endpoint.where, _reason(exc)) from None
            except http.client.HTTPException as exc:
                self.close()
                raise ProtocolError(
                    f"bad answer from batchd at {self.endpoint.where}: {type(exc).__name__} {exc}"
                ) from None
        if 200 <= status < 300:
            if not raw.strip():
                return None
            try:
                return json.loads(raw)
            except ValueError:
                raise ProtocolError(
                    f"bad answer from batchd at {self.endpoint.where}: not JSON "
                    f"(HTTP {status}): {raw[:80]!r}"
                ) from None
        raise _api_error(status, response.reason, raw)

    def get(self, path: str, query: dict[str, str] | None = None) -> Any:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: object) -> Any:
        return self.request("POST", path, body=body)

    def patch(self, path: str, body: object) -> Any:
        return self.request("PATCH", path, body=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)


def _api_error(status: int, reason: str, raw: bytes) -> ApiError:
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return ApiError(status, str(data.get("error", "")), data["message"])
    text = raw.decode("utf-8", "replace").strip().splitlines()
    detail = f": {text[0][:200]}" if text else ""
    return ApiError(status, "", f"batchd answered HTTP {status} {reason}{detail}")


def quote(part: str) -> str:
    """One path segment (a job id or node name), percent-encoded."""
    return _quote(part, safe="")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket (the Host header is ``batchd``)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("batchd", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
