"""The length under which a log line is rejected unparsed is below that of the shortest record the schema accepts."""

from __future__ import annotations

from repo_memory.formats import experience
from repo_memory.formats.schema import validate


def test_the_shortest_record_the_schema_accepts_is_longer_than_the_bound_and_is_read():
    """A line shorter than SHORTEST bytes is rejected without parsing it: the record with every required field at its
    shortest must be longer, or a valid record would be refused."""
    shortest = {"id": "a#1", "ts": "0000-00-00T00:00:00Z", "session": "a", "seq": 1, "kind": "note", "refs": [],
                "source": {"actor": "agent"}, "sha256": "0" * 64, "prev": None}
    line = experience.canonical(shortest)
    assert validate("experience", shortest) == [] and len(line) > experience.SHORTEST
    assert experience.parse_line(line, 0).record == shortest
    assert experience.parse_line(b"{}", 0).problem == experience.TOO_SHORT
    assert "'id' is a required property" in experience.explained(experience.parse_line(b"{}", 0))
    assert experience.explained(experience.parse_line(b"not json", 0)).startswith("not JSON")


def test_the_readers_that_pass_short_lines_over_see_what_parsing_every_line_sees():
    """The index (`records_in`) and verify (`sifted`) skip parsing lines too short to hold a record; they find the
    same records, the same first lines that hold none, the same count, and the same end of the last complete line."""
    record = {"id": "a#1", "ts": "2026-12-05T10:00:00Z", "session": "a", "seq": 1, "kind": "note", "refs": [],
              "source": {"actor": "agent"}, "prev": None, "text": "The deploy needs the VPN."}
    good = experience.canonical(experience.seal(record)) + b"\n"
    odd = experience.canonical({"note": "x" * 200}) + b"\n"
    data = b"{}\n" * 3 + good + b"\n\n" + odd + b"[]\n" * 4 + odd * 3 + good + b"{}\n" + b'{"torn'
    every = experience.parse_lines(data, base=7)
    unread = [line for line in every if line.record is None and not line.torn]
    kept, first, count = experience.sifted(data, 6)
    assert [line.offset for line in kept] == [line.offset - 7 for line in every if line.record or line.torn]
    assert [line.offset for line in first] == [line.offset - 7 for line in unread[:6]] and count == len(unread)
    found, end = experience.records_in(data, base=7)
    assert [line.record for line in found] == [line.record for line in every if line.record]
    assert end == 7 + len(data) - len(b'{"torn')
