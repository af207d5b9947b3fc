"""Where the daemon keeps its socket and its state when nobody says otherwise.

The PBS commands find the socket by the same rule (``batchclient.transport``), after
looking for a system daemon's ``/run/batchd/batchd.sock``; a test keeps the two in
step, since the daemon never imports the client.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_socket() -> str:
    """Where this daemon listens: ``$RUNTIME_DIRECTORY/batchd.sock`` under systemd
    (``RuntimeDirectory=batchd``: ``/run/batchd``), else ``$XDG_RUNTIME_DIR/batchd/batchd.sock``,
    else ``/tmp/batchd-<uid>/batchd/batchd.sock``: ``/tmp/batchd-<uid>`` stands in for the
    runtime directory, made 0700 when missing and refused when someone else owns it or it
    is a symbolic link (``batchd.server.socketdir``)."""
    if "RUNTIME_DIRECTORY" in os.environ:  # set by systemd's RuntimeDirectory=
        return os.path.join(os.environ["RUNTIME_DIRECTORY"].split(":")[0], "batchd.sock")
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/batchd-{os.geteuid()}"
    return os.path.join(runtime, "batchd", "batchd.sock")


def default_state_path() -> Path:
    if "STATE_DIRECTORY" in os.environ:  # set by systemd's StateDirectory=
        return Path(os.environ["STATE_DIRECTORY"].split(":")[0]) / "state.db"
    if os.geteuid() == 0:
        return Path("/var/lib/batchd/state.db")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "batchd" / "state.db"
