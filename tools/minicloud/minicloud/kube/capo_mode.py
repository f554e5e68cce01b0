"""The mode of the emulated CAPI infrastructure provider (CAPO): its reaction to a paused Cluster,
chosen at run time. (Not the Octavia provider emulator: that is :mod:`minicloud.octavia_provider`.)

``block-move``  keeps ``clusterctl.cluster.x-k8s.io/block-move`` on its objects while it
                reconciles and removes it ``delay`` seconds after it sees the pause (CAPZ).
``silent``      never reports anything, but goes on writing to its objects for ``delay``
                seconds after the pause (CAPO with a reconcile in flight). The default:
                it is what the OpenStack provider does.
``stuck``       keeps the annotation and never acknowledges the pause.

Kept in ``capi-provider-mode.json`` in the state folder, acknowledged through
``capi-provider-mode.applied`` (the same mechanism as the Octavia emulator's mode).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

BLOCK_MOVE = "block-move"
SILENT = "silent"
STUCK = "stuck"
MODES = (BLOCK_MOVE, SILENT, STUCK)
DEFAULT_MODE = SILENT
DEFAULT_DELAY = 2.0

MODE_FILE = "capi-provider-mode.json"
APPLIED_FILE = "capi-provider-mode.applied"


@dataclass(frozen=True)
class CapoMode:
    name: str = DEFAULT_MODE
    delay: float = DEFAULT_DELAY
    generation: int = 0

    def __post_init__(self):
        if self.name not in MODES:
            raise ValueError(f"unknown provider mode {self.name!r}; choose from {', '.join(MODES)}")
        if self.delay < 0:
            raise ValueError("delay must not be negative")

    def to_dict(self) -> dict:
        return asdict(self)


def mode_file(root: Path) -> Path:
    return root / MODE_FILE


def applied_file(root: Path) -> Path:
    return root / APPLIED_FILE
