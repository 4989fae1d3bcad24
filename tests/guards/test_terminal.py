"""What a terminal is given of the repository's text: every character it would act on instead of drawing, escaped."""

from __future__ import annotations

from repo_memory.guards.terminal import hidden, visible


def test_each_kind_of_control_is_escaped_and_plain_text_left_as_it_is():
    text = "a\rb\x08c\x1b]52;c;eA==\x07d\x9b31me\u202ef\u2028g\x7fh\x00"
    assert visible(text) == "a\\x0db\\x08c\\x1b]52;c;eA==\\x07d\\x9b31me\\u202ef\\u2028g\\x7fh\\x00"
    plain = "café — naïve 日本語 👩‍👩‍👧 \\x0d as typed\ttab\n"
    assert visible(plain) == plain


def test_text_of_many_lines_keeps_its_newlines_tabs_and_crlf_ends_and_a_name_keeps_none():
    assert visible("one\r\ntwo\tthree\nfour\r\r\n") == "one\r\ntwo\tthree\nfour\\x0d\r\n"
    assert visible("evil\nfake\tline\r\n", lines=False) == "evil\\x0afake\\x09line\\x0d\\x0a"


def test_escaping_twice_changes_nothing_more():
    once = visible("x\r\x1b[2J\u202ey\n", lines=False)
    assert visible(once) == visible(once, lines=False) == once


def test_hidden_names_each_character_with_its_line():
    assert hidden("a\r\nb\rc\n\nd\x1b\u202e\n") == [
        (2, "a carriage return (\\x0d)"), (4, "an escape character (ESC) (\\x1b)"), (4, "a bidi control (\\u202e)")]
    assert hidden("plain\r\ntext\twith tabs\n") == []
