"""Talking to batchd: where it listens, one JSON request, errors as exceptions.

Standard library only, so the commands start fast: ``http.client`` over a Unix
socket or over TCP when ``$BATCHD_URL`` is set. :func:`default_socket` gives the
same path as the daemon's own default (``batchd.server.paths``; a test keeps the
two in step). Nothing goes over a socket whose directory or server is not root's,
the daemon user's or your own (:class:`UnixHTTPConnection`).
"""

from __future__ import annotations

import http.client
import json
import os
import pwd
import socket
import stat
import struct
from typing import Any
from urllib.parse import quote as _quote
from urllib.parse import urlencode, urlsplit

SYSTEM_SOCKET = "/run/batchd/batchd.sock"
DAEMON_USER = "batchd"  # the system daemon's user (User= in systemd/batchd.service)
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


class UnsafeSocketError(TransportError):
    """The socket may not be batchd's: another user could have put it there, or the
    server on it runs as another user. Nothing was sent."""


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid{uid}"


def trusted_users(daemon_user: str | None = None) -> dict[int, str]:
    """Who may run the daemon behind a socket, uid -> name: root, the daemon's user
    (``daemon_user``, else ``batchd`` if that user exists) and yourself."""
    trusted = {0: "root"}
    name = daemon_user or DAEMON_USER
    try:
        trusted.setdefault(int(name) if name.isdigit() else pwd.getpwnam(name).pw_uid, name)
    except KeyError:
        if daemon_user:  # named on purpose: a typo must not go unnoticed
            raise TransportError(f"BATCHD_DAEMON_USER={daemon_user!r}: no such user") from None
    me = os.geteuid()
    trusted.setdefault(me, _user(me))
    return trusted


def _expected(trusted: dict[int, str]) -> str:
    names = list(dict.fromkeys(trusted.values()))
    either = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"expected {either} (set BATCHD_DAEMON_USER if batchd runs as another user)"


def check_socket_dir(path: str, trusted: dict[int, str]) -> None:
    """Refuse a socket whose directory is not a trusted user's, or that others may write.
    An OSError (no such directory...) is left to the caller."""
    folder = os.path.dirname(os.path.abspath(path))
    info = os.stat(folder)
    if info.st_uid not in trusted:
        raise UnsafeSocketError(
            f"refusing the socket {path}: its directory {folder} is owned by "
            f"{_user(info.st_uid)}, {_expected(trusted)}"
        )
    if info.st_mode & 0o022:
        raise UnsafeSocketError(
            f"refusing the socket {path}: its directory {folder} is writable by its group "
            f"or others (mode {stat.S_IMODE(info.st_mode):04o})"
        )


def check_peer(sock: socket.socket, path: str, trusted: dict[int, str]) -> None:
    """Refuse a connected socket whose server runs as an untrusted user (SO_PEERCRED:
    the user that called listen())."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    if uid not in trusted:
        raise UnsafeSocketError(
            f"refusing the socket {path}: the server on it runs as {_user(uid)}, "
            f"{_expected(trusted)}"
        )


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
        daemon_user: str | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.url = url
        self.token = token
        self.timeout = timeout
        self.daemon_user = daemon_user

    @property
    def where(self) -> str:
        return self.url if self.url else str(self.socket_path)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Endpoint:
        """``$BATCHD_URL`` (+ ``$BATCHD_TOKEN``), else ``$BATCHD_SOCKET``, else the default
        (with ``$BATCHD_DAEMON_USER``, the user a daemon on the socket may run as)."""
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
        return cls(
            socket_path=env.get("BATCHD_SOCKET") or default_socket(),
            timeout=timeout,
            daemon_user=env.get("BATCHD_DAEMON_USER") or None,
        )


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
            self._conn = UnixHTTPConnection(str(ep.socket_path), ep.timeout, ep.daemon_user)
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
            except TransportError:  # an unsafe socket: nothing was sent
                self.close()
                raise
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
    """HTTP/1.1 over a Unix stream socket (the Host header is ``batchd``).

    Before anything is sent, the socket's directory and the server's user must be
    trusted (:func:`trusted_users`): root, the daemon's user or yourself.
    """

    def __init__(self, path: str, timeout: float, daemon_user: str | None = None) -> None:
        super().__init__("batchd", timeout=timeout)
        self.unix_path = path
        self.daemon_user = daemon_user

    def connect(self) -> None:
        trusted = trusted_users(self.daemon_user)
        check_socket_dir(self.unix_path, trusted)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
            check_peer(sock, self.unix_path, trusted)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
