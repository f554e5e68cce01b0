from minicloud.core.paths import StateDir, resolve_state_dir


def test_explicit_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICLOUD_STATE_DIR", str(tmp_path / "env"))
    assert resolve_state_dir(tmp_path / "x") == tmp_path / "x"


def test_env_then_project_then_cwd(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICLOUD_STATE_DIR", str(tmp_path / "env"))
    assert resolve_state_dir(cwd=tmp_path) == tmp_path / "env"
    monkeypatch.delenv("MINICLOUD_STATE_DIR")
    (tmp_path / "galaxy.yml").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert resolve_state_dir(cwd=deep) == tmp_path / ".minicloud"
    (tmp_path / "galaxy.yml").unlink()
    assert resolve_state_dir(cwd=deep) == deep / ".minicloud"


def test_long_state_paths_get_short_socket_folder(tmp_path):
    short = StateDir(tmp_path / "s")
    assert short.sockets == short.root / "run" / "sock"
    long = StateDir(tmp_path / ("x" * 120))
    assert len(str(long.sockets / "status.sock")) < 100
    assert long.sockets == StateDir(tmp_path / ("x" * 120)).sockets


def test_a_load_balancers_stats_socket_fits_haproxys_limit(tmp_path):
    """HAProxy refuses a stats socket path over 97 characters: a state folder whose own socket folder would leave
    a load balancer's socket just over it gets the short folder."""
    base = tmp_path / "s"
    own_length = len(str(base / "run" / "sock" / "lb-0123456789abc.sock"))
    state = StateDir(tmp_path / ("s" + "x" * (98 - own_length)))
    assert len(str(state.sockets / "lb-0123456789abc.sock")) <= 97
