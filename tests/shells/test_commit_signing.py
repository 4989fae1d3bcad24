"""Whether memory commits are signed when the person signs their commits (commit.gpgSign) and the repository's
`.agents/repo-memory.toml` says `sign = "never"`.

A teammate (or an agent, whose file tools can write the file) committed `sign = "never"`: every clone's memory commits
went unsigned, whatever the person's own git said. Turning signing off is the person's to say, for themselves:
`git config repo-memory.sign never` (this clone; `--global` for every one) or REPO_MEMORY_SIGN=never.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import configured, git

SIGNER = """#!/bin/sh
cat >/dev/null
echo '[GNUPG:] SIG_CREATED D 1 8 00 1700000000 ABCDEF0123456789' >&2
printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'
"""


def _repository(tmp_path: Path) -> Path:
    """A repository whose committed settings say `sign = "never"`, in a clone whose person signs every commit."""
    repo = configured(tmp_path / "repo", 'sign = "never"\n', "team settings")
    signer = tmp_path / "gpg-signs"
    signer.write_text(SIGNER, encoding="utf-8")
    signer.chmod(0o755)
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.program", str(signer))
    subprocess.run([sys.executable, "-m", "repo_memory", "init"], cwd=repo, check=True, capture_output=True)
    return repo


def _note(repo: Path, env: dict[str, str] | None = None) -> tuple[bool, str]:
    """Whether the memory commit `log add` makes is signed, and what the command said on stderr."""
    done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "add", "Chose pytest-postgresql.", "-s", "ops"], cwd=repo,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%s").startswith("memory(experience)"), git(repo, "log", "--oneline")
    return "gpgsig" in git(repo, "cat-file", "-p", "HEAD"), done.stderr


def test_a_committed_sign_never_does_not_turn_off_the_persons_commit_signing(tmp_path: Path):
    signed, said = _note(_repository(tmp_path))
    assert signed
    assert "git config repo-memory.sign never" in said, said  # why the file's setting is not followed, and what is


def test_the_person_turns_signing_off_for_memory_with_git_config(tmp_path: Path):
    repo = _repository(tmp_path)
    git(repo, "config", "repo-memory.sign", "never")
    assert _note(repo) == (False, "")


def test_the_person_turns_signing_off_for_memory_with_the_environment(tmp_path: Path):
    signed, _ = _note(_repository(tmp_path), {"REPO_MEMORY_SIGN": "never"})
    assert not signed
