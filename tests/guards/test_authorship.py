"""The per-clone key that marks what repo-memory wrote: where it lives, who can read it, and what it tells apart."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.guards import authorship

from tests.conftest import git


def test_the_key_lives_in_the_users_state_folder_private_and_one_per_clone(repo: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR")
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = Store(Config.load(repo))
    try:
        record = store.remember("a note")[0]
    finally:
        store.close()
    keys = tmp_path / "home" / ".local" / "state" / "repo-memory" / "keys"
    [key] = list(keys.glob("*.key"))
    assert len(list(keys.glob("clone-*.json"))) == 1  # a copy of the clone's id (git/repo.py: clone_id)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(keys.stat().st_mode) == 0o700
    assert not any(p.suffix == ".key" for p in repo.rglob("*")), "no key inside the repository or its git dir"
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    store = Store(Config.load(other))
    try:
        assert not authorship.signed(record, store.key), "another clone's key does not vouch for this clone's records"
    finally:
        store.close()
    assert len(list(keys.glob("*.key"))) == 2


def test_a_read_only_home_keeps_the_key_in_the_git_dir_and_says_so(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the state folder would be", encoding="utf-8")  # unwritable for root too
    monkeypatch.setenv("REPO_MEMORY_KEY_DIR", str(blocked / "keys"))
    store = Store(Config.load(repo))
    try:
        assert authorship.signed(store.remember("a note")[0], store.key)
    finally:
        store.close()
    assert "REPO_MEMORY_KEY_DIR" in caplog.text
    assert list(store.config.state_dir.glob("*.key"))


def test_a_mark_covers_the_record_and_resealing_breaks_it(store: Store):
    record = store.remember("deploys need a green main")[0]
    assert authorship.signed(record, store.key)
    changed = {**experience.seal({**record, "text": "deploys need nothing"}), "mac": record["mac"]}
    assert not authorship.signed(changed, store.key)
    assert not authorship.signed({**record, "mac": "0" * authorship.MAC_HEX}, store.key)
    assert not authorship.signed({k: v for k, v in record.items() if k != "mac"}, store.key)
