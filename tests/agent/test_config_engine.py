from __future__ import annotations

import os
import stat
import uuid

import pytest
from iowatt_agent import engine as engine_mod
from iowatt_agent.config import ConfigError, normalize_server_url, resolve_state_dir
from iowatt_agent.credentials import AgentConfig, load_config, save_config
from iowatt_agent.engine import EngineNotFound, locate_engine


def test_state_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("IOWATT_AGENT_STATE_DIR", raising=False)
    assert str(resolve_state_dir()) == "/var/lib/iowatt-agent"
    monkeypatch.setenv("IOWATT_AGENT_STATE_DIR", str(tmp_path / "env"))
    assert resolve_state_dir() == tmp_path / "env"
    assert resolve_state_dir(tmp_path / "arg") == tmp_path / "arg"


def test_config_roundtrip_is_private(tmp_path):
    cfg = AgentConfig(server_url="http://s", agent_id=uuid.uuid4(), agent_token="secret", name="n")
    path = save_config(tmp_path / "state", cfg)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "state").st_mode) == 0o700
    assert load_config(tmp_path / "state") == cfg
    path.write_text("{")
    with pytest.raises(ConfigError, match="not a valid agent config"):
        load_config(tmp_path / "state")


def test_server_url_normalisation():
    assert normalize_server_url("http://h:8000/") == "http://h:8000"
    assert normalize_server_url("https://h/api/v1/") == "https://h"
    with pytest.raises(ConfigError, match="http://"):
        normalize_server_url("h:8000")


def test_locate_engine_order(monkeypatch, tmp_path, fake_engine):
    monkeypatch.delenv("IOWATT_ENGINE", raising=False)
    assert locate_engine(fake_engine) == fake_engine
    with pytest.raises(EngineNotFound, match="--engine"):
        locate_engine(tmp_path / "missing")
    monkeypatch.setenv("IOWATT_ENGINE", str(fake_engine))
    assert locate_engine() == fake_engine
    monkeypatch.setenv("IOWATT_ENGINE", str(tmp_path / "nope"))
    with pytest.raises(EngineNotFound, match="IOWATT_ENGINE"):
        locate_engine()
    monkeypatch.delenv("IOWATT_ENGINE")
    monkeypatch.setattr(engine_mod, "candidate_paths", lambda: [("test", tmp_path / "nope")])
    with pytest.raises(EngineNotFound, match="make -C agent/engine"):
        locate_engine()
    monkeypatch.setattr(engine_mod, "candidate_paths", lambda: [("a", tmp_path / "nope"), ("b", fake_engine)])
    assert locate_engine() == fake_engine


def test_source_checkout_candidate_points_at_engine_build():
    labels = dict((label, path) for label, path in engine_mod.candidate_paths())
    assert str(labels["source checkout"]).endswith("agent/engine/build/iowatt-engine")
