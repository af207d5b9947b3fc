"""Who is calling: Unix socket peer credentials, or a bearer token on TCP."""

from __future__ import annotations

import hashlib
import hmac
import os
import pwd
import socket
import stat
import struct
from pathlib import Path

from aiohttp import web

from batchd.server.errors import ApiError

NEED_TOKEN = "send Authorization: Bearer TOKEN (see --token-file)"
# "/" only leads to the page (a redirect to /ui), so it is open like the page.
OPEN_PATHS = frozenset({"/", "/healthz", "/metrics", "/openapi.json"})
PAGE_PATH = "/ui"  # the web page, and its files below it


def is_page(path: str) -> bool:
    """Whether a path is the web page or one of its files (which hold no data)."""
    return path == PAGE_PATH or path.startswith(PAGE_PATH + "/")


def is_open(path: str) -> bool:
    """Whether anyone may read a path without an identity: health, metrics, the
    document, and the web page with its files."""
    return path in OPEN_PATHS or is_page(path)


class TokenFileError(ValueError):
    """A token file that cannot be used."""


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid{uid}"


def load_tokens(path: str | Path) -> dict[str, str]:
    """Token -> user from lines ``USER:TOKEN``; the file must be private to its owner."""
    path = Path(path)
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read the token file: {exc.strerror}") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(f"{path}: the token file must not be readable by others (chmod 600)")
    tokens: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, token = line.partition(":")
        if not sep or not user.strip() or len(token.strip()) < 16:
            raise TokenFileError(
                f"{path}: line {number}: expected USER:TOKEN with a token of 16 characters or more"
            )
        tokens[token.strip()] = user.strip()
    if not tokens:
        raise TokenFileError(f"{path}: no USER:TOKEN lines")
    return tokens


# struct ucred: a pid_t (signed), then a uid_t and a gid_t (unsigned, up to 2^32 - 2).
PEER_CREDENTIALS = struct.Struct("iII")


def peer_user(request: web.Request) -> str | None:
    """The user of the process at the other end of a Unix socket, or None on TCP."""
    transport = request.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None or sock.family != socket.AF_UNIX:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
    _pid, uid, _gid = PEER_CREDENTIALS.unpack(creds)
    return user_name(uid)


class AuthFailure(ApiError):
    """A request without a valid bearer token: why (``reason``, a fixed word) and how long
    its header was; never the header's text, which may hold a real token."""

    def __init__(self, reason: str, length: int, message: str) -> None:
        super().__init__(401, "unauthorized", message)
        self.reason = reason
        self.length = length


def _digest(token: str) -> bytes:
    # surrogatepass: a header of undecodable bytes comes as surrogates; it is hashed too
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def token_digests(tokens: dict[str, str]) -> dict[bytes, str]:
    """Token -> user, as what ``token_user`` compares: each token's SHA-256."""
    return {_digest(token): user for token, user in tokens.items()}


def token_user(request: web.Request, digests: dict[bytes, str]) -> str:
    """The user of the request's bearer token. Every token is compared, in constant time,
    with the digest of the one given: the time taken tells nothing of either."""
    header = request.headers.get("Authorization")
    if header is None:
        raise AuthFailure("missing", 0, NEED_TOKEN)
    scheme, _, given = header.partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer":
        raise AuthFailure("not_bearer", len(header), NEED_TOKEN)
    if not given:
        raise AuthFailure("empty", len(header), NEED_TOKEN)
    digest = _digest(given)
    found = None
    for known, user in digests.items():
        if hmac.compare_digest(known, digest):
            found = user
    if found is None:
        raise AuthFailure("unknown_token", len(header), "the bearer token is not valid")
    return found


def daemon_user() -> str:
    return user_name(os.geteuid())
