import pytest

from minicloud.octavia_provider import modes
from minicloud.octavia_provider.modes import Mode


def test_parse_defaults():
    assert Mode.parse("normal") == Mode("normal", "*", 0.5)
    assert Mode.parse("slow").delay == 10.0
    assert Mode.parse("slow", delay=3).delay == 3.0
    assert Mode.parse("lost-member", members="web-*").members == "web-*"


def test_unknown_mode():
    with pytest.raises(ValueError, match="unknown mode"):
        Mode.parse("chaos")


def test_matches_name_or_address():
    mode = Mode.parse("lost-member", members="*-member-3")
    assert mode.matches("web-member-3", "10.0.0.12")
    assert not mode.matches("web-member-2", "10.0.0.11")
    assert Mode.parse("member-error", members="10.0.0.1?").matches(None, "10.0.0.12")
    assert Mode().matches("", "10.0.0.1")


def test_save_bumps_generation_and_acknowledge(tmp_path):
    path, applied = tmp_path / "mode.json", tmp_path / "mode.applied"
    assert modes.load(path) == Mode()
    first = modes.save(path, Mode.parse("slow"))
    second = modes.save(path, Mode.parse("normal"))
    assert (first.generation, second.generation) == (1, 2)
    assert modes.load(path) == second
    assert modes.applied_generation(applied) == 0
    modes.acknowledge(applied, second)
    assert modes.applied_generation(applied) == 2
