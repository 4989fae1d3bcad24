"""What the indexed records say: sessions, timelines, loop runs, the evidence on each skill, quarantined records."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from repo_memory.formats.refs import RECORD
from repo_memory.index.db import Database
from repo_memory.index.ranking import ROUTINE

_RUN_OF = re.compile(r"\.[0-9a-f]{8}$")  # RUN.<clone>: a log another clone went on with the run in


class Activity:
    """Read-only questions over the records table."""

    def __init__(self, db: Database):
        self._db = db

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._db.lock:
            return [tuple(r) for r in self._db.conn.execute(sql, params)]

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._db.lock:
            cursor = self._db.conn.execute(sql, params)
            cols = [c[0] for c in cursor.description]
            return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def locate(self, session: str, start: int, end: int) -> list[tuple[str, int, int, int, str]]:
        """(file, offset, length, seq, id) of records start..end of `session`, in log order (two per seq in a forked log)."""
        return self._all("SELECT file, offset, length, seq, id FROM records WHERE session=? AND seq BETWEEN ? AND ? ORDER BY seq, offset",
                         (session, start, end))

    def rows_in(self, file: str) -> int:
        """How many records of log `file` have a row (a line whose id a record of another file took has none)."""
        return int(self._all("SELECT COUNT(*) FROM records WHERE file=?", (file,))[0][0])

    def forked(self) -> list[tuple[str, list[str], list[str]]]:
        """(session, the ids that name two records, the records citing one of those ids) of every log two clones wrote
        under one name and git union-merged: such an id reads back the record indexed first, its twin is `ID~HASH`."""
        shared: dict[str, list[str]] = {}
        for session, rid in self._all("SELECT session, id FROM records WHERE id LIKE '%#%~%' ORDER BY session, seq"):
            shared.setdefault(session, []).append(rid.partition("~")[0])
        out = []
        for session, ids in shared.items():
            seqs, citing = {int(i.rpartition("#")[2]) for i in ids}, []
            for rid, refs, covers in self._all("SELECT id, refs, covers FROM records WHERE instr(refs, ?) OR instr(covers, ?) "
                                               "ORDER BY ts", (f'"{session}#',) * 2):
                if any(_takes_in(ref, session, seqs) for ref in (*json.loads(refs or "[]"), *json.loads(covers or "[]"))):
                    citing.append(rid)
            out.append((session, ids, citing))
        return out

    def positions(self, ids: Sequence[str]) -> dict[str, tuple[str, int, int]]:
        """id -> (log file, offset, length of the record's line), for saying whether a record is committed and whose it is."""
        if not ids:
            return {}
        rows = self._all(f"SELECT id, file, offset, length FROM records WHERE id IN ({','.join('?' * len(ids))})", list(ids))
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def nearest(self, session: str, seq: int) -> str | None:
        """The id of the record closest to session#seq, for did-you-mean."""
        rows = self._all("SELECT id FROM records WHERE session=? ORDER BY abs(seq - ?) LIMIT 1", (session, seq))
        return str(rows[0][0]) if rows else None

    def record(self, record_id: str) -> dict[str, Any] | None:
        """The indexed row of one record."""
        rows = self._dicts("SELECT id, kind, ts, session, actor, harness, tool, text FROM records WHERE id=?", (record_id,))
        return rows[0] if rows else None

    def sessions(self) -> list[tuple[str, int, str, str]]:
        """(session, records, first ts, last ts) of every indexed session, newest first."""
        return self._all("SELECT session, count(*), min(ts), max(ts) FROM records GROUP BY session ORDER BY max(ts) DESC")

    def timeline(self, since: str | None = None, limit: int = 200) -> tuple[list[dict[str, Any]], int]:
        """The newest `limit` records (from `since`) in time order, and how many earlier ones from `since` there are besides."""
        rows = self._dicts("SELECT id, ts, kind, actor, text FROM (SELECT id, ts, kind, actor, session, seq, substr(text, 1, 160) AS text "
                           "FROM records WHERE ts >= ? ORDER BY ts DESC, session DESC, seq DESC LIMIT ?) ORDER BY ts, session, seq",
                           (since or "", limit))
        total = self._all("SELECT count(*) FROM records WHERE ts >= ?", (since or "",))[0][0]
        return rows, total - len(rows)

    def per_day(self) -> list[tuple[str, int]]:
        """(date, records) for every day with records, oldest first."""
        return self._all("SELECT substr(ts, 1, 10), count(*) FROM records GROUP BY 1 ORDER BY 1")

    def flagged(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """(id, markers) of every quarantined record, or of those among `ids` (a write telling its writer)."""
        if ids is None:
            return self._all("SELECT id, flags FROM records WHERE flags != '' ORDER BY id")
        marks = ", ".join("?" * len(ids))
        return self._all(f"SELECT id, flags FROM records WHERE flags != '' AND id IN ({marks}) ORDER BY id", ids)

    def runs(self) -> list[str]:
        """The session of every loop run (its id), newest first."""
        return [r[0] for r in self._all("SELECT session FROM records WHERE kind='loop.start' AND flags = '' ORDER BY ts DESC")]

    def receipts(self, loop: str, limit: int = 5) -> list[dict[str, Any]]:
        """The loop.end receipts of earlier runs of `loop`, newest first: a run two clones ended before either pulled
        has its first (runner/runstate.py)."""
        first: dict[str, dict[str, Any]] = {}
        for rid, text, session in self._all("SELECT id, text, session FROM records WHERE kind='loop.end' AND flags = '' "
                                            "AND session GLOB ? ORDER BY ts", (f"{loop}-[0-9]*",)):
            first.setdefault(_RUN_OF.sub("", session), {"id": rid, "summary": text})
        return list(reversed(first.values()))[:limit]

    def recently_used_skills(self, limit: int = 50) -> list[str]:
        """Skills credited in the most recent `skill.used` records, most recent first."""
        names: list[str] = []
        for (refs,) in self._all("SELECT refs FROM records WHERE kind='skill.used' ORDER BY ts DESC LIMIT ?", (limit,)):
            for ref in json.loads(refs or "[]"):
                if ref.startswith("skill:") and ref[6:] not in names:
                    names.append(ref[6:])
        return names

    def last_summary(self, other_than: str) -> dict[str, Any] | None:
        """The newest summary record of a session other than `other_than` (never a quarantined one, nor a hook's note
        that the harness compacted its context: ROUTINE)."""
        rows = self._all("SELECT id, ts, text, covers FROM records t WHERE kind='summary' AND session != ? AND flags = '' "
                         f"AND {ROUTINE} ORDER BY ts DESC LIMIT 1", (other_than,))
        return {"id": rows[0][0], "ts": rows[0][1], "text": rows[0][2] or "", "covers": json.loads(rows[0][3] or "[]")} if rows else None

    def skill_evidence(self, failed: Sequence[str]) -> list[tuple[str, int, int, int, int, int, int, str, int, int]]:
        """Per skill cited by `skill.used`/`outcome` records: (name, uses, successes, failures, helped, misled, outdated,
        last ts, sessions the bad outcomes came from, whether a person gave one)."""
        marks = ",".join("?" * len(failed))
        bad = f"((r.kind = 'outcome' AND r.outcome IN ({marks})) OR r.outcome IN ('misled', 'outdated'))"
        return self._all(
            "SELECT substr(j.value, 7), SUM(r.kind = 'skill.used'), "
            "SUM(r.kind = 'outcome' AND r.outcome = 'succeeded'), "
            f"SUM(r.kind = 'outcome' AND r.outcome IN ({marks})), "
            "SUM(r.outcome = 'helped'), SUM(r.outcome = 'misled'), SUM(r.outcome = 'outdated'), MAX(r.ts), "
            f"COUNT(DISTINCT CASE WHEN {bad} THEN r.session END), MAX({bad} AND r.actor = 'human') "
            "FROM records r, json_each(r.refs) j WHERE r.kind IN ('skill.used', 'outcome') AND r.flags = '' "
            "AND j.value LIKE 'skill:%' GROUP BY 1", [*failed, *failed, *failed])

    def anchored(self) -> list[tuple[str, str]]:
        """(record id, anchors JSON) of every record that cites code."""
        return self._all("SELECT id, anchors FROM records WHERE anchors != ''")

    def live_runs(self, limit: int = 3, since: str = "") -> tuple[list[dict[str, Any]], int]:
        """Loop runs started and not ended that saw a record at or after `since`, newest first (run, loop, iterations
        so far); and how many more runs never ended but have been quiet since before it."""
        # the run's log and those clones went on with it in (RUN.<clone>: '/' follows '.'), as ranges the index answers
        of_run = "(x.session = s.session OR x.session > s.session || '.' AND x.session < s.session || '/')"
        rows = self._all(
            f"SELECT s.session, (SELECT count(*) FROM records x WHERE {of_run} AND x.kind = 'loop.decision'), "
            f"(SELECT max(x.ts) FROM records x WHERE {of_run}) AS last "
            "FROM records s WHERE s.kind = 'loop.start' AND s.flags = '' AND NOT EXISTS "
            f"(SELECT 1 FROM records x WHERE {of_run} AND x.kind = 'loop.end' AND x.flags = '') ORDER BY s.ts DESC")
        moving = [{"run": r[0], "loop": r[0].rsplit("-", 3)[0], "iterations": r[1]} for r in rows if r[2] >= since]
        return moving[:limit], len(rows) - len(moving)


def _takes_in(ref: str, session: str, seqs: set[int]) -> bool:
    """Whether `ref`, an id or a range, names any record `seqs` of `session` without saying which twin (no ~HASH)."""
    match = RECORD.match(ref) if isinstance(ref, str) else None
    if match is None or match["session"] != session or match["fork"]:
        return False
    start, end = int(match["start"]), int(match["end"] or match["start"])
    return any(start <= seq <= end for seq in seqs)
