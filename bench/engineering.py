"""Benchmark: recall over an engineering memory — a Python project's git history, remembered and asked as an agent would.

LoCoMo (bench/locomo.py) is chat. A coding agent remembers decisions and fixes that name files, functions, flags,
versions and issue numbers, and asks with a pasted error or a quoted name. This builds such a memory from any clone:

- **records**: one per non-merge commit touching the package, tests, docs or changelog, in an agent's voice ("Fixed: …
  Cause: …", "Decided to … because …", or what was done), with its files, up to six functions it touched, flags,
  `Refs #n` and the release it shipped in; plus one "Error message `…` is raised from …" record per error string the
  commit added. Sessions of 8 commits, each record about its commit's time (`when`). Written as the `remember` tool
  writes them (in process), and 5 skills made of the largest documentation pages (6,000 characters each).
- **questions**, from parts the records do not hold: a commit's changelog line (as a question, and as "When did we …"),
  a six-word slice of an error string, a traceback ending in that error, a touched snake_case, test, CamelCase or
  dotted name, a path, a flag, a `--no-` flag, a release, an issue number, a name with changelog words.

Hit@1 / hit@5 / MRR@10 per class for recall (full-text; `--hybrid` also embeds every text, minutes on two cores)
beside plain FTS5 BM25 over the record texts, in the same run. Needs a clone; nothing is downloaded:

    git clone https://github.com/pallets/click /tmp/click
    python bench/engineering.py --history /tmp/click [--hybrid] [--commits 1800]

docs/benchmarks.md ("An engineering memory") reports click and flask.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import SecretError
from repo_memory.formats import speech

DEF = re.compile(r"^\+\s*(?:async\s+)?def\s+([A-Za-z_]\w*)|^\+\s*class\s+([A-Za-z_]\w*)")
HUNK = re.compile(r"^@@ [^@]+ @@\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
ERR = re.compile(r"""(?:raise\s+\w+|fail|_\()\(\s*f?["']([^"'{}]{18,140})["']""")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]+(?:-[a-z0-9]+)+|--[a-z][a-z0-9]{2,})\b")
ISSUE = re.compile(r"(?:#|[:{](?:issue|pr)[:}]`)(\d{2,4})")
RELEASE = re.compile(r"^(\d+\.\d+(?:\.\d+)?)(?:[~^].*)?$")
CLASSES = ("paraphrase", "when", "error", "traceback", "snake", "test", "camel", "dotted", "path", "flag", "no_flag",
           "version", "issue", "mixed")


def commits(history: Path, package: str, limit: int, paths: list[str] | None = None) -> list[dict]:
    """Facts of each non-merge commit, oldest first: subject, body, files, functions, errors, flags, changelog lines."""
    fmt = "\x1e%H%x1f%aI%x1f%s%x1f%b%x1f"
    paths = paths or [f"src/{package}", package, "tests", "docs", "CHANGES", "CHANGES.md", "CHANGES.rst"]
    out = subprocess.run(["git", "-C", str(history), "log", "--no-merges", "-p", "-U0", "--no-color", f"--format={fmt}", "--", *paths],
                         capture_output=True, text=True, errors="replace", check=True).stdout
    found = []
    for chunk in out.split("\x1e")[1:limit + 1]:
        sha, date, subject, body, diff = chunk.split("\x1f", 4)
        c: dict = {"sha": sha, "date": date, "subject": subject.strip(), "body": body.strip(), "files": [], "funcs": [],
                   "errors": [], "flags": [], "changes": []}
        current = None
        for line in diff.splitlines():
            if line.startswith("diff --git"):
                current = line.split(" b/", 1)[-1]
                c["files"].append(current)
            elif current is None:
                continue
            elif line.startswith("@@"):
                if (m := HUNK.match(line)) and current.endswith(".py"):
                    c["funcs"].append(m.group(1))
            elif line.startswith("+") and not line.startswith("+++"):
                if current.endswith(".py"):
                    if m := DEF.match(line):
                        c["funcs"].append(m.group(1) or m.group(2))
                    c["errors"] += [e.strip() for e in ERR.findall(line)]
                if current.startswith("CHANGES") and line[1:].strip().startswith(("-", "*")) and len(line) > 22:
                    c["changes"].append(line[1:].strip().lstrip("-* ").strip())
                if current.startswith(("docs", "tests", "CHANGES")):
                    c["flags"] += FLAG.findall(line[1:])
        for key in ("files", "funcs", "errors", "flags"):
            c[key] = list(dict.fromkeys(c[key]))
        c["issues"] = list(dict.fromkeys(ISSUE.findall(f"{c['subject']} {c['body']} {' '.join(c['changes'])}")))
        found.append(c)
    found.reverse()
    names = subprocess.run(["git", "-C", str(history), "name-rev", "--tags", "--name-only", "--no-undefined", "--stdin"],
                           input="\n".join(c["sha"] for c in found), capture_output=True, text=True).stdout.split("\n")
    for c, name in zip(found, names):
        c["release"] = m.group(1) if (m := RELEASE.match(name.strip())) else ""
    return found


def clean(text: str, links: bool = True) -> str:
    text = re.sub(r"[:{](?:issue|pr|func|class|meth|attr|option|data|ref|doc|envvar)[:}]`([^`]*)`", r"\1" if links else "", text)
    if not links:
        text = re.sub(r"#\d+", "", text)
    return re.sub(r"\s+", " ", text.replace("`", "")).strip()


def records_of(found: list[dict]) -> list[dict]:
    """The records an agent would have written, each with the commit it came from (its truth key)."""
    out = []
    for i, c in enumerate(found):
        subject, body = clean(c["subject"]), clean(c["body"])[:400]
        files = [f for f in c["files"] if not f.startswith("CHANGES")][:4]
        if re.match(r"(?i)(fix|fixes|fixed|bugfix|correct|repair)\b", subject):
            parts, kind = [f"Fixed: {subject}." + (f" Cause: {body}" if body else "")], "note"
        elif re.match(r"(?i)(drop|deprecate|remove|use|switch|change|make|move|rename|require)\b", subject):
            parts, kind = [f"Decided to {subject[0].lower()}{subject[1:]}" + (f" because {body}" if body else ".")], "decision"
        else:
            parts, kind = [f"{subject}." + (f" {body}" if body else "")], "observation"
        parts += [f"Files: {', '.join(files)}."] if files else []
        parts += [f"Touched {', '.join(f'`{f}`' for f in c['funcs'][:6])}."] if c["funcs"] else []
        parts += [f"Options involved: {', '.join(c['flags'][:3])}."] if c["flags"] else []
        parts += [f"Refs {' '.join('#' + n for n in c['issues'][:3])}."] if c["issues"] else []
        parts += [f"Shipped in {c['release']}."] if c["changes"] and c["release"] else []
        session = f"history-{i // 8:04d}"
        out.append({"key": c["sha"], "text": " ".join(parts), "kind": kind, "session": session, "when": c["date"], "commit": c})
        for error in c["errors"][:2]:
            where = c["funcs"][0] if c["funcs"] else (files[0] if files else "the code")
            out.append({"key": f"{c['sha']}:{error[:20]}", "kind": "observation", "session": session, "when": c["date"], "commit": c,
                        "text": f"Error message `{error}` is raised from `{where}` ({files[0] if files else ''}); it came with: {subject}.",
                        "error": error})
    return out


def questions_of(found: list[dict], records: list[dict], package: str, rng: random.Random) -> list[tuple[str, str, set[str]]]:
    """(class, question, keys of the records that answer it), from what the records do not hold."""
    index: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in records:
        c = r["commit"]
        if "error" in r:
            continue
        for f in c["funcs"][:6]:
            index["func"][f].add(r["key"])
        for f in [f for f in c["files"] if not f.startswith("CHANGES")][:4]:
            index["file"][f].add(r["key"])
        for n in c["issues"][:3]:
            index["issue"][n].add(r["key"])
        for f in c["flags"][:3]:
            index["flag"][f].add(r["key"])
        if c["changes"] and c["release"]:
            index["release"][c["release"]].add(r["key"])

    def rare(kind: str, most: int = 3) -> list[str]:
        names = sorted(k for k, v in index[kind].items() if 1 <= len(v) <= most)
        rng.shuffle(names)
        return names

    asked: list[tuple[str, str, set[str]]] = []
    changed = [c for c in found if c["changes"]]
    rng.shuffle(changed)
    lines = [(c, " ".join(clean(c["changes"][0], links=False).split()[:25]).rstrip(".")) for c in changed]
    lines = [(c, line) for c, line in lines if len(line.split()) >= 5]
    asked += [("paraphrase", f"{line[0].lower()}{line[1:]}?", {c["sha"]}) for c, line in lines[:45]]
    asked += [("when", f"When did we {line[0].lower()}{line[1:]}?", {c["sha"]}) for c, line in lines[45:65]]
    errors = [r for r in records if "error" in r and len(r["error"].split()) >= 5]
    rng.shuffle(errors)
    for r in list({r["error"]: r for r in errors}.values())[:25]:
        words = r["error"].split()
        start = rng.randint(0, max(0, len(words) - 6))
        fragment = " ".join(words[start:start + 6])
        asked.append(("error", f"got error: {fragment}", {x["key"] for x in errors if fragment in x["text"]}))
    frames = "".join(f'  File "/home/dev/app/.venv/lib/python3.12/site-packages/{package}/core.py", line {100 + 37 * k}, in '
                     f"{name}\n    rv = self.{name}(ctx)\n" for k, name in enumerate(("__call__", "main", "invoke", "dispatch")))
    for r in list({r["error"]: r for r in errors if len(r["error"].split()) >= 4}.values())[:10]:
        asked.append(("traceback", f"Traceback (most recent call last):\n{frames}RuntimeError: {r['error']}",
                      {x["key"] for x in errors if r["error"] in x["text"]}))
    funcs = rare("func")
    asked += [("snake", f"what did we change in `{f}`?", index["func"][f]) for f in
              [f for f in funcs if "_" in f.strip("_") and not f.startswith("test_")][:15]]
    asked += [("test", f"why is `{f}` failing, what changed there?", index["func"][f]) for f in [f for f in funcs if f.startswith("test_")][:12]]
    camel = [f for f in funcs if re.fullmatch(r"_?[A-Z][a-z]+[A-Z]\w*", f)]
    asked += [("camel", f"what did we change in `{f}`?", index["func"][f]) for f in camel[:15]]
    for f in camel[15:]:
        keys = index["func"][f]
        files = next(r["commit"]["files"] for r in records if r["key"] in keys)
        if module := next((p.removeprefix("src/")[:-3].replace("/", ".") for p in files if p.endswith(".py") and package in p), ""):
            asked.append(("dotted", f"what changed in `{module}.{f}`?", keys))
        if sum(1 for q in asked if q[0] == "dotted") >= 15:
            break
    asked += [("path", f"what did we change in {p}?", index["file"][p]) for p in [p for p in rare("file") if "/" in p][:15]]
    flags = rare("flag")
    asked += [("flag", f"what do we know about the {f} option?", index["flag"][f]) for f in flags[:15]]
    asked += [("no_flag", f"what do we know about {f}?", index["flag"][f]) for f in rare("flag", 5) if f.startswith("--no-")][:10]
    asked += [("version", f"what did we fix in {v}?", index["release"][v]) for v in rare("release", 8)[:15]]
    asked += [("issue", f"what did we do about issue #{n}?", index["issue"][n]) for n in rare("issue", 2)[:20]]
    for c, line in lines[65:]:
        if f := next((x for x in c["funcs"] if not x.startswith(("test_", "__"))), None):
            asked.append(("mixed", f"{f} {' '.join([w for w in line.split() if len(w) > 3][:5])}", {c["sha"]}))
        if sum(1 for q in asked if q[0] == "mixed") >= 15:
            break
    return [q for q in asked if q[2]]


def write_memory(root: Path, records: list[dict], history: Path, progress: bool = True) -> dict[str, set[str]]:
    """A repository with `records` written through `remember` and the 5 largest documentation pages as skills; the ids
    each truth key got (identical texts count for every key that wrote them)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    layout.init(root)
    (root / ".agents/repo-memory.toml").write_text("semantic = false\n", encoding="utf-8")
    store = Store(Config.load(root))
    by_text: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, set[str]] = defaultdict(set)
    started = time.monotonic()
    for n, r in enumerate(records):
        if r["text"] not in by_text:  # as the remember tool writes it: the time it is about is `when`, not the write time
            data = speech.told(r["text"], None, None, r["when"])
            try:
                by_text[r["text"]] = {store.remember(r["text"], r["kind"], [], data, r["session"], actor="agent", tool="remember")[0]["id"]}
            except SecretError:  # a commit message quoting a credential (a secret rule's own example): refused, as for an agent
                by_text[r["text"]] = set()
        keys[r["key"]] |= by_text[r["text"]]
        if progress and n % 500 == 0:
            print(f"  remembered {n:,} of {len(records):,} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    pages = sorted((p for p in (history / "docs").rglob("*") if p.suffix in (".rst", ".md") and p.is_file()), key=lambda p: -p.stat().st_size)
    for page in pages[:5]:
        name = re.sub(r"[^a-z0-9]+", "-", page.stem.lower()).strip("-")[:40] or "page"
        try:
            store.write_skill(f"doc-{name}", f"The project's documentation page {page.name}.", page.read_text(errors="replace")[:6000],
                              actor="human")
        except Exception as exc:  # a page the secret scanner doubts (an example key) is left out, as it would be
            print(f"  skill from {page.name} left out: {str(exc)[:120]}", file=sys.stderr)
    store.flush("all")
    store.close()
    return keys


def ranks(asked: list[tuple[str, str, set[str]]], answers: list[list[str]], keys: dict[str, set[str]]) -> dict[str, list[int | None]]:
    per: dict[str, list[int | None]] = defaultdict(list)
    for (cls, _, truth), hits in zip(asked, answers):
        wanted = {i for k in truth for i in keys.get(k, ())}
        per[cls].append(next((n + 1 for n, h in enumerate(hits) if h in wanted), None))
    return per


def plain_bm25(records: list[dict], asked: list[tuple[str, str, set[str]]], keys: dict[str, set[str]]) -> list[list[str]]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='unicode61')")
    ids = {}
    for n, text in enumerate(dict.fromkeys(r["text"] for r in records)):
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (n, text))
        ids[n] = next(iter(keys[next(r["key"] for r in records if r["text"] == text)]))
    out = []
    for _, q, _ in asked:
        expr = " OR ".join(f'"{w}"' for w in dict.fromkeys(re.findall(r"\w+", q.lower())))
        out.append([ids[r[0]] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,))])
    return out


def recalled(root: Path, asked: list[tuple[str, str, set[str]]], semantic: bool) -> list[list[str]]:
    os.environ["REPO_MEMORY_SEMANTIC"] = "true" if semantic else "false"
    store = Store(Config.load(root))
    try:
        store.refresh()  # as a server does when it starts
        if semantic:
            store.reindex(embedding=lambda done, total: print(f"\r  embedding {done:,} of {total:,}", end="", file=sys.stderr))
            print(file=sys.stderr)
        return [[h.id for h in store.recall(q, limit=10).hits] for _, q, _ in asked]
    finally:
        store.close()


def table(systems: dict[str, dict[str, list[int | None]]], total: int) -> None:
    def score(found: list[int | None]) -> str:
        n = len(found) or 1
        return (f"{sum(1 for r in found if r == 1) / n:.2f} / {sum(1 for r in found if r and r <= 5) / n:.2f} / "
                f"{sum(1 / r for r in found if r) / n:.2f}")

    print(f"{'class':<11}{'n':>4}  " + "".join(f"{name:<22}" for name in systems))
    for cls in [*CLASSES, "all"]:
        found = {name: [r for c, rs in per.items() for r in rs] if cls == "all" else per.get(cls, []) for name, per in systems.items()}
        count = total if cls == "all" else len(next(iter(found.values())))
        if count:
            print(f"{cls:<11}{count:>4}  " + "".join(f"{score(found[name]):<22}" for name in systems))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history", type=Path, required=True, help="A clone of a Python project (its git history is read).")
    parser.add_argument("--package", help="The package's folder name (default: the clone's folder name).")
    parser.add_argument("--commits", type=int, default=1800, help="Newest non-merge commits read (default 1800).")
    parser.add_argument("--paths", nargs="+", help="Paths whose commits are read (default: src/PACKAGE PACKAGE tests docs CHANGES*).")
    parser.add_argument("--hybrid", action="store_true", help="Also embed every text and recall hybrid (minutes on two cores).")
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    history = args.history.resolve()
    package = args.package or history.name
    found = commits(history, package, args.commits, args.paths)
    records = records_of(found)
    asked = questions_of(found, records, package, random.Random(args.seed))
    if len(asked) < 20:  # a shallow clone, or a history with little to ask about: nothing measured
        print(f"skipped: {len(asked)} questions from {len(found)} commits of {history} (a shallow clone? pass a full one)")
        return
    print(f"{history.name}: {len(found):,} commits -> {len(records):,} records; {len(asked)} questions "
          f"({', '.join(f'{k} {v}' for k, v in Counter(q[0] for q in asked).items())})")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        started = time.monotonic()
        keys = write_memory(root, records, history)
        print(f"written through remember in {time.monotonic() - started:.1f} s")
        kept = [r for r in records if keys.get(r["key"])]  # the texts refused as secrets are in neither system
        answerable = [q for q in asked if any(keys.get(k) for k in q[2])]
        if len(kept) < len(records):
            print(f"{len(records) - len(kept)} records refused as holding a secret; "
                  f"the {len(asked) - len(answerable)} questions only they answer are left out")
        records, asked = kept, answerable
        systems = {"recall, full-text": ranks(asked, recalled(root, asked, False), keys)}
        if args.hybrid:
            systems["recall, hybrid"] = ranks(asked, recalled(root, asked, True), keys)
        systems["plain FTS5 BM25"] = ranks(asked, plain_bm25(records, asked, keys), keys)
    print("\nhit@1 / hit@5 / MRR@10 (skills included in recall's ranking, as an agent gets it)")
    table(systems, len(asked))


if __name__ == "__main__":
    main()
