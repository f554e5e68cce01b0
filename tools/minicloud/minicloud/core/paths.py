"""Where minicloud keeps its state, and the layout of that folder."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

STATE_DIR_ENV = "MINICLOUD_STATE_DIR"
STATE_DIR_NAME = ".minicloud"
PROJECT_MARKER = "galaxy.yml"
# A unix socket path must fit in sockaddr_un (108 bytes on Linux); HAProxy takes at most 97 characters for its
# stats socket. The longest name in the sockets folder is a load balancer's (``lb-`` and 13 characters of its id).
MAX_SOCKET_PATH = 97
LONGEST_SOCKET_NAME = "lb-" + "x" * 13 + ".sock"


def resolve_state_dir(explicit: str | os.PathLike | None = None, cwd: Path | None = None) -> Path:
    """Pick the state folder.

    Order: the explicit value, then ``$MINICLOUD_STATE_DIR``, then ``.minicloud/``
    in the nearest parent of ``cwd`` holding ``galaxy.yml``, else ``./.minicloud``.
    """
    if explicit:
        return Path(explicit).expanduser().absolute()
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env).expanduser().absolute()
    cwd = (cwd or Path.cwd()).absolute()
    for folder in (cwd, *cwd.parents):
        if (folder / PROJECT_MARKER).is_file():
            return folder / STATE_DIR_NAME
    return cwd / STATE_DIR_NAME


class StateDir:
    """The layout of one minicloud state folder."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).absolute()

    def __repr__(self) -> str:
        return f"StateDir({str(self.root)!r})"

    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def status_file(self) -> Path:
        return self.root / "status"

    @property
    def clouds_yaml(self) -> Path:
        return self.root / "clouds.yaml"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    @property
    def run(self) -> Path:
        return self.root / "run"

    def pidfile(self, name: str) -> Path:
        return self.run / f"{name}.pid"

    def service(self, name: str) -> Path:
        """Folder of one service: its config, database and keys."""
        return self.root / name

    def policy_file(self, name: str) -> Path:
        """Overrides of one service's policy rules (oslo.policy reads the file again when it changes)."""
        return self.service(name) / "policy.json"

    @property
    def template(self) -> Path:
        """Snapshot of freshly initialised data, used by ``up --fresh``."""
        return self.root / "template"

    @property
    def traffic_db(self) -> Path:
        return self.root / "traffic.sqlite"

    @property
    def octavia_mode(self) -> Path:
        return self.root / "octavia-mode.json"

    @property
    def octavia_mode_applied(self) -> Path:
        return self.root / "octavia-mode.applied"

    @property
    def sockets(self) -> Path:
        """Folder for unix sockets; a short one under /tmp if the state path is too long."""
        own = self.run / "sock"
        if len(str(own / LONGEST_SOCKET_NAME)) <= MAX_SOCKET_PATH:
            return own
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"minicloud-{digest}"
