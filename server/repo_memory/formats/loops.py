"""Loop specifications: `.agents/loops/<name>.md`, YAML frontmatter (schemas/loop.schema.json) plus notes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repo_memory.formats import cron
from repo_memory.formats import frontmatter
from repo_memory.formats.skills import Found
from repo_memory.errors import CronError, InvalidRecordError, Problem
from repo_memory.formats.schema import validate
from repo_memory.guards import terminal

LOOPS_DIR = ".agents/loops"
DEFAULT_TIMEOUT = 300.0
# Seconds setup gives the Stop hook, which runs a session's checks itself; a harness kills a hook past its timeout, so
# the checks get STOP_BUDGET of them (the rest starts the hook and records the verdict), and a ladder that may take
# longer is flagged by `loop lint`.
STOP_TIMEOUT = 1800
STOP_BUDGET = STOP_TIMEOUT - 60


@dataclass(frozen=True)
class Step:
    """One rung of the verification ladder."""

    index: int
    level: int
    name: str
    run: str | None = None
    checklist: tuple[str, ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Loop:
    """A parsed, valid loop specification."""

    name: str
    path: str
    sha256: str
    goal: str
    notes: str
    steps: tuple[Step, ...]
    max_iterations: int
    max_minutes: float | None
    no_progress_after: int | None
    success_requires_level: int
    status: str
    trigger: dict[str, Any]
    skills: tuple[str, ...]
    recall: str | None
    description: str = ""
    anchors: tuple[str, ...] = ()


def parse(data: bytes, path: str) -> Loop:
    """Parse and check a spec file, raising InvalidRecordError with every problem located by line."""
    name = Path(path).stem
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRecordError(path, [Problem(f"the file is not UTF-8 (byte {exc.start})")]) from None
    if found := terminal.hidden(text):
        raise InvalidRecordError(path, _hidden(found, name))
    doc = frontmatter.split(text, path)
    meta = frontmatter.load(doc.frontmatter, path)
    problems = [Problem(p.message, p.field, _line(doc.frontmatter, p.field)) for p in validate("loop", meta)]
    problems += _semantics(meta, name, doc.frontmatter)
    if problems:
        raise InvalidRecordError(path, sorted(problems, key=lambda p: p.line or 0))
    steps = tuple(
        Step(index=i, level=s["level"], name=s.get("name") or s.get("run") or ("checklist" if s.get("checklist") else "self-report"),
             run=s.get("run"), checklist=tuple(s.get("checklist", ())), expect=dict(s.get("expect", {})),
             timeout=float(s.get("timeout", DEFAULT_TIMEOUT)))
        for i, s in sorted(enumerate(meta["verify"]), key=lambda pair: pair[1]["level"])  # cheapest first
    )
    stop = meta.get("stop", {})
    memory = meta.get("memory", {})
    return Loop(
        name=name, path=path, sha256=hashlib.sha256(data).hexdigest(), goal=meta["goal"], notes=doc.body.strip(), steps=steps,
        max_iterations=stop.get("max_iterations", 4), max_minutes=stop.get("max_minutes"), no_progress_after=stop.get("no_progress_after"),
        success_requires_level=meta["success_requires_level"], status=meta.get("status", "draft"),
        trigger=dict(meta.get("trigger", {"on": "manual"})), skills=tuple(memory.get("skills", ())), recall=memory.get("recall"),
        description=meta.get("description", ""), anchors=tuple(memory.get("anchors", ())),
    )


def _hidden(found: list[tuple[int, str]], name: str) -> list[Problem]:
    """The lines of a spec holding characters a terminal acts on instead of drawing: what a person reads of it is not
    what runs (a carriage return draws a step over the one YAML reads before it), so no person could accept it."""
    lines: dict[int, list[str]] = {}
    for line, what in found:
        lines.setdefault(line, []).append(what)
    return [Problem(f"it holds {', '.join(dict.fromkeys(said))}, which a terminal does not draw as it is: what "
                    f"a person reads of the spec is not what runs. `repo-memory loop show {name}` shows each such "
                    "character escaped; delete them (a spec holds no control character but tabs and line ends)", line=line)
            for line, said in list(lines.items())[:5]]


def outlasts_stop(loop: Loop) -> str:
    """Why `loop`'s checks may outlast the time the Stop hook has for them (its commands' timeouts added up), or ''."""
    took = sum(step.timeout for step in loop.steps if step.run)
    return (f"its checks may take {took:g} s, more than the {STOP_BUDGET} s the Stop hook has for them: at an agent's "
            "stop, a check still running then is killed and the run ends unverifiable") if took > STOP_BUDGET else ""


def _semantics(meta: dict[str, Any], name: str, fm: str) -> list[Problem]:
    """What the schema cannot say: names, cron, regexes, and a ladder that can reach its success level."""
    out = []
    if isinstance(meta.get("name"), str) and meta["name"] != name:
        out.append(Problem(f"name '{meta['name']}' must equal the file name '{name}'", "name", _line(fm, "name")))
    trigger = _dict(meta.get("trigger"))
    if trigger.get("on") == "schedule":
        if not isinstance(trigger.get("cron"), str):
            out.append(Problem("a schedule trigger needs cron: '<minute> <hour> <day> <month> <weekday>'", "trigger.cron", _line(fm, "trigger")))
        else:
            try:
                cron.parse(trigger["cron"])
            except CronError as exc:
                out.append(Problem(f"bad cron: {exc}", "trigger.cron", _line(fm, "trigger.cron")))
    if trigger.get("on") == "change" and not trigger.get("paths"):
        out.append(Problem("a change trigger needs paths: [globs]", "trigger.paths", _line(fm, "trigger")))
    steps = _list(meta.get("verify"))
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("level"), int):
            continue
        where = f"verify.{i}"
        if step["level"] >= 3 and not step.get("run"):
            out.append(Problem(f"a level {step['level']} step needs run: a command", where, _line(fm, where)))
        if step["level"] == 2 and not step.get("checklist"):
            out.append(Problem("a level 2 step needs checklist: [items the agent answers]", where, _line(fm, where)))
        if step["level"] <= 2 and step.get("run"):
            out.append(Problem(f"a level {step['level']} step is answered by the agent; commands belong at level 3-5", where, _line(fm, where)))
        expect = _dict(step.get("expect"))
        for key in ("regex",):
            if isinstance(expect.get(key), str):
                out += _regex_problem(expect[key], f"{where}.expect.{key}", fm)
        threshold = _dict(expect.get("threshold"))
        if isinstance(threshold.get("pattern"), str):
            out += _regex_problem(threshold["pattern"], f"{where}.expect.threshold.pattern", fm)
            if "min" not in threshold and "max" not in threshold:
                out.append(Problem("a threshold needs min or max", f"{where}.expect.threshold", _line(fm, f"{where}.expect.threshold")))
    levels = [s["level"] for s in steps if isinstance(s, dict) and isinstance(s.get("level"), int)]
    wanted = meta.get("success_requires_level")
    # Every step up to the success level must pass, so the highest of them is what success rests on: the agent's own
    # answers (levels 1-2) below a level the spec asks of commands would let self-report alone succeed.
    reach = max((level for level in levels if isinstance(wanted, int) and level <= wanted), default=None)
    if isinstance(wanted, int) and levels and reach != wanted:
        highest = (f"no verify step is at or below it (the lowest is level {min(levels)})" if reach is None
                   else f"the highest verify step is level {reach}" if reach == max(levels)
                   else f"the highest verify step at or below it is level {reach}")
        out.append(Problem(f"success needs level {wanted} but {highest}: add a step at level {wanted} or lower "
                           f"success_requires_level", "success_requires_level", _line(fm, "success_requires_level")))
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _regex_problem(pattern: str, where: str, fm: str) -> list[Problem]:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return [Problem(f"bad regex {pattern!r}: {exc}", where, _line(fm, where))]
    if where.endswith("threshold.pattern") and compiled.groups < 1:
        return [Problem(f"the threshold pattern {pattern!r} needs a (group) around the number", where, _line(fm, where))]
    return []


def _line(fm: str, dotted: str | None) -> int | None:
    """The file line (the opening fence is line 1) of the value at a dotted path like 'verify.1.level'."""
    if not dotted:
        return None
    from ruamel.yaml import YAML  # only when explaining a problem
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

    try:
        node: Node | None = YAML().compose(fm)
    except YAMLError:
        return None
    line = None
    for part in dotted.split("."):
        if isinstance(node, MappingNode):
            match = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            line, node = match[0].start_mark.line, match[1]
        elif isinstance(node, SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line
        else:
            break
    return None if line is None else line + 2


def scan(root: Path) -> Iterator[Found]:
    """Every loop spec as a document to index; a link is refused (a clone may carry one that leads anywhere)."""
    base = root / LOOPS_DIR
    if not base.is_dir() or base.is_symlink():
        return
    for path in sorted(base.glob("*.md")):
        rel = f"{LOOPS_DIR}/{path.name}"
        if path.name == "README.md":
            continue
        if path.is_symlink():
            yield Found(str(path), rel, LOOPS_DIR, 0, refused="the loop spec is a symbolic link; repo-memory does not read through links",
                        kind="loop")
        elif path.is_file():
            yield Found(str(path), rel, LOOPS_DIR, 0, kind="loop")


def files(root: Path) -> Iterator[Path]:
    """Every loop spec file in the repository."""
    base = root / LOOPS_DIR
    if base.is_dir():
        yield from sorted(p for p in base.glob("*.md") if p.is_file() and not p.is_symlink() and p.name != "README.md")
