"""When loops are due: cron schedules, changed paths, git events; and the git hooks that ask."""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from repo_memory.formats import cron
from repo_memory.formats import experience, loops
from repo_memory.errors import ConflictError, InvalidRecordError, NotFoundError
from repo_memory.git import snapshot
from repo_memory.git.repo import Git
from repo_memory.guards import disk
from repo_memory.guards.shellwords import quoted
from repo_memory.runner import driver
from repo_memory.runner.engine import Engine
from repo_memory.runner.runstate import RunState

EVENTS = ("post-commit", "pre-push")  # git's, each a hook `loop hooks install` writes
ASKED = (*EVENTS, "ci-failure")  # what `loop due --event` may say: a git hook, or a CI job that failed
MARKER = "# added by repo-memory: run loops whose trigger is this git event"
LOOKBACK = timedelta(hours=24)  # a schedule never run counts as due if it fired in the last day, since it was accepted
VERIFIED = ("succeeded", "no_op")  # the ends whose last check passed: any other leaves the code to check again
TOLD_FILE = "loops-waiting-told.json"  # spec name -> the sha256 `loop due --run` last said waits for a person's accept


def due(engine: Engine, event: str | None = None, now: datetime | None = None) -> list[tuple[loops.Loop, str]]:
    """Active, valid specs a person accepted on this clone that are due now, each with the reason. A spec nobody accepted
    here (a teammate's, just pulled) is not due: its run could verify nothing, and would only commit that it could not."""
    return [(spec, reason) for spec, reason in fired(engine, event, now) if not engine.runnable(spec)]


def untold(engine: Engine, waiting: list[tuple[loops.Loop, str]]) -> list[tuple[loops.Loop, str]]:
    """Of the specs waiting for a person's accept, those `loop due --run` has not yet said so of in this version (cron
    and git hooks ask often: each says it once); notes the rest as told."""
    path = engine.store.config.clone_dir / TOLD_FILE
    try:
        told = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        told = {}
    told = told if isinstance(told, dict) else {}
    new = [(spec, reason) for spec, reason in waiting if told.get(spec.name) != spec.sha256]
    if new:
        told |= {spec.name: spec.sha256 for spec, _ in new}
        disk.write_atomic(path, (json.dumps(told, indent=2, sort_keys=True) + "\n").encode())
    return new


def fired(engine: Engine, event: str | None = None, now: datetime | None = None) -> list[tuple[loops.Loop, str]]:
    """Active, valid specs whose trigger fired, accepted on this clone or not, each with the reason."""
    return asked(engine, event, now)[0]


def asked(engine: Engine, event: str | None = None,
          now: datetime | None = None) -> tuple[list[tuple[loops.Loop, str]], list[tuple[loops.Loop, str]]]:
    """What `fired` returns, and the `on: git` loops whose trigger fired but that a run already verified over the files
    HEAD holds (see `settled`), each with what to say of it."""
    now = (now or datetime.now(UTC)).replace(second=0, microsecond=0)
    engine.store.refresh()  # the runs on disk now: a branch switched since the last look may lack a run's log
    last = _last_runs(engine)
    out, left = [], []
    git = Git(engine.store.root, engine.store.config.git_dir)
    head = functools.cache(lambda: snapshot.of_commit(git, engine.store.config.state_dir, "HEAD", experience.EXPERIENCE_DIR))
    for name in engine.store.loop_names():
        try:
            spec = engine.spec(name)
        except InvalidRecordError:
            continue
        if spec.status != "active":
            continue
        reason = _reason(engine, spec, event, now, last.get(spec.name))
        if reason and on_git(spec) and (run := settled(spec, last.get(spec.name), head)):
            left.append((spec, f"checked at {run.run} ({run.state}), nothing changed since: not run ({reason})"))
        elif reason:
            out.append((spec, reason))
    return out, left


def on_git(spec: loops.Loop) -> bool:
    """Whether git's hooks ask for `spec` (trigger on: git)."""
    return bool(spec.trigger.get("on") == "git")


def settled(spec: loops.Loop, last: RunState | None, head: Callable[[], str]) -> RunState | None:
    """`last`, the newest run of `spec`, when a git hook asks for no run again: it ran the spec as it is now, its last
    check passed, and the files that check was given are those HEAD holds, experience records left out of both. A
    pre-push run commits its record past the tip the push sent: run again at each push, each left the branch one commit
    ahead of the remote, for ever. A run that checked nothing, or failed, or passed over edits not in HEAD (the agent's,
    uncommitted, perhaps since discarded) settles nothing. `head()` is HEAD's tree, experience records left out."""
    if last is None or not last.tree or last.spec_sha != spec.sha256 or last.state not in VERIFIED:
        return None
    return last if head() == last.tree else None


def _reason(engine: Engine, spec: loops.Loop, event: str | None, now: datetime, last: RunState | None) -> str:
    on = spec.trigger.get("on", "manual")
    if on == "git":
        wanted = spec.trigger.get("events") or list(EVENTS)
        return f"git {event}" if event in wanted else ""
    if on == "ci":
        return "CI failed" if event == "ci-failure" else ""
    if event:  # a git hook or a CI job asks for its own loops only: schedules and changed paths are cron's to ask
        return ""
    if on == "schedule":
        schedule = cron.parse(spec.trigger["cron"])
        moment = now
        if last:
            started = datetime.fromtimestamp(last.started, UTC)
        else:  # never run: from the minute a person accepted it here (a slot before that is none they asked for)
            started = datetime.fromtimestamp(engine.accepted_at(spec), UTC).replace(second=0, microsecond=0) - timedelta(microseconds=1)
        floor = max(started if now.tzinfo else started.replace(tzinfo=None), now - LOOKBACK)  # (a naive `now` is UTC)
        while moment > floor:
            if schedule.matches(moment):
                return f"schedule '{spec.trigger['cron']}' fired at {moment:%Y-%m-%d %H:%M} UTC"
            moment -= timedelta(minutes=1)
        return ""
    if on == "change":
        # what changed before a person accepted the loop here is what they accepted it over, not news: also after another
        # clone's run, older than this clone's checkout, whose every file is newer than that run
        since, then = engine.accepted_at(spec), "the loop was accepted"
        if last and last.started > since:  # when it ended: what its agent changed is what its checks saw, not news
            since, then = max(last.started, last.recorded), "the last run"
        for rel in _tracked(engine):
            if any(fnmatch.fnmatch(rel, pattern) for pattern in spec.trigger.get("paths", [])):
                try:
                    if os.stat(engine.store.root / rel).st_mtime > since:
                        return f"{rel} changed since {then}"
                except FileNotFoundError:
                    continue
    return ""


def _last_runs(engine: Engine) -> dict[str, RunState]:
    """Each loop's newest run."""
    out: dict[str, RunState] = {}
    for run in engine.runs():  # newest first
        try:
            state = engine.state(run)
        except NotFoundError:  # its log left the tree since the index listed it (a checkout, a reset)
            continue
        out.setdefault(state.loop, state)
    return out


def _tracked(engine: Engine) -> list[str]:
    return Git(engine.store.root, engine.store.config.git_dir).files()


def install_git_hooks(git: Git, events: tuple[str, ...] = EVENTS) -> list[str]:
    """Add git hooks that run `loop due --run --event E`; an existing hook is kept and called first.

    The hook calls `repo-memory` by name and does nothing where it is not installed, so a hooks folder shared through
    `core.hooksPath` works on every machine."""
    hooks = git.hooks_dir()
    hooks.mkdir(parents=True, exist_ok=True)
    changes = []
    for event in events:
        hook = hooks / event
        if hook.exists() and MARKER in hook.read_text(encoding="utf-8", errors="replace"):
            changes.append(f"{event}: already installed")
            continue
        chained = hooks / f"{event}.pre-repo-memory"
        lines = ["#!/bin/sh", MARKER]
        if hook.exists():
            hook.rename(chained)  # keep the user's hook, byte for byte, and run it first
            lines.append(f'"$(dirname "$0")/{chained.name}" "$@" || exit $?')
            changes.append(f"{event}: installed; your existing hook now runs first from {chained.name}")
        else:
            changes.append(f"{event}: installed")
        lines.append("command -v repo-memory >/dev/null 2>&1 || exit 0  # not installed on this machine")
        lines.append(f"repo-memory loop due --run --event {event} >&2 || true  # never blocks the git operation")
        hook.write_text("\n".join(lines) + "\n", encoding="utf-8")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return changes


def remove_git_hooks(git: Git, events: tuple[str, ...] = EVENTS, dry_run: bool = False) -> list[str]:
    """Take our git hooks out; a hook we had chained is put back where it was. `dry_run` only says so."""
    hooks = git.hooks_dir()
    changes = []
    for event in events:
        hook, chained = hooks / event, hooks / f"{event}.pre-repo-memory"
        if hook.exists() and MARKER in hook.read_text(encoding="utf-8", errors="replace"):
            if not dry_run:
                hook.unlink()
                if chained.exists():
                    chained.rename(hook)
            note = " (dry run, not written)" if dry_run else ""
            if chained.exists() if dry_run else hook.exists():
                changes.append(f"{event}: removed ours; your own hook is back in place{note}")
            else:
                changes.append(f"{event}: removed{note}")
    return changes


def run_due(engine: Engine, spec: loops.Loop, reason: str, agent: str | None, echo: Callable[[str], None]) -> str:
    """Run a due loop: drive it with `agent`, or, without one, one verification pass; returns how it ended. A loop with a
    live run (the last tick's, still going) is not started again."""
    try:  # a live run, or a spec no longer accepted (edited or pulled since `due` looked): refused before any record
        driver.refuse_live(engine, spec.name)
        engine.ready(spec.name)
    except ConflictError as exc:
        return f"not run: {exc}"
    if agent:
        return driver.drive(engine, spec.name, agent, 1800, echo, new=True)
    started = engine.start(spec.name, actor="human")
    result = engine.step(started["run"], f"verification pass triggered by {reason}", "done", actor="human")
    if result.get("awaiting") == "checklist":
        engine.abort(started["run"], "every command passed; the checklist needs an agent to answer it and none was given")
        return (f"not judged: every command passed, but its checklist needs an agent (run {started['run']} aborted); to have "
                f"an agent answer it: {_with_agent(spec.name)}")
    if result["state"] == "continue":
        engine.abort(started["run"], "verification failed on a trigger and no agent was given to continue")
        return (f"failed: {result['instruction'].splitlines()[0]} (run {started['run']} aborted); to have an agent fix it: "
                f"{_with_agent(spec.name)}")
    return str(result["state"])


def _with_agent(name: str) -> str:
    """The command that runs loop `name` again with an agent to work on it."""
    return f"`repo-memory loop run {quoted(name)} --agent '<command>'` (e.g. --agent 'claude -p')"
