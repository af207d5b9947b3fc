"""Structured logs with structlog: key=value on a terminal, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys

import structlog


def setup_logging(level: str = "info", *, json: bool | None = None) -> None:
    if json is None:
        json = not sys.stderr.isatty()
    # Tracebacks without the values of local variables, which may hold a request's token.
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
