"""Port offsets: clouds set up side by side never share a port, even when they choose at the same moment."""

from __future__ import annotations

import collections
import os
import random
import subprocess
import sys
import tempfile

from minicloud.core import settings
from minicloud.core.settings import CAPD_PORTS, EPHEMERAL_PORTS_START, OFFSET_CHOICES, cloud_ports

CHOOSE = """
import random, sys
from minicloud.core.settings import free_port_offset
print(free_port_offset(random.Random(7)), flush=True)
sys.stdin.read()
"""


def test_clouds_with_different_offsets_never_share_a_port():
    ports = collections.Counter(port for offset in (0, *OFFSET_CHOICES) for port in cloud_ports(offset))
    shared = [port for port, clouds in ports.items() if clouds > 1]
    assert not shared, f"ports two offsets would both take: {shared[:10]}"
    assert max(ports) < EPHEMERAL_PORTS_START
    assert not set(ports) & set(CAPD_PORTS), "CAPD's workload API servers take those"
    assert len(OFFSET_CHOICES) > 100


def test_an_offset_chosen_by_another_process_is_not_chosen_again(tmp_path, monkeypatch):
    """Two processes drawing the same offset: the second takes another one while the first lives (its cloud may not
    have bound its ports yet), and the first's offset once it has exited."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(settings, "_reserved", {})
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHOOSE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        theirs = int(child.stdout.readline())
        ours = settings.free_port_offset(random.Random(7))
    finally:
        child.communicate("")
    assert ours != theirs
    assert settings.free_port_offset(random.Random(7)) == theirs
    for fd in settings._reserved.values():
        os.close(fd)
