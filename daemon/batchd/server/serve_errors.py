"""The refusal of ``batchd serve`` to start: one line naming the option or file."""

from __future__ import annotations


class ServeError(ValueError):
    """Options or files the daemon cannot start with."""
