"""The session briefing: what a harness shows the model when a session starts, under 2 KB, every item citing an id."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from repo_memory.core import runlock
from repo_memory.core.utility import Utility
from repo_memory.formats import when
from repo_memory.guards.shellwords import quoted

if TYPE_CHECKING:
    from repo_memory.code.staleness import Stale

BRIEFING_BYTES = 2000
SKILLS_SHOWN = 6
DRAFTS_SHOWN = 4
STALE_MARK = " (stale: the code it cites changed)"  # what changed is the read's `stale_reason`: the briefing stays short


QUIET_DAYS = 1  # a run nobody stepped for this long is no longer offered to step (it never ends on its own)


def clipped(text: str, chars: int) -> str:
    """`text` cut at a word before `chars`, with an ellipsis when it was cut (a cut mid-word read as a typo)."""
    text = " ".join(text.split())
    if len(text) <= chars:
        return text
    cut = text[: chars - 1].rsplit(" ", 1)[0] if " " in text[: chars - 1] else text[: chars - 1]
    return cut.rstrip(",;:") + "…"


def numbered(name: str) -> tuple[str | int, ...]:
    """`name` as a sort key reading its digits as numbers: procedure-2 before procedure-10, as a person counts."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", name)))  # text, digits, text, ...


def quiet_since() -> str:
    """The records' time QUIET_DAYS ago: a run with no record since then has gone quiet."""
    return when.iso(datetime.now(UTC) - timedelta(days=QUIET_DAYS))


def compose(live: tuple[list[dict[str, Any]], int], skills: list[dict[str, Any]], used: list[str], evidence: dict[str, Utility],
            summary: dict[str, Any] | None, changed: Callable[[list[tuple[str, int]]], dict[str, int]] | None = None,
            drafts: Sequence[str] = (), stale: Callable[[list[str]], list[Stale]] | None = None) -> str:
    """Live loop runs (a check cut off said: `cut_off`, when it began; and how many never ended but went quiet), the first SKILLS_SHOWN active skills and how many more
    (recently used and useful first, then the most recently changed: `changed([(path, mtime_ns)])`, core/ages.py; ties in
    name order, numbers as numbers) with those whose cited code changed marked (`stale(["skill:NAME"])`), doubtful
    skills, the names of the drafts awaiting review, the previous session's last checkpoint."""
    lines = ["repo-memory: this repository keeps memory in .agents/ (use recall / read; remember and checkpoint as you work)."]
    moving, quiet = live
    for run in moving:
        cut = (f"; its check was cut off at {when.shown(run['cut_off'])} before it decided (the process running it was "
               f"stopped): loop_step checks again, or a person ends it with `repo-memory loop abort {quoted(str(run['run']))}`"
               ) if run.get("cut_off") else ""
        lines.append(f"- live loop run {run['run']} ({run['loop']}, {runlock.progress(run)}): loop_status / loop_step{cut}")
    if quiet:
        lines.append(f"- {quiet} older loop run(s) never ended and saw no step for over {QUIET_DAYS} day(s); a person lists them "
                     "with `repo-memory loop status` and ends one with `repo-memory loop abort RUN`")
    active = [r for r in skills if r["winner"] and r["status"] == "active" and not r["flags"]]  # never quarantined ones
    worth = {r["name"]: evidence[r["name"]].utility if r["name"] in evidence else 1.0 for r in active}
    ages = changed([(r["path"], r["mtime_ns"]) for r in active]) if changed and len(active) > SKILLS_SHOWN else {}
    age = {r["name"]: ages.get(r["path"], r["mtime_ns"]) for r in active}
    ranked = sorted(active, key=lambda r: (r["name"] not in used, -worth[r["name"]], used.index(r["name"]) if r["name"] in used else 0,
                                           -age.get(r["name"], 0), numbered(r["name"])))
    if ranked:
        # A stale skill is marked where it ranks, not left out: Claude Code's mirror, Codex and Gemini CLI list it
        # among the skills anyway, so leaving it out would not keep an agent from following it, only take away the
        # one warning; and most of a skill often still holds (a read gives `stale_reason`, what changed).
        shown = ranked[:SKILLS_SHOWN]
        outdated = {s.memory.removeprefix("skill:") for s in stale([f"skill:{r['name']}" for r in shown])} if stale else set()
        more = (f"; and {len(ranked) - SKILLS_SHOWN} more: recall(query=\"what you are about to do\", kinds=[\"skill\"]) finds them"
                if len(ranked) > SKILLS_SHOWN else "")
        lines.append("- skills: " + "; ".join(f"skill:{r['name']}{STALE_MARK * (r['name'] in outdated)} — {clipped(r['description'], 80)}"
                                               for r in shown) + more)
    doubtful = [u for u in evidence.values() if u.deprecate and u.name in worth][:3]
    if doubtful:
        lines.append("- often misled or failed (a person may set status: deprecated): "
                     + "; ".join(f"skill:{u.name} (misled {u.misled}, failed {u.failures}, outdated {u.outdated})" for u in doubtful))
    if drafts:  # Codex and Gemini CLI list .agents/skills themselves and show a draft as any other skill
        more = f" and {len(drafts) - DRAFTS_SHOWN} more" if len(drafts) > DRAFTS_SHOWN else ""
        lines.append("- drafts not yet reviewed by a person, so not to be followed even where your harness lists "
                     "them as skills: " + ", ".join(f"skill:{n}" for n in drafts[:DRAFTS_SHOWN]) + more)
    if summary:
        lines.append(f"- last checkpoint {summary['id']} ({when.shown(summary['ts'], seconds=False)}): {clipped(summary['text'], 300)}"
                     + (f" [covers {', '.join(summary['covers'][:3])}]" if summary["covers"] else ""))
    text = "\n".join(lines)
    while len(text.encode()) > BRIEFING_BYTES:
        lines.pop(-1 if len(lines) > 1 else 0)
        text = "\n".join(lines)
    return text
