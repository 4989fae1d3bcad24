"""One moment, one spelling: an agent reads every time as `2026-12-05T23:20:03Z` (answers, records a loop writes, JSON
output), a person as `2026-12-05 23:20:03 UTC` or `2026-12-05 23:20 UTC` (the CLI's text, the briefing, the report)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.runner.engine import Engine
from repo_memory.shells import mcp as server

from tests.conftest import git, records_of, write_skill_file
from tests.runner.conftest import PY

# Anything that looks like a time: a date (not one inside a session id like 2026-12-05-a1b2c3), with whatever time and
# zone follow it; and a number of seconds since 1970 between 2001 and 2096.
TIME = re.compile(r"(?<![\w-])\d{4}-\d\d-\d\d(?=[T ]\d|[^\w-]|$)(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?(?: ?UTC|Z|[+-]\d\d:?\d\d)?")
EPOCH = re.compile(r"(?<![\w.#-])[1-3]\d{9}(?:\.\d+)?(?![\w.])")
FOR_AGENTS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")  # in answers, records' data and --json
FOR_PEOPLE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? UTC")  # in text a person reads
SPEC = (f'---\nname: fixit\nstatus: active\ntrigger: {{on: manual}}\ngoal: Make check.py pass.\nverify:\n'
        f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}\nstop: {{max_iterations: 4}}\n'
        'success_requires_level: 4\nmemory: {skills: [release-steps]}\n---\nRun check.py.\n')


# The one number kept: a loop.start record's `started` (seconds since 1970), which older versions on a teammate's clone
# read as a number from the runs they pull; answers and the CLI show it as a time.
KEPT = re.compile(r'"started": ?[1-3]\d{9}(?:\.\d+)?')


def odd_times(text: str, form: re.Pattern[str]) -> list[str]:
    """The times in `text` not spelled `form` (and any epoch number but KEPT)."""
    return [t for t in TIME.findall(text) if not form.fullmatch(t)] + EPOCH.findall(KEPT.sub("", text))


def agent_times(value: Any, key: str = "") -> list[str]:
    """The times in a JSON value not spelled as an agent reads them; a `diff` is file content, quoted as it is."""
    if isinstance(value, dict):
        return [t for k, v in value.items() if k != "diff" for t in agent_times(v, k)]
    if isinstance(value, list):
        return [t for v in value for t in agent_times(v, key)]
    if isinstance(value, str):
        return odd_times(value, FOR_AGENTS)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1e9 < value < 4e9 and key != "started":
        return [f"{key}={value}"]
    return []


def person_times(text: str) -> list[str]:
    """The times in a command's text output not spelled as a person reads them. A JSON value in it (a record's data,
    quoted) keeps the agent's form."""
    quoted, text = re.compile(r'"[^"\n]*"'), KEPT.sub("", text)
    odd = [t for q in quoted.findall(text) for t in odd_times(q, FOR_AGENTS)]
    return odd + odd_times(quoted.sub('""', text), FOR_PEOPLE)


@pytest.fixture
def lived(repo: Path, store: Store) -> Path:
    """A repository with records of today and of February, a skill a loop run used, and that run, ended."""
    write_skill_file(repo, "release-steps", "How we cut a release.", "1. Tag\n2. Publish")
    (repo / "check.py").write_text("print('ok')\n", encoding="utf-8")
    (repo / ".agents/loops/fixit.md").write_text(SPEC, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release steps")
    store.refresh()
    store.remember("released v2 with the release steps", "decision", session="rel", actor="human", tool="cli")
    store.remember("an old release note", session="old", actor="human", tool="cli", ts="2026-02-01T00:00:02Z")
    engine = Engine(store)
    engine.accept("fixit")
    run = engine.start("fixit")["run"]
    assert engine.step(run, "ran it", "done")["state"] == "succeeded"
    store.flush("all")
    return repo


def cli(repo: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "repo_memory", "--root", str(repo), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), (args, proc.stderr)
    return proc.stdout


def test_every_time_the_cli_prints_is_one_readable_form_with_its_zone_and_json_is_iso(lived: Path):
    """`history` printed `2026-12-05T23:20:03Z`, `loop status` the same, `stats` a bare date, `log show` the stored
    `…T23:20:03.123456Z`, `timeline --json` that too and `stats --json` a bare date: five spellings for a person."""
    run = json.loads(cli(lived, "loop", "status", "--json"))[0]["run"]
    seen: dict[str, str] = {}
    for args in (("log", "tail", "rel"), ("log", "show", run), ("log", "show", "old"), ("timeline",), ("history", "release-steps"),
                 ("stats",), ("loop", "status"), ("search", "release"), ("doctor",), ("verify",)):
        seen[" ".join(args)] = out = cli(lived, *args)
        assert TIME.search(out) or args[0] in ("doctor", "verify"), (args, out)
    textconv = next((lived / ".agents/experience").rglob(f"{run}.jsonl"))
    seen["textconv"] = cli(lived, "textconv", str(textconv))
    report = lived / "report.html"
    cli(lived, "report", "-o", str(report))
    page = report.read_text(encoding="utf-8")
    assert "per day, UTC days" in page  # its bars are days, each labelled with its date
    seen["report"] = re.sub(r"<[^>]+>", " ", re.sub(r"<svg id=activity.*?</svg>", "", page))
    odd = {command: person_times(out) for command, out in seen.items() if person_times(out)}
    assert not odd, odd
    for args in (("timeline", "--json"), ("history", "release-steps", "--json"), ("stats", "--json"), ("loop", "status", "--json"),
                 ("search", "release", "--json")):
        answer = json.loads(cli(lived, *args))
        assert TIME.search(json.dumps(answer)), args
        assert not agent_times(answer), (args, agent_times(answer))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_loop_answers_and_the_records_a_run_writes_spell_each_time_as_every_answer_does(lived: Path, store: Store):
    """loop_status said `2026-12-05T23:23:26Z` while the run's loop.start record held `started: 1796513006.65`."""
    async with Client(server.build(store)) as client:
        started = await client.call_tool("loop_start", {"name": "fixit"})
        run = started.structured_content["run"]
        again = await client.call_tool("loop_start", {"name": "fixit"})  # refused, naming the live run and its start
        stepped = await client.call_tool("loop_step", {"run": run, "report": "ran it", "status": "done"})
        status = await client.call_tool("loop_status", {})
        read = await client.call_tool("read", {"ref": run})
    said = " ".join(getattr(c, "text", "") for c in again.content)
    assert again.is_error and FOR_AGENTS.search(said) and not odd_times(said, FOR_AGENTS), said
    for answer in (started, stepped, status, read):
        assert not answer.is_error and not agent_times(answer.structured_content), answer.structured_content
    assert {r["run"]: FOR_AGENTS.fullmatch(r["started"]) for r in status.structured_content["runs"]}[run]
    start = next(r for r in records_of(store, run) if r["kind"] == "loop.start")
    assert isinstance(start["data"]["started"], float), start["data"]  # a number, as older versions read it


@pytest.mark.anyio
async def test_a_run_whose_start_record_holds_seconds_since_1970_still_reads_steps_and_shows_its_start(lived: Path, store: Store):
    """Logs are append-only: runs started before the start time was written as text keep `started` as a number."""
    run = "fixit-20261101-090000-ab12"
    spec = Engine(store).spec("fixit")
    store.log(run, [experience.Entry("loop.start", text=f"Run {run} of loop fixit started.", source=store.source("agent", "loop_start"),
                                     data={"loop": "fixit", "spec_sha256": spec.sha256, "harness_session": None,
                                           "started": 1793523600.25, "harness_pid": 0, "harness_started": 0})])
    assert Engine(store).state(run).state == "running"
    async with Client(server.build(store)) as client:
        status = (await client.call_tool("loop_status", {"run": run})).structured_content["runs"]
        again = await client.call_tool("loop_start", {"name": "fixit"})
        stepped = await client.call_tool("loop_step", {"run": run, "report": "ran it", "status": "done"})
    assert status[0]["started"] == "2026-11-01T09:00:00Z", status
    assert "started 2026-11-01T09:00:00Z" in " ".join(getattr(c, "text", "") for c in again.content)
    assert stepped.structured_content["state"] == "succeeded", stepped.structured_content
    assert "2026-11-01 09:00:00 UTC" in cli(lived, "loop", "status", run)
