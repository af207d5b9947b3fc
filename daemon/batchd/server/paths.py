"""Where the daemon keeps its socket and its state when nobody says otherwise.

The PBS commands find the socket by the same rule (``batchclient.transport``);
a test keeps the two in step, since the daemon never imports the client.
"""

from __future__ import annotations

import os
from pathlib import Path

SYSTEM_SOCKET = "/run/batchd/batchd.sock"


def default_socket() -> str:
    """``/run/batchd/batchd.sock`` if it exists (a system daemon), else
    ``$XDG_RUNTIME_DIR/batchd/batchd.sock`` when XDG_RUNTIME_DIR is set,
    else ``/tmp/batchd-<uid>/batchd.sock``."""
    if os.path.exists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "batchd", "batchd.sock")
    return f"/tmp/batchd-{os.getuid()}/batchd.sock"


def default_state_path() -> Path:
    if "STATE_DIRECTORY" in os.environ:  # set by systemd's StateDirectory=
        return Path(os.environ["STATE_DIRECTORY"].split(":")[0]) / "state.db"
    if os.geteuid() == 0:
        return Path("/var/lib/batchd/state.db")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "batchd" / "state.db"
