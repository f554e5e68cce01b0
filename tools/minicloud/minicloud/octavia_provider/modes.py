"""Behaviour modes of the Octavia provider emulator, kept in a JSON file in the state folder.

The command line writes the file; the emulator inside octavia-api watches it and
acknowledges each change by writing the mode's generation to a second file.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

NORMAL = "normal"
LOST_MEMBER = "lost-member"
MEMBER_ERROR = "member-error"
SLOW = "slow"
BACKEND_DOWN = "backend-down"
MODES = (NORMAL, LOST_MEMBER, MEMBER_ERROR, SLOW, BACKEND_DOWN)

DEFAULT_DELAY = 0.5
SLOW_DELAY = 10.0


@dataclass(frozen=True)
class Mode:
    """How the emulator behaves: ``name``, which members it affects, seconds per step."""

    name: str = NORMAL
    members: str = "*"
    delay: float = DEFAULT_DELAY
    generation: int = 0

    def __post_init__(self):
        if self.name not in MODES:
            raise ValueError(f"unknown mode {self.name!r}; choose from {', '.join(MODES)}")
        if self.delay < 0:
            raise ValueError("delay must not be negative")

    @classmethod
    def parse(cls, name: str, members: str | None = None, delay: float | None = None) -> Mode:
        """A mode from command-line values, with the default delay of that mode."""
        if delay is None:
            delay = SLOW_DELAY if name == SLOW else DEFAULT_DELAY
        return cls(name=name, members=members or "*", delay=float(delay))

    def matches(self, name: str | None, address: str | None) -> bool:
        """True if the member glob matches the member's name or address."""
        return any(fnmatch.fnmatchcase(value, self.members) for value in (name, address) if value)

    def to_dict(self) -> dict:
        return asdict(self)


def load(path: Path, cls=Mode):
    """The mode in ``path`` (the default ``cls()`` if there is none). ``cls`` is any frozen
    dataclass with a ``generation`` field: other emulators keep their modes the same way."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return cls()
    return cls(**data)


def save(path: Path, mode):
    """Write ``mode`` with the next generation number (atomically). Returns what was written."""
    written = dataclasses.replace(mode, generation=load(path, type(mode)).generation + 1)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(written)) + "\n")
    os.replace(tmp, path)
    return written


def applied_generation(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def acknowledge(path: Path, mode) -> None:
    path.write_text(f"{mode.generation}\n")
