"""JSON with comments read as Gemini CLI reads trustedFolders.json (strip-json-comments 3, then JSON.parse), and a
member added then taken out in place: the person's comments and layout come back byte for byte."""

from __future__ import annotations

import pytest

from repo_memory.shells import jsonc

TEXTS = [
    '{\n  // the folders I trust\n  "/srv/other": "TRUST_FOLDER", /* work */\n'
    '  "/srv/old": "DO_NOT_TRUST" // never again\n}\n',
    "{}", "{\n}\n", "{\r\n}", "{\n  // nothing yet\n}", '{"a": "X"}', '{"a": "X", "b": "Y"}', '{"a":"X" /* } */}',
    '{"a": "X" // a comment with "quotes", and a comma\n}', '{\r\n  "a": "X" // c\r\n}\r\n',
    '{\n\t"a": "X",\n\t"b": "Y" // last\n}',
    '  {"a": "http://x"}  // after it',
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_member_added_then_taken_out_gives_the_text_back_and_each_reads_as_asked(text: str):
    before = jsonc.load(text)
    added = jsonc.with_member(text, "/p", "TRUST_FOLDER")
    assert added is not None and jsonc.load(added) == {**before, "/p": "TRUST_FOLDER"}, added
    assert jsonc.with_member(added, "/p", None) == text
    changed = jsonc.with_member(added, "/p", "DO_NOT_TRUST")
    assert changed is not None and jsonc.load(changed) == {**before, "/p": "DO_NOT_TRUST"}, changed


@pytest.mark.parametrize(("text", "read"), [
    ('{"a": "//not a comment"} // one', {"a": "//not a comment"}),
    ('{"a\\"/*": "b"} /* open to the end', {'a"/*': "b"}),
    ('{"a": "b"} // windows\r\n', {"a": "b"}),
])
def test_comments_are_stripped_as_strip_json_comments_does_and_strings_kept(text: str, read: dict[str, str]):
    assert jsonc.load(text) == read
    assert len(jsonc.strip(text)) == len(text)  # positions in the stripped text are those of the text


@pytest.mark.parametrize("text", ['{"a": NaN}', "", "\ufeff{}", '{"a": "b",}', '{"a": "b"} /* \u00a0 */'])
def test_what_json_parse_refuses_is_refused(text: str):
    with pytest.raises(ValueError):
        jsonc.load(text)
