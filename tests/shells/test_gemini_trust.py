"""`repo-memory setup gemini --trust`: Gemini CLI starts a project's servers (and runs its hooks) only in a folder the
person trusted, which it stores in ~/.gemini/trustedFolders.json; setup says so honestly, stores that answer with
--trust as Gemini's dialog does, and `--remove` / `uninstall` take back only a trust setup stored. The real Gemini CLI
reading what setup stored: tests/shells/test_gemini_hooks.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli

from tests.harness.clis import base_env, cli_tool
from tests.harness.clis import run as run_cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE"):
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


EXE = str(Path(sys.executable).parent / "repo-memory")
COMMENTED = """{
  // the folders I trust
  "/srv/other": "TRUST_FOLDER", /* work */
  "/srv/old": "DO_NOT_TRUST" // never again
}
"""


def gemini_lists(repo: Path, home: Path, **env: str) -> str:
    """What the real `gemini mcp list` says of repo-memory in `repo` (it prints the list, or its error, on stderr)."""
    listed = run_cli([cli_tool("gemini"), "mcp", "list"], repo, {**base_env(home), **env})
    return listed.stdout + listed.stderr


def setup_gemini(repo: Path, home: Path, *args: str, **env: str) -> str:
    done = run_cli([EXE, "setup", "gemini", *args], repo, {**base_env(home), **env})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def uncommented(text: str) -> dict[str, str]:
    """The rules as Gemini CLI reads them: whole-line and trailing comments left out (none holds a quote or a slash)."""
    return json.loads(re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S))


@pytest.mark.slow
def test_a_trust_file_with_comments_is_read_as_gemini_reads_it_and_trust_keeps_the_comments(repo: Path, home: Path):
    """Gemini CLI strips comments from trustedFolders.json before it parses it; setup called such a file "not a JSON
    object (Gemini CLI refuses it too)" and --trust refused to store the trust."""
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(COMMENTED, encoding="utf-8")
    out = setup_gemini(repo, home)
    assert "Disabled" in check_line(out) and "not a JSON object" not in out, out
    assert "repo-memory serve (stdio) - Disabled" in gemini_lists(repo, home)
    out = setup_gemini(repo, home, "--trust")
    text = folders.read_text(encoding="utf-8")
    assert uncommented(text) == {"/srv/other": "TRUST_FOLDER", "/srv/old": "DO_NOT_TRUST", str(repo): "TRUST_FOLDER"}, text
    for comment in ("// the folders I trust", "/* work */", "// never again"):
        assert comment in text, text
    assert "Connected" in check_line(out) and "Disabled" not in check_line(out), out
    assert "repo-memory serve (stdio) - Connected" in gemini_lists(repo, home)
    out = setup_gemini(repo, home, "--remove")
    assert folders.read_text(encoding="utf-8") == COMMENTED, out
    assert "took back the trust" in out, out


@pytest.mark.slow
def test_a_trust_file_with_comments_that_trusts_the_folder_is_connected(repo: Path, home: Path):
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(COMMENTED.replace('"/srv/other"', json.dumps(str(repo))), encoding="utf-8")
    out = setup_gemini(repo, home)
    assert "Connected" in check_line(out) and "Disabled" not in check_line(out), out
    assert "repo-memory serve (stdio) - Connected" in gemini_lists(repo, home)


@pytest.mark.slow
@pytest.mark.parametrize("content", ['{"/srv/other": "TRUST_ME"}', '{"/srv/other": "TRUST_FOLDER",}', ""])
def test_a_trust_file_gemini_refuses_is_said_so_and_left_as_it_is(repo: Path, home: Path, content: str):
    """An unknown trust level makes Gemini CLI stop with "Error in …trustedFolders.json"; --trust wrote the file and
    said "trusted …" with a check line promising Connected."""
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(content, encoding="utf-8")
    out = setup_gemini(repo, home, "--trust")
    assert folders.read_text(encoding="utf-8") == content
    assert "refuses" in out and str(folders) in out and "fix" in out, out
    assert "TRUST_ME" in out if "TRUST_ME" in content else True, out
    assert "Connected" not in check_line(out) and str(folders) in check_line(out), out
    assert f"Error in {folders}" in gemini_lists(repo, home)


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["GEMINI_RESTRICTED_MODE", "GEMINI_CLI_TRUST_WORKSPACE"])
def test_a_trusted_folder_is_disabled_while_the_environment_distrusts_every_folder(repo: Path, home: Path, variable: str):
    """Gemini CLI trusts no folder while GEMINI_RESTRICTED_MODE=true (or GEMINI_CLI_TRUST_WORKSPACE=false), whatever
    trustedFolders.json says; setup said the folder trusted and promised Connected."""
    env = {variable: "true" if variable == "GEMINI_RESTRICTED_MODE" else "false"}
    folders = home / ".gemini/trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(json.dumps({str(repo): "TRUST_FOLDER"}), encoding="utf-8")
    out = setup_gemini(repo, home, "--trust", **env)
    assert "Disabled" in check_line(out) and variable in out, out
    assert "repo-memory serve (stdio) - Disabled" in gemini_lists(repo, home, **env)


def test_remove_keeps_the_trust_it_cannot_take_back_from_a_file_gone_bad_and_says_why(repo: Path, home: Path):
    """A file made unreadable after --trust: the undo took nothing back yet deleted setup's note, so the trust it stored
    could never be taken back."""
    folders = home / ".gemini/trustedFolders.json"
    run(repo, "setup", "gemini", "--trust")
    folders.write_text(folders.read_text(encoding="utf-8").rstrip().rstrip("}") + ',\n  "/srv/half": \n}', encoding="utf-8")
    out = run(repo, "setup", "gemini", "--remove")
    assert str(folders) in out and "not taken back" in out and str(repo) in out, out
    folders.write_text(json.dumps({str(repo): "TRUST_FOLDER", "/srv/mine": "TRUST_FOLDER"}), encoding="utf-8")
    out = run(repo, "setup", "gemini", "--remove")
    assert json.loads(folders.read_text(encoding="utf-8")) == {"/srv/mine": "TRUST_FOLDER"}, out
    assert "took back the trust" in out, out
