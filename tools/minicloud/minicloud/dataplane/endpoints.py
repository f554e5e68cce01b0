"""Which loopback endpoint stands for which address: one JSON file in the state folder, shared by processes.

- ``members``: ``"<subnet>/<address>:<port>"`` -> ``{"loopback": "127.0.0.1:<p>", "serving": bool, "owner": ...}``,
  registered by whoever serves that address on that subnet (a control-plane server's API endpoint). Clusters
  on networks of the same CIDR (CAPO's default node CIDR for every cluster) have the same addresses: an address
  means a host only within its subnet, as it does to an amphora on that subnet. Registered without a subnet
  (``"<address>:<port>"``): that address on every subnet that has no registration of its own. An address
  nobody registered is answered by the shared stand-in; a registered one that stopped serving refuses.
- ``frontends``: listener id -> ``{"lb", "vip", "port", "loopback"}``: where a VIP's listener is on loopback.
- ``standins``: the shared stand-in's ports (``plain``, ``tls``) and a port that refuses (``refuse``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from pathlib import Path

FOLDER = "dataplane"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def member_key(address: str, port: int, subnet: str | None = None) -> str:
    return f"{subnet}/{address}:{port}" if subnet else f"{address}:{port}"


def member_entry(members: dict, address: str, port: int, subnet: str | None) -> dict | None:
    """The registration that answers for ``address``:``port`` on ``subnet``: the subnet's own, else one made
    without a subnet."""
    found = members.get(member_key(address, port, subnet)) if subnet else None
    return found if found is not None else members.get(member_key(address, port))


class Registry:
    def __init__(self, state_root: str | os.PathLike):
        self.folder = Path(state_root) / FOLDER
        self.path = self.folder / "endpoints.json"

    @contextlib.contextmanager
    def _locked(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / "endpoints.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) == before:
                return  # unchanged: the file (and its stamp, which readers follow) stays
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, self.path)

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            data = {}
        for key in ("members", "frontends", "standins"):
            data.setdefault(key, {})
        return data

    def snapshot(self) -> dict:
        return self._read()

    # -- members -----------------------------------------------------------------------

    def register_member(self, address: str, port: int, loopback: str, owner: str = "",
                        subnet: str | None = None) -> None:
        with self._locked() as data:
            data["members"][member_key(address, port, subnet)] = {"loopback": loopback, "serving": True,
                                                                  "owner": owner}

    def stop_member(self, address: str, port: int, subnet: str | None = None, owner: str | None = None) -> None:
        """The address stops serving (its server is gone): it refuses from now on. With ``owner``, only while
        that server's registration stands (a new server of the same address registered since is left alone)."""
        with self._locked() as data:
            entry = data["members"].get(member_key(address, port, subnet))
            if entry is not None and (owner is None or entry.get("owner") == owner):
                entry["serving"] = False

    def forget_member(self, address: str, port: int, subnet: str | None = None, owner: str | None = None) -> None:
        with self._locked() as data:
            entry = data["members"].get(member_key(address, port, subnet))
            if entry is not None and (owner is None or entry.get("owner") == owner):
                del data["members"][member_key(address, port, subnet)]

    # -- frontends ---------------------------------------------------------------------

    def frontend(self, listener_id: str, lb_id: str, vip: str | None, port: int) -> str:
        """The loopback address of a listener's frontend, allocated once and kept."""
        with self._locked() as data:
            entry = data["frontends"].get(listener_id)
            if entry is None:
                entry = {"lb": lb_id, "vip": vip, "port": port, "loopback": f"{LOOPBACK}:{free_port()}"}
                data["frontends"][listener_id] = entry
            return entry["loopback"]

    def prune_frontends(self, lb_id: str, keep: set[str]) -> None:
        with self._locked() as data:
            for listener_id in [k for k, v in data["frontends"].items() if v["lb"] == lb_id and k not in keep]:
                del data["frontends"][listener_id]

    def vip(self, address: str, port: int) -> str | None:
        """The loopback address of the listener at VIP ``address``:``port``."""
        for entry in self._read()["frontends"].values():
            if entry["vip"] == address and entry["port"] == port:
                return entry["loopback"]
        return None

    # -- stand-ins ---------------------------------------------------------------------

    def set_standins(self, ports: dict[str, int]) -> None:
        with self._locked() as data:
            data["standins"] = dict(ports)
