"""The session briefing's skills line: which skills it names, in what order, and what it says of the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repo_memory.core.briefing import SKILLS_SHOWN
from repo_memory.core.store import Store

from tests.conftest import git, write_skill_file


def skills_line(store: Store) -> str:
    return next(x for x in store.briefing().splitlines() if x.startswith("- skills:"))


def test_a_briefing_naming_some_of_many_skills_says_how_many_more_and_how_to_find_them(store: Store, repo: Path):
    """With 40 active skills the briefing named 6 and said nothing of the other 34 (its drafts line did say "and 36
    more"): an agent took the six for all the repository knows."""
    for i in range(1, 41):
        write_skill_file(repo, f"procedure-{i}", f"Procedure {i}: how to handle pipeline stage {i} when it fails in CI.")
    store.refresh()
    line = skills_line(store)
    assert len(re.findall(r"skill:procedure-\d+ ", line)) == SKILLS_SHOWN, line
    assert f"and {40 - SKILLS_SHOWN} more" in line, line
    assert 'kinds=["skill"]' in line and "recall" in line, line  # how an agent finds the one for its task
    assert len(store.briefing().encode()) <= 2000


def test_a_briefing_naming_every_skill_says_no_more(store: Store, repo: Path):
    write_skill_file(repo, "release-checklist", "How we cut a release.")
    store.refresh()
    assert "more" not in skills_line(store)


def test_the_briefing_ranks_the_last_changed_skill_first_and_breaks_ties_in_number_order(store: Store, repo: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch):
    """Skills committed together tie on when they changed; the tie was broken by name as text (1, 10, 11, ...), which read
    as if the ranking were alphabetical. The one changed since ranks first; ties read 1, 2, 3."""
    for i in range(1, 41):
        write_skill_file(repo, f"procedure-{i}", f"Procedure {i}.")
    git(repo, "add", "-A")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
    git(repo, "commit", "-qm", "skills")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    write_skill_file(repo, "procedure-17", "Procedure 17, now with the retry step.")
    git(repo, "commit", "-qam", "procedure 17 retries")
    store.refresh()
    named = re.findall(r"skill:(procedure-\d+) ", skills_line(store))
    assert named == ["procedure-17", "procedure-1", "procedure-2", "procedure-3", "procedure-4", "procedure-5"][:SKILLS_SHOWN]
