"""aiohttp's log of a request it could not parse quotes the raw line, an Authorization
header's token with it. Such a request is logged as one line instead: the peer and the
kind of error, at a bounded rate."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError

from batchd.server.ratelog import RateLimitedLog

SERVER_LOGGER = "aiohttp.server"


class ParseErrorFilter(logging.Filter):
    def __init__(self, log: RateLimitedLog) -> None:
        super().__init__()
        self.log = log

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        peer = str(args[0]) if args else "unknown"
        self.log.warning("bad_http_request", peer=peer, error=type(exc).__name__, status=exc.code)
        return False


def quiet_parse_errors() -> None:
    """Put the filter on aiohttp's server logger (once)."""
    logger = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(f, ParseErrorFilter) for f in logger.filters):
        logger.addFilter(ParseErrorFilter(RateLimitedLog()))
