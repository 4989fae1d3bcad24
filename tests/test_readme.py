"""Every shell block of the README works when pasted, in order, into a fresh repository, as a new user would.

The blocks of "Set up" and "Development" run in this checkout, not in the user's repository: CI runs them
(`.ci/run` is the README's test command, see test_docs.py). Only the two harness CLIs may be missing (each then
prints that it was skipped); with them installed (`./install.sh --test` puts them in .tools/) their lines run too,
offline, with a temporary HOME.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
IN_THE_CHECKOUT = ("Set up", "Development")  # sections whose blocks run in this checkout (CI runs them)
TOOLS = ROOT / ".tools" / "node_modules" / ".bin"


def blocks() -> list[tuple[str, str]]:
    """(section, body) of every ```sh block, in order."""
    out, section = [], ""
    for match in re.finditer(r"^## ([^\n]+)$|^```sh\n(.*?)^```$", README, re.MULTILINE | re.DOTALL):
        if match.group(1):
            section = match.group(1)
        else:
            out.append((section, match.group(2)))
    return out


def test_the_readme_has_the_blocks_this_test_runs():
    sections = [s for s, _ in blocks()]
    assert sections[0].startswith("Set up") and sections[-1] == "Development"
    assert {"Use it in your repository", "Attach it to Claude Code", "Attach it to Codex", "Loops", "Uninstall and upgrade"} <= set(sections)


@pytest.mark.slow
def test_every_readme_command_works_when_pasted_into_a_fresh_repository(tmp_path: Path):
    home, repo = tmp_path / "home", tmp_path / "your-repo"
    home.mkdir()
    repo.mkdir()
    env = {"HOME": str(home), "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "A User", "GIT_AUTHOR_EMAIL": "user@example.com",
           "GIT_COMMITTER_NAME": "A User", "GIT_COMMITTER_EMAIL": "user@example.com", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), str(TOOLS), os.environ.get("PATH", "/usr/bin:/bin")])}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "app.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "a project"], cwd=repo, check=True, env=env)
    pasted = "\n".join(body for section, body in blocks() if not section.startswith(IN_THE_CHECKOUT))
    script = "set -euo pipefail\nset -x\n" + "".join(
        f'command -v {cli} >/dev/null || {cli}() {{ echo "({cli} is not installed: skipped)"; }}\n' for cli in ("claude", "codex")) + pasted
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"a README command failed:\n{proc.stderr[-4000:]}\n{proc.stdout[-2000:]}"
    out = proc.stdout
    assert "release-checklist" in out  # `search` found the skill the block wrote
    assert (repo / ".agents/loops/fix-failing-tests.md").is_file()
    if (TOOLS / "claude").exists():
        assert re.search(r"repo-memory: .*Connected", out), out
    if (TOOLS / "codex").exists():
        assert re.search(r"^repo-memory\s.*enabled", out, re.MULTILINE), out
    assert ("detached" in out or "The rest is gone from this clone" in out) and not (repo / ".claude/settings.local.json").exists()
    # (the README's `setup codex` leaves Codex's entry for every repository in ~/.codex: uninstall says it still serves here)
    assert not (repo / ".mcp.json").exists()  # nobody committed it, so no teammate has it: uninstall takes it back too
