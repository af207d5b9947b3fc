"""Progress of runs: a tqdm bar with ETA on a terminal, plain lines in a pipe or log."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

LINE_INTERVAL = 10.0  # seconds between plain progress lines


class Progress:
    """Finished runs out of ``total``; ``lines``: plain lines when not on a terminal."""

    def __init__(
        self, total: int, desc: str, *, lines: bool = True, stream: TextIO | None = None
    ) -> None:
        self.total = total
        self.desc = desc
        self.stream = stream or sys.stderr
        self.done = 0
        self.failed = 0
        self.began = time.monotonic()
        self.last_line = -LINE_INTERVAL
        self.bar: Any = None
        self.lines = lines and total > 0
        if total > 0 and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="run", file=self.stream)
            self.lines = False

    def step(self, label: str, *, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        if self.bar is not None:
            self.bar.set_postfix_str(label)
            self.bar.update(1)
        elif self.lines:
            now = time.monotonic() - self.began
            if now - self.last_line >= LINE_INTERVAL or self.done == self.total:
                self.last_line = now
                print(self.line(now, label), file=self.stream, flush=True)

    def line(self, elapsed: float, label: str) -> str:
        left = elapsed / self.done * (self.total - self.done)
        failed = f", {self.failed} failed" if self.failed else ""
        return (
            f"{self.desc}: {self.done}/{self.total} runs{failed}, {elapsed:,.0f} s, "
            f"about {left:,.0f} s left (last: {label})"
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
