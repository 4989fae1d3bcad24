"""The subject of a memory commit that holds several kinds of change."""

from __future__ import annotations

from pathlib import Path

from repo_memory.git import message
from repo_memory.git.pending import Pending
from repo_memory.git.repo import Git


def test_a_plain_memory_message_beside_other_kinds_is_not_prefixed_twice(repo: Path):
    """init's commit joined with a skill's read `memory(other): memory: set up repo-memory (…); skill add deploy`."""
    entries = [Pending(".gitattributes", "memory: set up repo-memory (.agents/ layout, .gitattributes rules)", "doc"),
               Pending(".agents/skills/deploy/SKILL.md", "memory(skill): add deploy", "doc")]
    subject = message.compose(Git(repo, repo / ".git"), entries, None, "", {}, None).splitlines()[0]
    assert subject == "memory(other): set up repo-memory (.agents/ layout, .gitattributes rules); skill add deploy", subject


def test_several_changes_of_one_kind_are_named_with_their_kind_and_listed_while_short(repo: Path):
    """Two skill writes in one commit read `memory: 2 changes`: `git log --oneline` told neither the kind nor which."""
    git_ = Git(repo, repo / ".git")
    two = [Pending(".agents/skills/deploy/SKILL.md", "memory(skill): add deploy", "doc"),
           Pending(".agents/skills/lint/SKILL.md", "memory(skill): update lint", "doc")]
    assert message.compose(git_, two, None, "", {}, None).splitlines()[0] == "memory(skill): add deploy; update lint"
    many = [Pending(f".agents/skills/s{n}/SKILL.md", f"memory(skill): add a-longer-skill-name-{n}", "doc") for n in range(4)]
    assert message.compose(git_, many, None, "", {}, None).splitlines()[0] == "memory(skill): 4 changes"
