"""Session ids: what is refused, and that the refusal says exactly what is allowed."""

from __future__ import annotations

import pytest

from repo_memory.errors import InvalidArgumentError
from repo_memory.formats import refs


@pytest.mark.parametrize("name", ["café-notes", "notes/today", "-notes"])
def test_a_refused_session_id_is_shown_as_typed_and_the_message_says_only_ascii_letters_are_allowed(name: str):
    """`café-notes` was refused with "use letters, digits…" (é is a letter) and shown as 'caf\\xe9-notes'."""
    with pytest.raises(InvalidArgumentError) as refused:
        refs.check_session(name)
    said = str(refused.value)
    assert f"'{name}'" in said and "ASCII letters (a-z, A-Z)" in said, said


def test_a_name_windows_reserves_is_refused_as_such():
    with pytest.raises(InvalidArgumentError, match="Windows reserves"):
        refs.check_session("con.notes")
