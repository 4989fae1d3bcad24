"""Relative times in what people write, read against the record's own time (formats/when.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from repo_memory.formats import when

MONDAY = datetime(2023, 5, 8, 13, 56)


@pytest.mark.parametrize(("text", "meant"), [
    ("I went to the support group yesterday.", "2023-05-07 7 May 2023"),
    ("We are going tomorrow", "2023-05-09 9 May 2023"),
    ("Last Friday I ran a charity race", "2023-05-05 5 May 2023"),
    ("this friday we leave", "2023-05-12 12 May 2023"),
    ("next Monday", "2023-05-15 15 May 2023"),
    ("two weeks ago we met", "2023-04-24 24 April 2023"),
    ("3 days ago", "2023-05-05 5 May 2023"),
    ("I painted that last year", "2022"),
    ("a few years ago", "2020"),
    ("next month we go camping", "June 2023"),
    ("last month", "April 2023"),
])
def test_a_relative_time_names_the_date_it_means(text: str, meant: str):
    assert when.mentions(text, MONDAY) == [meant]


def test_text_without_a_time_names_none_and_does_not_state_one():
    assert when.mentions("We talked about painting and pottery.", MONDAY) == []
    assert not when.states_time("We talked about painting and pottery.")
    assert when.states_time("We moved here in 2019.") and when.states_time("It was last week.")


@pytest.mark.parametrize("text", ["Fixed the pager crash. Refs #2031.", "Merged PR 1999 for the pager.", "It fails at line 1834 of core.py.",
                                  "The NFS server listens on port 2049.", "Set the timeout to 2000.5 ms.", "See issue 2025 for why."])
def test_a_number_that_looks_like_a_year_but_names_an_issue_a_line_or_a_port_states_no_time(text: str):
    """An engineering log is full of issue numbers, pull requests, line numbers and ports between 1800 and 2099: read as
    years, they made a "when…" question prefer every record citing issue #2031 over one citing #3031."""
    assert not when.states_time(text)


@pytest.mark.parametrize("text", ["We moved here in 2019.", "Released on 2023-05-08.", "Since May 2023 the job runs nightly.",
                                  "The 2024 roadmap dropped it.", "It broke in 2021, then again."])
def test_a_year_written_as_people_write_one_still_states_a_time(text: str):
    assert when.states_time(text)


@pytest.mark.parametrize(("question", "asks"), [
    ("When did Caroline go to the LGBTQ support group?", True),
    ("How long ago was Caroline's 18th birthday?", True),
    ("In what year did she move?", True),
    ("What did Melanie paint?", False),
    ("Where does the team deploy when tests fail?", False),
])
def test_a_question_that_asks_for_a_time_is_told_apart(question: str, asks: bool):
    assert when.asks_when(question) is asks


@pytest.mark.parametrize(("seconds", "said"), [(0.03, "under a second"), (1.4, "about 1 s"), (42, "about 42 s"),
                                               (89, "about 89 s"), (90, "about 2 min"), (3448, "about 57 min"),
                                               (5400, "about 1.5 h"), (12 * 3600, "about 12 h")])
def test_a_length_of_time_is_said_in_the_unit_a_person_would_use(seconds: float, said: str):
    assert when.length(seconds) == said
