"""`repo-memory report`: one self-contained HTML page of a repository's memory, for people.

Skills with status, utility and staleness; drafts awaiting review; loop runs as a timeline with their terminal
states and iterations; experience recorded per day. No script, no external file, no network at view time:
inline CSS and SVG only. Every piece of memory content is escaped — memory is untrusted text, and the page
must not become a way to run it. The root element carries the counts as data attributes (for tests and tools).
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any

from repo_memory.core import utility
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store
from repo_memory.formats import when
from repo_memory.guards.shellwords import quoted

STATE_COLOURS = {"succeeded": "#2e7d32", "no_op": "#607d8b", "running": "#1565c0", "aborted": "#757575",
                 "blocked": "#c62828", "budget_exhausted": "#ef6c00", "no_progress": "#ad1457", "unverifiable": "#6a1b9a"}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.muted{color:#667085}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{background:#fff;border:1px solid #e4e7ec;border-radius:8px;padding:10px 14px;min-width:120px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #e4e7ec}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.tag{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;color:#fff}
.draft{background:#b26a00}.active{background:#2e7d32}.deprecated{background:#757575}
.stale{color:#c62828}code{font-size:12px}svg{background:#fff;border:1px solid #e4e7ec;border-radius:8px}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def build(store: Store) -> str:
    """The report's HTML."""
    store.refresh()
    engine = Engine(store)
    skills = [r for r in store.skills() if r["winner"]]
    evidence = store.evidence()
    stale: dict[str, list[str]] = {}
    settled: dict[str, str] = {}  # records a correction, feedback or a person's check retired: history, as `stale` says
    for item in store.stale():
        if item.settled:
            settled[item.memory] = item.settled
        else:
            stale.setdefault(item.memory, []).append(item.reason)
    runs = engine.status()
    days = store.per_day()
    total_records = sum(n for _, n in days)
    sessions = len(store.sessions())
    drafts = [r for r in skills if r["status"] == "draft"]
    counts = {"skills": len(skills), "drafts": len(drafts), "stale": len(stale), "runs": len(runs), "records": total_records,
              "sessions": sessions, "days": len(days)}
    attrs = " ".join(f'data-{k}="{v}"' for k, v in counts.items())
    now = when.shown(when.iso(datetime.now(UTC)), seconds=False)
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>repo-memory report — {_e(store.root.name)}</title><style>{CSS}</style></head>",
        f"<body><main id=report {attrs}>",
        f"<h1>Memory of {_e(store.root.name)}</h1><div class=muted>generated {now} by repo-memory; everything below is data "
        "recorded in the repository, shown as text</div>",
        "<div class=cards>" + "".join(
            f"<div class=card><b id=count-{k}>{v}</b>{label}</div>" for k, v, label in (
                ("skills", counts["skills"], "skills"), ("drafts", counts["drafts"], "drafts to review"),
                ("stale", counts["stale"], "stale memories"), ("runs", counts["runs"], "loop runs"),
                ("records", counts["records"], "experience records"), ("sessions", counts["sessions"], "sessions"))) + "</div>",
        _drafts(drafts), _skills(skills, evidence, stale), _runs(runs), _activity(days), _stale_list(stale, settled),
        "</main></body></html>",
    ]
    return "\n".join(parts)


def _drafts(drafts: list[dict[str, Any]]) -> str:
    if not drafts:
        return "<h2>Drafts awaiting review</h2><p class=muted>None.</p>"
    rows = "".join(f"<tr><td>{_e(r['name'])}</td><td>{_e(r['description'])}</td><td><code>repo-memory accept {_e(quoted(r['name']))}</code></td></tr>"
                   for r in drafts)
    return f"<h2>Drafts awaiting review</h2><table id=drafts><tr><th>skill</th><th>description</th><th>to accept</th></tr>{rows}</table>"


def _skills(skills: list[dict[str, Any]], evidence: dict[str, utility.Utility], stale: dict[str, list[str]]) -> str:
    rows = []
    ordered = sorted(skills, key=lambda r: (-(evidence[r["name"]].utility if r["name"] in evidence else 1.0), r["name"]))
    for r in ordered:
        u = evidence.get(r["name"], utility.Utility(r["name"]))
        notes = [f'<span class=stale>stale: {_e(s)}</span>' for s in stale.get(f"skill:{r['name']}", [])]
        if r["flags"]:
            notes.append("<span class=stale>quarantined (see doctor)</span>")
        if u.deprecate:
            notes.append("<span class=stale>deprecate?</span>")
        description = r["description"] if len(r["description"]) <= 140 else r["description"][:139] + "…"
        rows.append(f"<tr><td>{_e(r['name'])}<div class=muted>{_e(description)}</div></td><td><span class='tag {_e(r['status'])}'>{_e(r['status'])}</span></td>"
                    f"<td class=num>{u.utility:.2f}</td><td class=num>{u.uses}</td><td class=num>{u.successes}</td>"
                    f"<td class=num>{u.failures}</td><td class=num>{u.helped}</td><td class=num>{u.misled}</td>"
                    f"<td>{_e(when.shown(u.last_used, seconds=False)) or '—'}</td><td>{'<br>'.join(notes)}</td></tr>")
    head = ("<tr><th>skill</th><th>status</th><th>utility</th><th>uses</th><th>succeeded</th><th>failed</th><th>helped</th>"
            "<th>misled</th><th>last used</th><th>notes</th></tr>")
    return f"<h2>Skills</h2><table id=skills>{head}{''.join(rows)}</table>" if rows else "<h2>Skills</h2><p class=muted>None yet.</p>"


def _runs(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return "<h2>Loop runs</h2><p class=muted>None yet.</p>"
    ordered = sorted(runs, key=lambda r: r["started"])
    width, row = 1040, 22
    start = datetime.fromisoformat(ordered[0]["started"].replace("Z", "+00:00")).timestamp()
    end = max(datetime.fromisoformat(r["started"].replace("Z", "+00:00")).timestamp() for r in ordered)
    span = max(end - start, 1.0)
    bars = []
    for i, r in enumerate(ordered):
        at = datetime.fromisoformat(r["started"].replace("Z", "+00:00")).timestamp()
        x = 220 + (at - start) / span * (width - 360)
        colour = STATE_COLOURS.get(r["state"], "#455a64")
        bars.append(f'<text x=8 y={i * row + 16} font-size=12>{_e(r["loop"])} · {_e(when.shown(r["started"], seconds=False))}</text>'
                    f'<rect x={x:.0f} y={i * row + 5} width={max(8, 12 * r["iterations"])} height=14 rx=3 fill="{colour}">'
                    f'<title>{_e(r["run"])}: {_e(r["state"])} after {r["iterations"]} iteration(s)</title></rect>'
                    f'<text x={x + max(8, 12 * r["iterations"]) + 6:.0f} y={i * row + 16} font-size=12 class=run-state>'
                    f'{_e(r["state"])} ({r["iterations"]})</text>')
    svg = f'<svg id=runs width={width} height={len(ordered) * row + 8} role=img aria-label="loop runs">{"".join(bars)}</svg>'
    legend = " ".join(f'<span class=tag style="background:{c}">{_e(s)}</span>' for s, c in STATE_COLOURS.items())
    return f"<h2>Loop runs</h2><p class=muted>one row per run, in start order; the bar's length is its iterations</p>{svg}<p>{legend}</p>"


def _activity(days: list[tuple[str, int]]) -> str:
    if not days:
        return "<h2>Experience per day</h2><p class=muted>No records yet.</p>"
    shown = days[-90:]
    top = max(n for _, n in shown)
    width, height, gap = 1040, 140, 2
    bar = max(4, min(40, (width - 20) // len(shown) - gap))
    rects = "".join(
        f'<rect class=day x={10 + i * (bar + gap)} y={height - 20 - n / top * (height - 40):.0f} width={bar} '
        f'height={max(1, n / top * (height - 40)):.0f} fill="#1565c0"><title>{_e(d)}: {n} record(s)</title></rect>'
        for i, (d, n) in enumerate(shown))
    labels = f'<text x=10 y={height - 4} font-size=11>{_e(shown[0][0])}</text><text x={width - 80} y={height - 4} font-size=11>{_e(shown[-1][0])}</text>'
    return (f"<h2>Experience per day</h2><p class=muted>records appended per day, UTC days (last {len(shown)} days with activity; "
            f"busiest: {top})</p><svg id=activity width={width} height={height} role=img aria-label='records per day'>{rects}{labels}</svg>")


def _stale_list(stale: dict[str, list[str]], settled: dict[str, str]) -> str:
    done = ("<p class=muted>Settled (their code changed since; a later record or a person's check retired them): "
            + ", ".join(f"{_e(m)} ({_e(why)})" for m, why in sorted(settled.items())) + "</p>") if settled else ""
    if not stale:
        return f"<h2>Stale memories</h2><p class=muted>None: every anchored memory matches the code it cites.</p>{done}"
    rows = "".join(f"<tr><td>{_e(m)}</td><td>{'<br>'.join(_e(r) for r in reasons)}</td></tr>" for m, reasons in sorted(stale.items()))
    return f"<h2>Stale memories</h2><table id=stale><tr><th>memory</th><th>what changed</th></tr>{rows}</table>{done}"
