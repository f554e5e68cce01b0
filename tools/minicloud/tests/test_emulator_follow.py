"""The provider emulator follows its data plane without reading a load balancer's tree again while neither the
database nor what the checks see changed (minicloud.octavia_provider.emulator, ``_follow_data_plane``): the same
status updates as reading it at every poll, for a fraction of the reads."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from minicloud.octavia_provider.emulator import Emulator
from minicloud.octavia_provider.tree import OctaviaDb


class FakeDb:
    """An Octavia database whose version the test sets; each tree read is counted. A load balancer's tree is the
    operating status of its one member, as the database holds it."""

    def __init__(self):
        self.version_now: int | None = 1
        self.member_status = {"lb-1": "ONLINE"}
        self.reads: list[str] = []

    def version(self):
        return self.version_now

    def tree(self, lb_id):
        self.reads.append(lb_id)
        return {"member": self.member_status[lb_id]}


class FakeDataPlane:
    """health_update: the member's status as its checks see it, when the database holds another."""

    def inputs_changed(self):
        return False

    @staticmethod
    def health_update(tree, statuses):
        seen = statuses["member"]
        return {} if tree["member"] == seen else {"members": [{"id": "member", "operating_status": seen}]}


def emulator(tmp_path, db, reports):
    return Emulator(db, tmp_path / "mode.json", tmp_path / "mode.applied", reports.append, dataplane=FakeDataPlane())


def follow(emu, status):
    emu._follow_data_plane({"lb-1": ({"member": status}, [])})


def test_an_unchanged_database_and_unchanged_checks_are_not_read_again(tmp_path):
    db, reports = FakeDb(), []
    emu = emulator(tmp_path, db, reports)
    for _ in range(5):
        follow(emu, "ONLINE")
    assert db.reads == ["lb-1"] and reports == []
    db.version_now = 2  # another connection committed: the tree is read once more
    follow(emu, "ONLINE")
    follow(emu, "ONLINE")
    assert db.reads == ["lb-1"] * 2 and reports == []


def test_a_change_the_checks_see_is_reported_and_reported_again_until_the_database_holds_it(tmp_path):
    db, reports = FakeDb(), []
    emu = emulator(tmp_path, db, reports)
    follow(emu, "ONLINE")
    follow(emu, "ERROR")  # the checks changed: read, and reported
    assert reports == [{"members": [{"id": "member", "operating_status": "ERROR"}]}]
    follow(emu, "ERROR")  # the report did not reach the database (same version): it is made again, not skipped
    assert len(reports) == 2 and db.reads == ["lb-1"] * 3
    db.member_status["lb-1"], db.version_now = "ERROR", 2  # the driver agent wrote it
    follow(emu, "ERROR")
    follow(emu, "ERROR")
    assert len(reports) == 2 and db.reads == ["lb-1"] * 4


def test_without_a_database_version_every_poll_reads(tmp_path):
    db, reports = FakeDb(), []
    db.version_now = None
    emu = emulator(tmp_path, db, reports)
    for _ in range(3):
        follow(emu, "ONLINE")
    assert db.reads == ["lb-1"] * 3


def test_the_database_version_changes_with_a_commit_of_another_process_only(tmp_path):
    path = tmp_path / "octavia.sqlite"
    with sqlite3.connect(path) as writer:
        writer.execute("CREATE TABLE t (x)")
    writer.close()
    db = OctaviaDb(path)
    first = db.version()
    assert db.version() == first
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute('INSERT INTO t VALUES (1)'); c.commit()", str(path)], check=True)
    assert db.version() != first
    assert OctaviaDb(tmp_path / "missing.sqlite").version() is None
