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
