"""A name put into a command repo-memory prints for a person to paste stays one word and one line, and runs nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from repo_memory.guards.shellwords import quoted

HOSTILE = ["x$(touch PWNED)", "`touch PWNED`", "a;touch PWNED", "a\ntouch PWNED", "it's", "-rf", "", "a b", "\\", "*",
           "a\r\x1b[2Jb", "x\u202eexe.sh", "zero\u200bwidth", "caf\u00e9", "tab\there", "\udcff.txt", "\U0001f600"]


def echoed(shell: str, words: str, cwd: Path) -> list[str]:
    done = subprocess.run([shell, "-c", f"for w in {words}; do printf '%s\\0' \"$w\"; done"], cwd=cwd, capture_output=True,
                          timeout=30, check=True)
    return [w.decode("utf-8", "surrogateescape") for w in done.stdout.split(b"\0")[:-1]]


def test_each_name_is_one_word_the_shell_gives_back_as_it_was_and_runs_nothing(tmp_path: Path):
    assert echoed("bash", quoted(*HOSTILE), tmp_path) == HOSTILE
    assert list(tmp_path.iterdir()) == []


def test_a_printable_name_is_a_posix_word_any_sh_reads(tmp_path: Path):
    printable = [n for n in HOSTILE if n.isprintable()]
    assert echoed("sh", quoted(*printable), tmp_path) == printable
    assert quoted(".agents/experience/2026-12/notes.1a2b3c4d.jsonl") == ".agents/experience/2026-12/notes.1a2b3c4d.jsonl"


def test_a_name_holding_a_control_character_stays_on_one_line_with_the_character_shown_escaped():
    shown = quoted("a\nb", "c\x1b[31md")
    assert "\n" not in shown and "\x1b" not in shown and shown == "$'a\\nb' $'c\\x1b[31md'"


def test_a_shell_without_ansi_c_quotes_reads_a_name_that_matches_nothing_never_a_command(tmp_path: Path):
    """dash reads `$'a\\n$(touch PWNED)'` as `$` and a single-quoted word: one word, no command run."""
    (word,) = echoed("sh", quoted("a\n$(touch PWNED)"), tmp_path)
    assert "PWNED" in word and list(tmp_path.iterdir()) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(exclude_characters="\0", exclude_categories=("Cs",)), max_size=12), max_size=4))
def test_any_names_come_back_from_bash_as_they_were(names: list[str]):
    assert echoed("bash", quoted(*names), Path("/")) == names
