"""Loop specs: lint, list, show, accept; run with a headless agent, follow and abort runs; triggers and git hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from repo_memory.core import acceptances, reviewing, runlock
from repo_memory.errors import InvalidRecordError, NotFoundError, RepoMemoryError, nearest
from repo_memory.formats import loops, when
from repo_memory.git.repo import Git
from repo_memory.guards import markers
from repo_memory.runner import driver, triggers
from repo_memory.runner.engine import TERMINAL, Engine
from repo_memory.guards.terminal import visible
from repo_memory.shells.cli.base import SHA_HELP, emit, json_option, reviewed_sha, say, show_sha, store_of
from repo_memory.guards.shellwords import quoted

T = TypeVar("T")


@click.group(name="loop")
def loop() -> None:
    """Loop specs (.agents/loops/<name>.md): lint, list, show, accept, run, status, abort, due, hooks."""


def _engine(ctx: click.Context) -> Engine:
    return Engine(store_of(ctx))


@loop.command(name="lint")
@click.argument("names", nargs=-1)
@json_option
@click.pass_context
def loop_lint(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """Check loop specs (all, or NAMES) and explain every problem with its line; exit 1 on any."""
    store = store_of(ctx)
    store.refresh()  # specs written since the index last looked: their anchors are checked too
    report: list[dict[str, Any]] = []
    known = store.loop_names()
    checked = list(names) or known
    for name in checked:
        path = f"{loops.LOOPS_DIR}/{name}.md"
        if name not in known:  # else its name's spelling was all it heard of (a spec `loop list` quoted, pasted unquoted)
            similar = nearest(name, known, whole=True)
            report.append({"path": path, "line": None, "problem": f"no loop spec '{name}' ({path} does not exist)" + (
                f"; did you mean {', '.join(quoted(n) for n in similar)}?" if similar else "; `repo-memory loop list` lists them")})
            continue
        try:
            spec = store.loop_spec(name)
            if why := loops.outlasts_stop(spec):  # a warning: `loop run` drives it well
                say(f"{path}:1: warning: {why}; drive it with `repo-memory loop run {quoted(name)}`, or lower its steps' "
                    "timeouts", err=True)
            spec_lines = store.read(f"loop:{name}").content.splitlines()
            for skill in spec.skills:
                if not store.skill_exists(skill):
                    line = next((n for n, ln in enumerate(spec_lines, 1) if skill in ln and "skills" in ln), None)
                    similar = store.similar_names(skill)
                    report.append({"path": path, "line": line, "field": "memory.skills", "problem": f"the bound skill '{skill}' does "
                                   "not exist in .agents/skills" + (f" (did you mean {', '.join(similar[:3])}?)" if similar else "")})
            for gone in (item for item in store.stale([f"loop:{name}"]) if item.gone):  # renamed, deleted or misspelled
                line = next((n for n, ln in enumerate(spec_lines, 1) if gone.anchor in ln), None)
                report.append({"path": path, "line": line, "field": "memory.anchors", "problem": gone.reason})
        except InvalidRecordError as exc:
            report += [{"path": path, "line": p.line, "field": p.field, "problem": p.message} for p in exc.problems]
        except (RepoMemoryError, OSError) as exc:  # missing, a link, unreadable: a problem to report, not a crash
            report.append({"path": path, "line": None, "problem": str(exc)})

    def text() -> None:
        for item in report:
            say(f"{item['path']}:{item['line'] or 1}: {item['problem']}")
        click.echo(f"{len(checked)} spec(s) checked, {len(report)} problem(s).")

    emit(report, as_json, text)
    if report:
        ctx.exit(1)


@loop.command(name="list")
@click.pass_context
def loop_list(ctx: click.Context) -> None:
    """List loop specs: name, status, whether you accepted the current content, trigger."""
    engine = _engine(ctx)
    for name in engine.store.loop_names():
        try:
            spec = engine.spec(name)
        except InvalidRecordError:
            say(f"{name:<28} invalid  (repo-memory loop lint {quoted(name)})")
            continue
        # why its commands may not run: a person has not accepted this content, or the spec is not active
        ready = "runnable" if not engine.runnable(spec) else "not accepted" if spec.status == "active" else "not active"
        say(f"{spec.name:<28} {spec.status:<7} {ready:<13} trigger: {spec.trigger.get('on', 'manual')}")


@loop.command(name="show")
@click.argument("name")
@click.pass_context
def loop_show(ctx: click.Context, name: str) -> None:
    """Print loop spec NAME exactly as stored (a bidi control or tag character escaped: <U+202E>), and on stderr the sha
    `repo-memory loop accept NAME --sha SHA` takes."""
    store = store_of(ctx)
    click.echo(visible(markers.shown(store.read(f"loop:{name}").content)), nl=False)  # a CR drew a hidden step over another
    engine = _engine(ctx)
    spec = engine.spec(name)
    if engine.runnable(spec):  # why it may not run: no accept of this content here (or not active): say how
        show_sha(f"loop:{name}", spec.sha256, f"repo-memory loop accept {quoted(name)}")
    else:
        click.echo(f"loop:{name}: sha {spec.sha256[:12]}, this very version accepted on this clone", err=True)
    reviewing.note_shown(store.config.state_dir, spec.sha256)


@loop.command(name="accept")
@click.argument("name")
@click.option("--sha", help=SHA_HELP)
@click.pass_context
def loop_accept(ctx: click.Context, name: str, sha: str | None) -> None:
    """Accept the content of loop NAME you read, so its verification commands may run on this clone.

    \b
    The accepted spec is committed (a memory commit). Its `run` commands execute in your repository, so read it first:
      repo-memory loop show NAME                # prints it, and its sha on stderr
      repo-memory loop accept NAME --sha SHA    # refused if the spec changed since
    At a terminal, without --sha, it shows the spec and asks. Any later edit needs a new accept.
    """
    engine = _engine(ctx)
    current = engine.spec(name)
    sha = reviewed_sha(f"loop:{name}", sha, current.sha256, lambda: engine.store.read(f"loop:{name}").content + "\n",
                       f"repo-memory loop show {quoted(name)}")
    spec = engine.accept(name, sha)
    click.echo(f"Accepted {spec.path} (sha256 {spec.sha256[:12]}…).")
    # What was accepted is committed too: its runs' receipts cite this sha, and teammates get the spec with the runs.
    done = engine.store.commit_files([spec.path], f"memory(loop): accept {name}")
    if done is not None and done.sha:
        click.echo(f"Committed {spec.path} ({done.sha[:7]}).")
    if spec.status != "active":
        click.echo(f"note: its status is '{spec.status}'; set status: active in {spec.path} for it to run.", err=True)


@loop.command(name="status")
@click.argument("run", required=False)
@json_option
@click.pass_context
def loop_status(ctx: click.Context, run: str | None, as_json: bool) -> None:
    """Live and past runs (or RUN): state, iterations, start time; a live run whose check was cut off says so."""
    engine = _engine(ctx)
    rows = _named(engine, run, lambda engine: engine.status(run))

    def text() -> None:
        if not rows:
            click.echo(f"No loop runs yet. {_first_run(engine)} Runs of other clones show here once their log is committed "
                       "(when the run ends, or the server running it exits) and you pull.")
        for r in rows:
            click.echo(f"{r['run']:<48} {r['state']:<17} {runlock.progress(r)}  started {when.shown(r['started'])}")
        for r in rows:  # one a Ctrl-C'd or killed `loop run` left behind is live too: say how it ends
            if r["state"] not in TERMINAL:
                cut = (f" its check that began at {when.shown(r['cut_off'])} was cut off before it decided (the process "
                       "running it was stopped: a Stop hook killed at its timeout, a session ended, a crash), and its next "
                       "step checks again;" if r.get("cut_off") else "")
                click.echo(f"{r['run']} is live:{cut} an agent continues it with loop_step(run='{r['run']}', …); a person "
                           f"ends it with `repo-memory loop abort {quoted(r['run'])}`.")

    emit(rows, as_json, text)


def _first_run(engine: Engine) -> str:
    """How to start a first run here: a loop this clone accepted runs; any other needs a person's accept first."""
    specs = [spec for name in engine.store.loop_names() if (spec := _spec(engine, name)) is not None]
    ready = next((s.name for s in specs if not engine.runnable(s)), None)
    if ready or not specs:
        return f"Start one: `repo-memory loop run {quoted(ready) if ready else 'NAME'} --agent '<command>'`."
    name = specs[0].name
    return (f"No loop is accepted on this clone, so a run would end unverifiable: read one (`repo-memory loop show {quoted(name)}`), "
            f"then `repo-memory loop accept {quoted(name)} --sha SHA`.")


def _spec(engine: Engine, name: str) -> loops.Loop | None:
    try:
        return engine.spec(name)
    except InvalidRecordError:
        return None


def _named(engine: Engine, run: str | None, call: Callable[[Engine], T]) -> T:
    """`call`, its refusal of a run id that names no run said in commands (the engine's names the MCP tools)."""
    try:
        return call(engine)
    except NotFoundError as exc:
        if run is None or not str(exc).startswith("No loop run"):
            raise
        named = run.removeprefix("loop:") in engine.store.loop_names()
        hint = f": that is a loop's name; `repo-memory loop run {quoted(run)} --agent '<command>'` starts a run of it" if named else ""
        again = f" Did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        raise click.ClickException(f"No loop run '{run[:80]}'{hint}. `repo-memory loop status` lists the runs.{again}") from None


@loop.command(name="abort")
@click.argument("run")
@click.option("--reason", default="stopped by a person", show_default=True)
@click.pass_context
def loop_abort(ctx: click.Context, run: str, reason: str) -> None:
    """Stop a live run; it ends 'aborted' with a receipt."""
    receipt = _named(_engine(ctx), run, lambda engine: engine.abort(run, reason))
    click.echo(f"Aborted {run} ({receipt['id']}).")


@loop.command(name="run")
@click.argument("name")
@click.option("--agent", "agent", required=True, help="Command that runs one round of a headless agent; it gets the instruction "
              "on stdin, in $REPO_MEMORY_INSTRUCTION, and in place of {instruction} (one word, in quotes or not; never "
              "run as shell text). Exit 0 = it thinks it is done.")
@click.option("--agent-timeout", type=float, default=1800, show_default=True, help="Seconds one agent round may take; then the "
              "agent and what it started are stopped, and what it changed so far is verified.")
@click.option("--new", is_flag=True, help="Start a run even though the loop has a live one.")
@click.pass_context
def loop_run(ctx: click.Context, name: str, agent: str, agent_timeout: float, new: bool) -> None:
    """Drive loop NAME with a headless agent round by round until a terminal state.

    Refused while the loop has a live run (saying how to go on, or end it). Ctrl-C (or SIGTERM) stops the agent (killed
    after 5 s, or at a second Ctrl-C) and ends the run aborted, recorded and committed; a third leaves the run live.

    \b
    Examples:
      repo-memory loop run fix-failing-tests --agent 'claude -p'
      repo-memory loop run fix-failing-tests --agent 'codex exec {instruction}'
    """
    final = driver.drive(_engine(ctx), name, agent, agent_timeout, click.echo, new)
    if final not in ("succeeded", "no_op"):
        ctx.exit(1)


@loop.command(name="due")
@click.option("--run", "run_them", is_flag=True, help="Run each due loop: with --agent, drive it; without, one verification pass.")
@click.option("--event", type=click.Choice(triggers.ASKED), help="What asks: a git hook's event (trigger on: git), or "
              "ci-failure from a CI job that failed (trigger on: ci).")
@click.option("--agent", help="Headless agent command for --run (as in `loop run`).")
@click.option("--trust-specs-at", "trust", metavar="COMMIT", help="For a CI checkout, where no person accepts: run the loop "
              "specs whose content is what COMMIT holds as if accepted here. Set by a person in the CI job, never by an agent.")
@click.pass_context
def loop_due(ctx: click.Context, run_them: bool, event: str | None, agent: str | None, trust: str | None) -> None:
    """List loops due now (schedule, changed paths, git event, CI failure) — for cron, CI and git hooks.

    A loop whose trigger fired but whose spec no person accepted on this clone is not due: it is listed as waiting
    (with --run, once per version of the spec) and nothing runs or is committed. A CI checkout is a new clone, where
    no person accepted anything: its job names the commit whose specs it trusts with --trust-specs-at, and a CI
    failure whose loop cannot run exits 1.

    \b
    Example crontab line:  */15 * * * * cd /repo && repo-memory loop due --run --agent 'claude -p'
    Example CI step, run when the job failed:
      repo-memory loop due --run --event ci-failure --trust-specs-at "$GITHUB_SHA" --agent 'claude -p'
    """
    if event in triggers.EVENTS and store_of(ctx, memory=False).sparse.left_out():
        return  # a git hook (hooks folders are shared) where memory is off disk: every commit would say so on stderr
    engine = _engine(ctx)
    commit, engine.trusted = accepted_at_commit(engine, trust) if trust else ("", {})
    fired, left = triggers.asked(engine, event)
    for spec, why in left:
        click.echo(f"{spec.name}: {why}")
    waiting = [(spec, reason) for spec, reason in fired if engine.runnable(spec)]
    for spec, reason in triggers.untold(engine, waiting) if run_them and not trust and event != "ci-failure" else waiting:
        click.echo(_waiting(spec, reason, event, commit, engine.trusted))
    for spec, reason in [(spec, reason) for spec, reason in fired if not engine.runnable(spec)]:
        trusted = f"; its spec as commit {commit[:12]} holds it (--trust-specs-at)" if spec.name in engine.trusted else ""
        click.echo(f"{spec.name}: due ({reason}){trusted}")
        if run_them:
            click.echo(f"  {triggers.run_due(engine, spec, reason, agent, click.echo)}")
            if event == "pre-push":  # git took the tip to send before its hook ran; left pending, another branch took it
                again = spec.name not in [s.name for s, _ in triggers.asked(engine, event)[1]]
                click.echo("  the run's record is committed past the tip this push sends: your next push takes it"
                           + ("" if again else ", and checks the same code no more"))
    if waiting and (trust or event == "ci-failure"):
        ctx.exit(1)  # a CI job asked for a loop that could not run: its log should say so, not pass


def accepted_at_commit(engine: Engine, rev: str) -> tuple[str, dict[str, str]]:
    """The commit `--trust-specs-at` names, and the loop specs as it holds them."""
    return acceptances.trusted_at(Git(engine.store.root, engine.store.config.git_dir), rev, engine.store.loop_names())


def _waiting(spec: loops.Loop, reason: str, event: str | None, commit: str, trusted: dict[str, str]) -> str:
    """What `loop due` says of a fired loop that may not run here, and what lets it run."""
    if commit:
        what = "is not in that commit" if spec.name not in trusted else "changed since that commit"
        return (f"{spec.name}: not run ({reason}): its spec {what}, so --trust-specs-at {commit[:12]} does not cover it; "
                f"a person reviews it (`repo-memory loop show {quoted(spec.name)}`) and the job names a commit that holds it")
    if event == "ci-failure":
        return (f"{spec.name}: not run ({reason}): no person accepted it in this checkout, and a CI checkout (a new clone) "
                "never has such an accept; the CI job names the commit whose loop specs it trusts: `repo-memory loop due "
                "--run --event ci-failure --trust-specs-at COMMIT --agent '<command>'` (docs/memory.md, Loops)")
    return (f"{spec.name}: waiting for a person's accept, not run ({reason}): read it with `repo-memory loop show "
            f"{quoted(spec.name)}`, then `repo-memory loop accept {quoted(spec.name)} --sha SHA`")


@loop.command(name="hooks")
@click.argument("action", type=click.Choice(["install", "remove"]))
@click.pass_context
def loop_hooks(ctx: click.Context, action: str) -> None:
    """Install (or remove) git post-commit and pre-push hooks that run loops with trigger on: git.

    They run only those (a schedule or change loop is cron's), and leave one out, saying so, when its last run succeeded
    over exactly the files HEAD holds (experience records aside). The record of a run a pre-push hook made is committed at
    once, past the tip that push sends (git chose it before the hook ran): the next push takes it.
    An existing hook is never overwritten: it is kept as <hook>.pre-repo-memory and runs first; `remove` puts it back.
    With core.hooksPath at a folder of the repository, the hooks are files git tracks: the command says so.
    """
    store = store_of(ctx, memory=False)  # git hooks, not memory
    git = Git(store.root, store.config.git_dir)
    changes = triggers.install_git_hooks(git) if action == "install" else triggers.remove_git_hooks(git)
    for change in changes or ["no hooks of repo-memory to remove"]:
        click.echo(change)
    folder, root = git.hooks_dir(), store.root.resolve()
    if action == "install" and folder.is_relative_to(root) and not folder.is_relative_to(store.config.common_dir.resolve()):
        click.echo(f"{folder.relative_to(root)}/ is in your work tree (core.hooksPath), so git tracks these hooks: `git status -uall` "
                   "shows them. Commit them to give the trigger to your team (a teammate's hook does nothing until "
                   "repo-memory is installed there), or take them out with `repo-memory loop hooks remove`.")
