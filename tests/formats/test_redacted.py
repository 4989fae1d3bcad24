"""The part of a string a person redacts that a cut left at the end of a copy a record keeps (formats/redacted.py)."""

from __future__ import annotations

from repo_memory.formats import redacted

SECRET = "Zebra-Quartz-991"


def test_an_opening_of_the_string_at_a_copys_end_is_redacted_before_the_cut_mark():
    assert redacted.ends("deploy with Zebra-Qu", [SECRET]) == ("deploy with [REDACTED]", 1)
    assert redacted.ends('{"command": "./x --lab Zebra-Q…', [SECRET]) == ('{"command": "./x --lab [REDACTED]…', 1)


def test_a_closing_of_the_string_after_a_leading_cut_mark_is_redacted():
    """A loop's excerpt is `…` and the end of a command's output: a secret its cut went through left its last characters."""
    assert redacted.ends("…uartz-991\nstep 9 ok", [SECRET]) == ("…[REDACTED]\nstep 9 ok", 1)
    assert redacted.ends("uartz-991 was it", [SECRET]) == ("uartz-991 was it", 0)  # no cut at its start: whole text


def test_fewer_than_part_chars_the_whole_string_and_the_middle_of_a_text_are_left():
    assert redacted.ends("deploy with Zeb", [SECRET]) == ("deploy with Zeb", 0)
    assert redacted.ends("Zebra-Qu is how it starts, ok", [SECRET]) == ("Zebra-Qu is how it starts, ok", 0)


def test_the_part_is_found_as_json_spells_the_string():
    quoted = 'pa"ss\\word-77'
    assert redacted.ends('{"cmd": "login pa\\"ss\\\\wo', [quoted]) == ('{"cmd": "login [REDACTED]', 1)


def test_cut_copies_are_the_text_and_the_cut_fields_of_data_never_ids_or_hashes():
    record = {"text": "Bash ./deploy --lab Zebra", "refs": ["Zebra"],
              "data": {"output_text": "ok\nZebra-Quar", "output_blob": "ab" * 31 + "Zebra", "tool": "Zebra"}}
    new, count = redacted.cut_copies(record, [SECRET])
    assert count == 2 and new["text"].endswith("[REDACTED]") and new["data"]["output_text"] == "ok\n[REDACTED]"
    assert new["data"]["output_blob"] == record["data"]["output_blob"] and new["refs"] == ["Zebra"]
    assert record["data"]["output_text"] == "ok\nZebra-Quar"  # the record given is left as it was
