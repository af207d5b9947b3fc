"""Talking to batchd: where it listens, one JSON request, errors as exceptions.

Standard library only, and little of it, so the commands start fast: HTTP/1.1 of
our own (:mod:`batchclient.http11`; ``http.client`` alone would cost every command
about 20 ms of imports) over a Unix socket, or over TCP when ``$BATCHD_URL`` is set.
:func:`default_socket` gives the same path as the daemon's own default
(``batchd.server.paths``; a test keeps the two in step). Nothing goes over a socket
whose directory or server is not root's, the daemon user's or your own
(:func:`connect_unix`).
"""

from __future__ import annotations

import _socket  # socket's own core: the module socket costs a command ~2 ms of imports
import json
import os
import pwd
import stat
import struct

from .hints import Any
from .http11 import BadAnswer, Connection, Response

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


def check_peer(sock: _socket.socket, path: str, trusted: dict[int, str]) -> None:
    """Refuse a connected socket whose server runs as an untrusted user (SO_PEERCRED:
    the user that called listen())."""
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
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
    """One connection to batchd, kept for the next request; :meth:`request` returns the
    decoded JSON body."""

    def __init__(self, endpoint: Endpoint | None = None) -> None:
        self.endpoint = endpoint or Endpoint.from_env()
        self._conn: Connection | None = None
        self._prefix = ""

    # -- connection -------------------------------------------------------------

    def _connection(self) -> Connection:
        if self._conn is not None:
            return self._conn
        ep = self.endpoint
        if ep.url:
            sock, self._prefix = connect_url(ep.url, ep.timeout)
        else:
            sock = connect_unix(str(ep.socket_path), ep.timeout, ep.daemon_user)
        self._conn = Connection(sock)
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
            path = f"{path}?{'&'.join(f'{quote(k)}={quote(v)}' for k, v in query.items())}"
        headers = {"Host": "batchd", "Accept": "application/json", "Accept-Encoding": "identity"}
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
            try:
                conn = self._connection()
                response = conn.request(method, self._prefix + path, headers, payload)
                break
            except TransportError:  # a bad URL, an unsafe socket: nothing was sent
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
            except BadAnswer as exc:
                self.close()
                raise ProtocolError(
                    f"bad answer from batchd at {self.endpoint.where}: {exc}"
                ) from None
        if conn.closed:  # the daemon ended the connection with its answer
            self._conn = None
        return _decode(response, self.endpoint.where)

    def get(self, path: str, query: dict[str, str] | None = None) -> Any:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: object) -> Any:
        return self.request("POST", path, body=body)

    def patch(self, path: str, body: object) -> Any:
        return self.request("PATCH", path, body=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)


def _decode(response: Response, where: str) -> Any:
    """A 2xx answer's JSON (None for an empty body); else the API's refusal raised."""
    status, raw = response.status, response.body
    if 200 <= status < 300:
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ProtocolError(
                f"bad answer from batchd at {where}: not JSON (HTTP {status}): {raw[:80]!r}"
            ) from None
    raise _api_error(status, response.reason, raw)


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


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def quote(part: str) -> str:
    """One path segment (a job id or node name) or query word, percent-encoded as
    ``urllib.parse.quote(part, safe="")`` does it: UTF-8, all but letters, digits and
    ``-._~`` as ``%XX``."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in part.encode())


def connect_unix(
    path: str, timeout: float | None, daemon_user: str | None = None
) -> _socket.socket:
    """A stream socket connected to ``path``, once the socket's directory and the server's
    user are trusted (:func:`trusted_users`): root, the daemon's user or yourself."""
    trusted = trusted_users(daemon_user)
    check_socket_dir(path, trusted)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        check_peer(sock, path, trusted)
    except BaseException:
        sock.close()
        raise
    return sock


def connect_url(url: str, timeout: float) -> tuple[_socket.socket, str]:
    """A stream connected to ``http://HOST[:PORT][/PREFIX]`` (TLS for ``https://``), and
    the path prefix of the API. (socket, and ssl for https, are imported here: the
    commands on a Unix socket do without them.)"""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"BATCHD_URL={url!r}: expected http://HOST:PORT")
    try:
        port = parts.port
    except ValueError:
        raise TransportError(f"BATCHD_URL={url!r}: bad port") from None
    tls = parts.scheme == "https"
    sock = socket.create_connection((parts.hostname, port or (443 if tls else 80)), timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as http.client does
    if tls:  # as http.client's HTTPSConnection: certificate and host name checked
        import ssl

        context = ssl.create_default_context()
        context.set_alpn_protocols(["http/1.1"])
        try:
            sock = context.wrap_socket(sock, server_hostname=parts.hostname)
        except BaseException:
            sock.close()
            raise
    return sock, parts.path.rstrip("/")


def __getattr__(name: str) -> Any:
    # UnixHTTPConnection (http.client over the socket, which tests and benchmarks use)
    # is imported on first use only: http.client is what the commands do without.
    if name == "UnixHTTPConnection":
        from .unixconn import UnixHTTPConnection

        return UnixHTTPConnection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
