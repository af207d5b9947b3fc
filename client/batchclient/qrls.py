"""qrls: release holds (POST /jobs/{id}/release); the default hold type is u."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import run
from .qhold import hold_main


def main(argv: Sequence[str] | None = None) -> int:
    return run("qrls", lambda args: hold_main("qrls", "/release", args), argv)


if __name__ == "__main__":
    sys.exit(main())
