"""A server nobody pointed at a repository keeps no memory in the home folder's: the real `repo-memory serve` as a child
over stdio, the SDK's client (no MCP roots, as Zed, Windsurf or the Inspector CLI), and a HOME kept in git (dotfiles)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ListRootsResult, Root

from repo_memory import layout
from tests.conftest import git

SERVE = [sys.executable, "-m", "repo_memory", "serve"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home folder, a dotfiles repository, as HOME of the server the client starts."""
    home = tmp_path / "home"
    home.mkdir()
    git(home, "init", "-q", "-b", "main")
    (home / ".bashrc").write_text("alias ll='ls -l'\n", encoding="utf-8")
    git(home, "add", ".bashrc")
    git(home, "commit", "-q", "-m", "dotfiles")
    monkeypatch.setenv("HOME", str(home))
    return home


def calls(cwd: Path, args: list[str], errlog: Path, root: Path | list[Path] | None = None) -> list[Any]:
    """`remember` then `recall` from a client that starts `repo-memory serve ARGS` in `cwd` (offering `root`, or each
    root of a list, as its MCP roots, or no roots); the server's stderr goes to `errlog`."""
    async def roots(_context: object) -> ListRootsResult:
        assert root is not None
        named = root if isinstance(root, list) else [root]
        return ListRootsResult(roots=[Root(uri=r.as_uri(), name=r.name) for r in named])

    async def session() -> list[Any]:
        params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], cwd=str(cwd), env={**os.environ})
        with errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), list_roots_callback=roots if root else None,
                              mode="legacy") as client:
                return [await client.call_tool("remember", {"text": "deploys need the VPN"}),
                        await client.call_tool("recall", {"query": "deploys"})]

    return anyio.run(session)


def refused(home: Path, answers: list[Any]) -> None:
    """Each answer an error naming the home folder's repository and what to do; nothing read or written there."""
    for answer in answers:
        said = text(answer)
        assert answer.is_error, said
        assert str(home) in said and "--root /path/to/repo" in said and "repo-memory init" in said, said
    untouched(home)


def text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def untouched(home: Path) -> None:
    assert not (home / ".agents").exists()
    assert git(home, "log", "--format=%s") == "dotfiles\n"
    assert git(home, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize("start", ["home", "a folder of home outside git"])
def test_a_client_without_roots_started_in_a_home_kept_in_git_is_refused_and_told_to_name_the_repository(
        home: Path, tmp_path: Path, start: str):
    """The server served the dotfiles repository, where init never ran: `remember` answered ids and "pending", the
    record was committed onto the dotfiles' branch, and only stderr (which editors hide) named the repository."""
    cwd = home if start == "home" else home / "scratch"
    cwd.mkdir(exist_ok=True)
    written, found = calls(cwd, [], tmp_path / "stderr")
    for answer in (written, found):
        said = text(answer)
        assert answer.is_error, said
        assert str(home) in said and "--root /path/to/repo" in said and "repo-memory init" in said, said
    untouched(home)
    assert str(home) in (tmp_path / "stderr").read_text(encoding="utf-8")


def test_a_client_that_names_its_root_is_served_it_though_started_in_the_home_repository(home: Path, tmp_path: Path,
                                                                                           repo: Path):
    project = home / "src" / "project"
    project.parent.mkdir()
    repo.rename(project)
    written, found = calls(home, [], tmp_path / "stderr", root=project)
    assert not written.is_error and not found.is_error, (text(written), text(found))
    assert list(project.glob(".agents/experience/*/*.jsonl"))
    untouched(home)


def test_memory_goes_to_the_home_repository_once_init_ran_there(home: Path, tmp_path: Path):
    layout.init(home)
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "repo-memory init")
    written, found = calls(home, [], tmp_path / "stderr")
    assert not written.is_error and "VPN" in text(found), (text(written), text(found))
    assert list(home.glob(".agents/experience/*/*.jsonl"))


def test_a_project_init_never_ran_in_is_served_and_its_first_write_names_it(home: Path, tmp_path: Path):
    """Codex's one user-level entry starts the server in each project it opens, init or not: served, as before; the
    answer said ids, session and "pending", never which repository it wrote to."""
    project = home / "src" / "project"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    git(project, "commit", "-q", "--allow-empty", "-m", "init")
    written, found = calls(project, [], tmp_path / "stderr")
    assert not written.is_error and "VPN" in text(found), (text(written), text(found))
    note = written.structured_content.get("note") or ""
    assert str(project) in note and "repo-memory init" in note, written.structured_content
    untouched(home)


@pytest.mark.parametrize("args", [["--root", ""], ["--root="]])
def test_an_empty_root_is_refused_at_start_as_a_workspace_variable_expanded_to_nothing(
        home: Path, tmp_path: Path, repo: Path, args: list[str]):
    """`--root ${workspaceFolder}` with no folder open reaches the server as `--root ""`, which was taken as `.`: the
    working directory's repository was served (here an initialised one nobody named)."""
    written, found = calls(repo, args, tmp_path / "stderr")
    for answer in (written, found):
        said = text(answer)
        assert answer.is_error and "--root" in said and "empty" in said and "${workspaceFolder}" in said, said
    assert not list(repo.glob(".agents/experience/*/*.jsonl"))
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert "${workspaceFolder}" in stderr, stderr


@pytest.mark.parametrize("named", ["a plain folder of home", "home itself"])
def test_a_client_naming_a_folder_of_the_home_repository_as_its_root_is_refused_not_served_the_dotfiles(
        home: Path, tmp_path: Path, named: str):
    """A client whose MCP root was ~/notes (a folder opened in an editor, no repository of its own) or ~ was served the
    repository holding ~: memory went into ~/.agents and was committed on the dotfiles' branch, while stderr said a
    client naming its project as an MCP root is served that project."""
    root = home / "notes" if named == "a plain folder of home" else home
    root.mkdir(exist_ok=True)
    written, found = calls(root, [], tmp_path / "stderr", root=root)
    refused(home, [written, found])
    assert f"named {root}" in text(written) or f"({root})" in text(written), text(written)


def test_a_project_root_named_after_a_plain_folder_of_home_is_the_one_served(home: Path, tmp_path: Path, repo: Path):
    project = home / "src" / "project"
    project.parent.mkdir()
    repo.rename(project)
    (home / "notes").mkdir()
    written, found = calls(home, [], tmp_path / "stderr", root=[home / "notes", project])
    assert not written.is_error and "VPN" in text(found), (text(written), text(found))
    assert list(project.glob(".agents/experience/*/*.jsonl"))
    untouched(home)


def test_a_client_naming_home_as_its_root_is_served_it_once_init_ran_there(home: Path, tmp_path: Path):
    layout.init(home)
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "repo-memory init")
    (home / "notes").mkdir()
    written, found = calls(home / "notes", [], tmp_path / "stderr", root=home / "notes")
    assert not written.is_error and "VPN" in text(found), (text(written), text(found))
    assert list(home.glob(".agents/experience/*/*.jsonl"))


@pytest.mark.parametrize("folder", ["home", "a plain folder of home"])
def test_claude_code_started_in_home_is_refused_as_a_client_started_there(home: Path, tmp_path: Path, repo: Path,
                                                                           monkeypatch: pytest.MonkeyPatch, folder: str):
    """CLAUDE_PROJECT_DIR is the folder Claude Code was started in, not a repository the person chose: in ~ it named
    the dotfiles repository, which was served (memory committed on the dotfiles' branch) from wherever the server ran."""
    project_dir = home if folder == "home" else home / "notes"
    project_dir.mkdir(exist_ok=True)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project_dir))
    written, found = calls(repo, [], tmp_path / "stderr")
    refused(home, [written, found])
    assert "CLAUDE_PROJECT_DIR" in text(written), text(written)
    assert not list(repo.glob(".agents/experience/*/*.jsonl"))


def test_claude_code_started_in_a_project_of_home_is_served_that_project(home: Path, tmp_path: Path, repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    project = home / "src" / "project"
    project.parent.mkdir()
    repo.rename(project)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    written, found = calls(home, [], tmp_path / "stderr")
    assert not written.is_error and "VPN" in text(found), (text(written), text(found))
    assert list(project.glob(".agents/experience/*/*.jsonl"))
    untouched(home)
