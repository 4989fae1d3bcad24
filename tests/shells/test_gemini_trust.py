"""`repo-memory setup gemini --trust`: Gemini CLI starts a project's servers (and runs its hooks) only in a folder the
person trusted, which it stores in ~/.gemini/trustedFolders.json; setup says so honestly, stores that answer with
--trust as Gemini's dialog does, and `--remove` / `uninstall` take back only a trust setup stored. The real Gemini CLI
reading what setup stored: tests/shells/test_gemini_hooks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_CLI_TRUST_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    return path


def run(repo: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def check_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Check it"))


def test_setup_gemini_in_an_untrusted_folder_says_it_is_disabled_until_trusted_and_how(repo: Path, home: Path):
    """The check line promised `Connected`; Gemini CLI 0.61 lists the server as Disabled in a folder not trusted."""
    out = run(repo, "setup", "gemini")
    assert "Disabled" in check_line(out) and "trust" in check_line(out), out
    assert "repo-memory setup gemini --trust" in out, out
    assert not (home / ".gemini/trustedFolders.json").exists()


def test_trust_stores_the_folder_as_geminis_dialog_does_keeping_yours_and_uninstall_takes_back_only_it(repo: Path, home: Path):
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(json.dumps({"/srv/other": "TRUST_FOLDER"}, indent=2), encoding="utf-8")
    out = run(repo, "setup", "gemini", "--trust")
    assert json.loads(folders.read_text(encoding="utf-8")) == {"/srv/other": "TRUST_FOLDER", str(repo): "TRUST_FOLDER"}
    assert str(folders) in out and "Connected" in check_line(out) and "Disabled" not in check_line(out), out
    again = run(repo, "setup", "gemini", "--trust")  # trusted already: nothing to store, and nothing more to take back
    assert json.loads(folders.read_text(encoding="utf-8")) == {"/srv/other": "TRUST_FOLDER", str(repo): "TRUST_FOLDER"}
    assert "Connected" in check_line(again), again
    out = run(repo, "uninstall")
    assert json.loads(folders.read_text(encoding="utf-8")) == {"/srv/other": "TRUST_FOLDER"}, out
    assert "took back the trust" in out and str(repo) in out, out


def test_remove_puts_back_a_do_not_trust_you_chose_and_removes_a_file_setup_made(repo: Path, home: Path):
    folders = home / ".gemini/trustedFolders.json"
    run(repo, "setup", "gemini", "--trust")
    assert json.loads(folders.read_text(encoding="utf-8")) == {str(repo): "TRUST_FOLDER"}
    run(repo, "setup", "gemini", "--remove")
    assert not folders.exists()  # setup made it, and nothing else is in it
    folders.write_text(json.dumps({str(repo): "DO_NOT_TRUST"}), encoding="utf-8")
    out = run(repo, "setup", "gemini")
    assert "Disabled" in check_line(out), out
    run(repo, "setup", "gemini", "--trust")
    assert json.loads(folders.read_text(encoding="utf-8")) == {str(repo): "TRUST_FOLDER"}
    run(repo, "setup", "gemini", "--remove")
    assert json.loads(folders.read_text(encoding="utf-8")) == {str(repo): "DO_NOT_TRUST"}


def test_a_folder_you_trusted_yourself_is_left_trusted_by_uninstall(repo: Path, home: Path):
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(json.dumps({str(repo.parent): "TRUST_FOLDER"}), encoding="utf-8")  # a parent: covers the repository
    out = run(repo, "setup", "gemini", "--trust")
    assert "Connected" in check_line(out) and json.loads(folders.read_text(encoding="utf-8")) == {str(repo.parent): "TRUST_FOLDER"}
    run(repo, "uninstall")
    assert json.loads(folders.read_text(encoding="utf-8")) == {str(repo.parent): "TRUST_FOLDER"}
