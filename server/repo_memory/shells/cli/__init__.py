"""The `repo-memory` command: each command opens the Store, calls one method and prints the result."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from repo_memory import layout
from repo_memory.shells import attach
from repo_memory.core import doctor
from repo_memory.runner import driver
from repo_memory.shells import hooks
from repo_memory.formats import loops
from repo_memory.core import mirror
from repo_memory.code import staleness
from repo_memory.formats import transcript
from repo_memory.runner import triggers
from repo_memory.core import utility
from repo_memory.config import Config
from repo_memory.errors import InvalidRecordError, RepoMemoryError
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store, as_moment


class Group(click.Group):
    """A click group that turns our errors into a one-line message and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RepoMemoryError as exc:
            raise click.ClickException(str(exc)) from exc


def _store(ctx: click.Context) -> Store:
    obj = ctx.find_root().obj
    if "store" not in obj:
        obj["store"] = Store(Config.load(obj["root"]))
        ctx.call_on_close(obj["store"].close)
    store: Store = obj["store"]
    return store


def _emit(data: Any, as_json: bool, text: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        text()


def _progress(label: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        if total >= 500:
            click.echo(f"\r{label}: {done}/{total} files", nl=done == total, err=True)

    return report


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), envvar="REPO_MEMORY_ROOT",
              help="Repository to use (default: $CLAUDE_PROJECT_DIR, else the current directory's repository).")
@click.version_option(package_name="repo-memory")
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Durable memory for coding agents, kept as plain files in your git repository.

    \b
    Skills are markdown procedures in .agents/skills/<name>/SKILL.md. Agents find them through
    the MCP server (`repo-memory serve`); you edit them like any file and review them with git.

    \b
    Start:   repo-memory init            create .agents/ in this repository
             repo-memory skill new NAME  write your first skill
             repo-memory demo            see what an agent sees, in a throwaway repository
    """
    ctx.obj = {"root": root}


@cli.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Run the MCP server over stdio (what Claude Code, Codex and other clients start).

    stdout carries only MCP messages; logs go to stderr.
    """
    from repo_memory.shells import mcp as server  # the MCP SDK takes about a second to import; only serve needs it

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="repo-memory: %(message)s")
    from repo_memory.shells.watch import Watcher

    store = _store(ctx)
    watcher = Watcher(store)
    watcher.start()  # reconciles once, then re-indexes on every save
    watcher.supervise()
    server.build(store, watcher).run("stdio")


@cli.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the .agents/ layout and the union-merge rule in .gitattributes (safe to run again)."""
    store = _store(ctx)
    changes = layout.init(store.root, textconv=[*attach.command()[:-1], "textconv"])
    for change in changes:
        click.echo(change)
    click.echo("Already set up; nothing to change." if not changes else f"repo-memory is set up in {store.root}.")


@cli.command(name="demo")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), help="Build the demo repository here instead of a temporary folder.")
def demo_cmd(keep: Path | None) -> None:
    """Build a throwaway repository with sample skills and drive it through a real MCP client.

    Prints every tool call and result exactly as the agent receives it, then how to attach
    repo-memory to Claude Code and Codex.
    """
    from repo_memory.shells import demo  # imports the MCP SDK

    path = demo.run(click.echo, keep)
    click.echo(f"Demo repository: {path}  (look inside: `git -C {path} log --stat`, `ls {path}/.agents/skills`)\n")
    click.echo(attach.instructions())


@cli.group()
def skill() -> None:
    """Create, list and show skills (.agents/skills/<name>/SKILL.md)."""


@skill.command(name="new")
@click.argument("name")
@click.option("-d", "--description", required=True, help="One sentence: what it does and when to use it.")
@click.option("--body", help="Markdown body (default: read from --body-file, or a starter outline).")
@click.option("--body-file", type=click.File("r", encoding="utf-8"), help="Read the body from this file ('-' for stdin).")
@click.option("-t", "--tag", "tags", multiple=True, help="A tag (repeat for several).")
@click.pass_context
def skill_new(ctx: click.Context, name: str, description: str, body: str | None, body_file: Any, tags: tuple[str, ...]) -> None:
    """Create skill NAME, written by you (so it starts active).

    \b
    Example:
      repo-memory skill new release-checklist -d "How we cut a release" --body-file notes.md
    """
    store = _store(ctx)
    if store.index.skill(name) is not None:
        raise click.ClickException(f"Skill '{name}' exists; edit .agents/skills/{name}/SKILL.md directly.")
    text = body if body is not None else (body_file.read() if body_file else f"# {name}\n\n1. First step\n2. Second step\n")
    result = store.write_skill(name, description, text, tags=list(tags) or None, actor="human")
    click.echo(f"Created {result.path} (status {result.status}).")
    for warning in result.warnings:
        click.echo(f"note: {warning}", err=True)


@skill.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def skill_list(ctx: click.Context, as_json: bool) -> None:
    """List every skill: name, status, where it lives; invalid files are marked."""
    store = _store(ctx)
    store.refresh()
    rows = [{"name": r["name"], "status": r["status"] if r["valid"] else "invalid", "path": r["path"],
             "description": r["description"], "shadowed": bool(r["valid"] and not r["winner"])} for r in store.list_skills()]

    def text() -> None:
        if not rows:
            click.echo("No skills yet. Create one: repo-memory skill new NAME -d 'what it is for'")
        width = max((len(r["name"]) for r in rows), default=0)
        for r in rows:
            flag = " (shadowed)" if r["shadowed"] else ""
            click.echo(f"{r['name']:<{width}}  {r['status']:<10} {r['path']}{flag}")

    _emit(rows, as_json, text)


@skill.command(name="show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def skill_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Print skill NAME exactly as stored (or NAME/FILE for a file beside it)."""
    item = _store(ctx).read(name)
    _emit(item.__dict__, as_json, lambda: click.echo(item.content, nl=False))


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=click.IntRange(1, 50), default=8, show_default=True, help="How many hits.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Search memory the way an agent's `recall` does.

    \b
    Example: repo-memory search how do we cut a release
    """
    store = _store(ctx)
    store.refresh()
    result = store.recall(" ".join(query), limit)

    def text() -> None:
        if not result.hits:
            hint = f" Did you mean: {', '.join(result.suggestions)}?" if result.suggestions else ""
            click.echo(f"No matches.{hint}")
        for hit in result.hits:
            click.echo(f"{hit.score:8.3f}  {hit.id}  [{hit.status}{'' if hit.committed else ', uncommitted'}]  {hit.title[:90]}")

    _emit({"query": result.query, "hits": [h.__dict__ for h in result.hits], "suggestions": result.suggestions}, as_json, text)


@cli.group()
def log() -> None:
    """Write and read experience logs (.agents/experience/<YYYY-MM>/<session>.jsonl)."""


@log.command(name="add")
@click.argument("text")
@click.option("-k", "--kind", default="note", show_default=True, help="note, action, observation, tool, decision, error, outcome…")
@click.option("-s", "--session", help="Session to append to (default: a new session id, printed).")
@click.option("-r", "--ref", "refs", multiple=True, help="An id this record cites (repeat for several).")
@click.pass_context
def log_add(ctx: click.Context, text: str, kind: str, session: str | None, refs: tuple[str, ...]) -> None:
    """Append a record written by you to a session's log and print its id.

    \b
    Example: repo-memory log add "Staging DB is read-only on Fridays" -k decision -s ops-notes
    """
    record = _store(ctx).remember(text, kind, list(refs), session=session, actor="human", tool="cli")[0]
    click.echo(record["id"])


@log.command(name="tail")
@click.argument("session", required=False)
@click.option("-n", "--lines", "count", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many records.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines exactly as stored.")
@click.pass_context
def log_tail(ctx: click.Context, session: str | None, count: int, as_json: bool) -> None:
    """Print the last records of SESSION (default: the most recently active session)."""
    store = _store(ctx)
    store.refresh()
    session = session or next((s[0] for s in store.records.sessions()), None)
    if session is None:
        raise click.ClickException("No experience recorded yet. Add one: repo-memory log add 'what happened'")
    path = store.journal.path(session)
    if path is None:
        raise click.ClickException(f"No session '{session}'. Sessions: {', '.join(s[0] for s in store.records.sessions()[:5])}")
    for line in [ln for ln in store.journal.lines(path) if ln.record][-count:]:
        assert line.record is not None
        click.echo(line.raw.decode("utf-8") if as_json else transcript.one_line(line.record))


@log.command(name="show")
@click.argument("session")
@click.pass_context
def log_show(ctx: click.Context, session: str) -> None:
    """Render SESSION as readable markdown, each record headed by its id (an anchor you can cite)."""
    store = _store(ctx)
    path = store.journal.path(session)
    if path is None:
        store.refresh()
        known = [s[0] for s in store.records.sessions()]
        raise click.ClickException(f"No session '{session}'." + (f" Recent sessions: {', '.join(known[:5])}" if known else ""))
    click.echo(transcript.markdown(session, store.journal.lines(path)), nl=False)


@cli.command()
@click.option("--since", help="Start at this date or time (ISO, UTC), e.g. 2026-11-30.")
@click.option("-n", "--limit", type=click.IntRange(1, 10000), default=200, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def timeline(ctx: click.Context, since: str | None, limit: int, as_json: bool) -> None:
    """Experience across every session in time order: time, id, kind, actor, text."""
    store = _store(ctx)
    store.refresh()
    rows = store.records.timeline(as_moment(since), limit)

    def text() -> None:
        if not rows:
            click.echo("Nothing recorded" + (f" since {since}." if since else " yet."))
        for row in rows:
            first = (row["text"] or "").splitlines()[0] if row["text"] else ""
            click.echo(f"{row['ts'][:19].replace('T', ' ')}  {row['id']:<28} {row['kind']:<10} {row['actor']:<6} {first[:80]}")

    _emit(rows, as_json, text)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Check every experience log's hash chain and every blob; exit 1 listing each break."""
    breaks = _store(ctx).verify_logs()

    def text() -> None:
        for where, what in breaks:
            click.echo(f"{where}: {what}")
        click.echo("All experience logs verify." if not breaks else f"{len(breaks)} problem(s) found.")

    _emit([{"where": w, "problem": p} for w, p in breaks], as_json, text)
    if breaks:
        ctx.exit(1)


@cli.group(name="loop")
def loop_group() -> None:
    """Loop specs (.agents/loops/<name>.md): lint, accept, run, watch and stop runs."""


def _engine(ctx: click.Context) -> Engine:
    return Engine(_store(ctx))


@loop_group.command(name="lint")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def loop_lint(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """Check loop specs (all, or NAMES) and explain every problem with its line; exit 1 on any."""
    store = _store(ctx)
    paths = [store.root / loops.LOOPS_DIR / f"{n}.md" for n in names] or list(loops.files(store.root))
    report: list[dict[str, Any]] = []
    for path in paths:
        rel = path.relative_to(store.root).as_posix()
        if not path.is_file():
            report.append({"path": rel, "line": None, "problem": "no such file"})
            continue
        try:
            loops.parse(path.read_bytes(), rel)
        except InvalidRecordError as exc:
            report += [{"path": rel, "line": p.line, "field": p.field, "problem": p.message} for p in exc.problems]

    def text() -> None:
        for item in report:
            click.echo(f"{item['path']}:{item['line'] or 1}: {item['problem']}")
        click.echo(f"{len(paths)} spec(s) checked, {len(report)} problem(s).")

    _emit(report, as_json, text)
    if report:
        ctx.exit(1)


@loop_group.command(name="list")
@click.pass_context
def loop_list(ctx: click.Context) -> None:
    """List loop specs: name, status, whether you accepted the current content, trigger."""
    engine = _engine(ctx)
    for path in loops.files(engine.store.root):
        try:
            spec = engine.spec(path.stem)
        except InvalidRecordError:
            click.echo(f"{path.stem:<28} invalid  (repo-memory loop lint {path.stem})")
            continue
        ready = "runnable" if not engine.runnable(spec) else "not runnable"
        click.echo(f"{spec.name:<28} {spec.status:<7} {ready:<13} trigger: {spec.trigger.get('on', 'manual')}")


@loop_group.command(name="accept")
@click.argument("name")
@click.pass_context
def loop_accept(ctx: click.Context, name: str) -> None:
    """Accept the current content of loop NAME so its verification commands may run on this clone.

    Read the spec first: its `run` commands execute in your repository. Any later edit needs a new accept.
    """
    spec = _engine(ctx).accept(name)
    click.echo(f"Accepted {spec.path} (sha256 {spec.sha256[:12]}…).")
    if spec.status != "active":
        click.echo(f"note: its status is '{spec.status}'; set status: active in {spec.path} for it to run.", err=True)


@loop_group.command(name="status")
@click.argument("run", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def loop_status_cmd(ctx: click.Context, run: str | None, as_json: bool) -> None:
    """Live and past runs (or RUN): state, iterations, start time."""
    rows = _engine(ctx).status(run)

    def text() -> None:
        if not rows:
            click.echo("No loop runs yet. Start one: repo-memory loop run NAME --agent '<command>'")
        for r in rows:
            click.echo(f"{r['run']:<48} {r['state']:<17} {r['iterations']} iteration(s)  started {r['started']}")

    _emit(rows, as_json, text)


@loop_group.command(name="abort")
@click.argument("run")
@click.option("--reason", default="stopped by a person", show_default=True)
@click.pass_context
def loop_abort(ctx: click.Context, run: str, reason: str) -> None:
    """Stop a live run; it ends 'aborted' with a receipt."""
    receipt = _engine(ctx).abort(run, reason)
    click.echo(f"Aborted {run} ({receipt['id']}).")


@loop_group.command(name="run")
@click.argument("name")
@click.option("--agent", "agent", required=True, help="Command that runs one round of a headless agent; it gets the instruction "
              "on stdin, in $REPO_MEMORY_INSTRUCTION, and in place of {instruction}. Exit 0 = it thinks it is done.")
@click.option("--agent-timeout", type=float, default=1800, show_default=True, help="Seconds one agent round may take.")
@click.pass_context
def loop_run(ctx: click.Context, name: str, agent: str, agent_timeout: float) -> None:
    """Drive loop NAME with a headless agent round by round until a terminal state.

    \b
    Examples:
      repo-memory loop run fix-failing-tests --agent 'claude -p'
      repo-memory loop run fix-failing-tests --agent 'codex exec {instruction}'
    """
    final = driver.drive(_engine(ctx), name, agent, agent_timeout, click.echo)
    if final not in ("succeeded", "no_op"):
        ctx.exit(1)


@loop_group.command(name="due")
@click.option("--run", "run_them", is_flag=True, help="Run each due loop: with --agent, drive it; without, one verification pass.")
@click.option("--event", type=click.Choice(triggers.EVENTS), help="The git event that asks (for trigger on: git).")
@click.option("--agent", help="Headless agent command for --run (as in `loop run`).")
@click.pass_context
def loop_due(ctx: click.Context, run_them: bool, event: str | None, agent: str | None) -> None:
    """List loops due now (schedule, changed paths, git event) — for cron, CI and git hooks.

    \b
    Example crontab line:  */15 * * * * cd /repo && repo-memory loop due --run --agent 'claude -p'
    """
    engine = _engine(ctx)
    for spec, reason in triggers.due(engine, event):
        click.echo(f"{spec.name}: due ({reason})")
        if not run_them:
            continue
        if agent:
            driver.drive(engine, spec.name, agent, 1800, click.echo)
            continue
        started = engine.start(spec.name, actor="human")
        if started["state"] != "running":
            click.echo(f"  {started['state']}: {started['instruction']}")
            continue
        result = engine.step(started["run"], f"verification pass triggered by {reason}", "done", actor="human")
        if result["state"] == "continue":
            engine.abort(started["run"], "verification failed on a trigger and no agent was given to continue")
            click.echo(f"  failed: {result['instruction'].splitlines()[0]} (run {started['run']} aborted; rerun with --agent)")
        else:
            click.echo(f"  {result['state']}")


@loop_group.command(name="hooks")
@click.argument("action", type=click.Choice(["install"]))
@click.pass_context
def loop_hooks(ctx: click.Context, action: str) -> None:
    """Install git post-commit and pre-push hooks that run loops with trigger on: git.

    An existing hook is never overwritten: it is kept as <hook>.pre-repo-memory and runs first.
    """
    for change in triggers.install_git_hooks(_store(ctx).root, attach.command()[:-1]):
        click.echo(change)


@cli.command()
@click.argument("event", type=click.Choice(sorted(hooks.HANDLERS)))
@click.pass_context
def hook(ctx: click.Context, event: str) -> None:
    """Handle a Claude Code / Codex hook EVENT: JSON on stdin, JSON on stdout; errors never block the harness."""
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw) if raw.strip() else {}
    except ValueError:
        payload = {}
    click.echo(json.dumps(hooks.handle(event, payload if isinstance(payload, dict) else {}, ctx.obj["root"])))


@cli.command()
@click.argument("name")
@click.pass_context
def accept(ctx: click.Context, name: str) -> None:
    """Accept the draft skill NAME after reviewing it (sets `status: active`, so briefings and loops use it).

    Review first: `repo-memory skill show NAME` or `git diff`. Loop specs are accepted with `repo-memory loop accept`.
    """
    click.echo(_store(ctx).review(name, accept=True))


@cli.command()
@click.argument("name")
@click.pass_context
def reject(ctx: click.Context, name: str) -> None:
    """Reject the draft skill NAME: its folder is deleted (git history keeps it). Only drafts can be rejected."""
    click.echo(_store(ctx).review(name, accept=False))


@cli.group(name="setup")
def setup_group() -> None:
    """Attach repo-memory to Claude Code or Codex (idempotent; --remove undoes it)."""


@setup_group.command(name="claude-code")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True,
              help="project: .mcp.json in this repository; user: `claude mcp add --scope user`.")
@click.option("--shared", is_flag=True, help="Install the hooks in .claude/settings.json (the whole team) instead of settings.local.json.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Undo: unregister the server and remove only our hooks.")
@click.pass_context
def setup_claude(ctx: click.Context, scope: str, shared: bool, dry_run: bool, remove: bool) -> None:
    """Register the MCP server for Claude Code, install the hooks (session briefing, tool capture, compaction
    summaries, loop driver, commit at session end), and mirror skills into .claude/skills."""
    from repo_memory.shells import setup

    store = _store(ctx)
    for change in setup.claude_code(store.root, scope, shared, dry_run, remove):
        click.echo(change)
    if not remove and not dry_run:
        report = mirror.mirror(store.root, store.config.state_dir)
        click.echo(f"skills mirrored into {mirror.TARGET}: {len(report.written)} written, {len(report.unchanged)} unchanged")
    if not remove:
        click.echo("Check it: claude mcp list   (a project .mcp.json needs one approval in Claude Code)")


@setup_group.command(name="codex")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Undo: remove our server table and our hooks.")
@click.pass_context
def setup_codex(ctx: click.Context, dry_run: bool, remove: bool) -> None:
    """Add the MCP server to ~/.codex/config.toml (with this repository as its workspace) and hooks to .codex/hooks.json.

    Codex reads .agents/skills natively, so no mirror is needed.
    """
    from repo_memory.shells import setup

    store = _store(ctx)
    for change in setup.codex(store.root, Path.home(), dry_run, remove):
        click.echo(change)


@cli.command(name="history")
@click.argument("ref")
@click.option("--since", help="Only commits after this date (e.g. 2026-11-01 or '2 weeks ago').")
@click.option("-n", "--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("--as-of", "as_of", help="Print REF as it stood at this date or commit instead.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def history_cmd(ctx: click.Context, ref: str, since: str | None, limit: int, as_of: str | None, as_json: bool) -> None:
    """Commits that changed a skill, loop (loop:NAME) or session, with diffs; or REF as of a date/commit.

    \b
    Examples:
      repo-memory history release-checklist
      repo-memory history release-checklist --as-of 2026-11-01
    """
    from repo_memory.git import history as past

    store = _store(ctx)
    if as_of:
        item = past.read_at(store, store.committer.git, ref, as_of)
        if as_json:
            click.echo(json.dumps({"commit": item.commit, "path": item.path, "text": item.text, "records": item.records}, indent=2))
        else:
            click.echo(item.text if not item.records else "\n".join(json.dumps(r, ensure_ascii=False) for r in item.records), nl=not item.text)
        return
    found = past.changes(store.committer.git, past.path_of(store, ref), since, limit)

    def text() -> None:
        if not found:
            click.echo(f"No commits changed {ref} yet.")
        for change in found:
            click.echo(f"commit {change.sha}\nDate:   {change.date}\nAuthor: {change.author}\n\n    {change.subject}\n\n{change.diff}")

    _emit([c.__dict__ for c in found], as_json, text)


@cli.command(name="textconv")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def textconv_cmd(path: Path) -> None:
    """Render an experience log for git (the diff driver `init` registers): time, id, kind, actor, text per record."""
    from repo_memory.formats import experience

    click.echo(transcript.textconv(experience.parse_lines(path.read_bytes())), nl=False)


@cli.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the search index from the files (it lives in .git/repo-memory/, never committed)."""
    report = _store(ctx).reindex(_progress("indexing"))
    click.echo(f"Indexed {report.added} files.")


@cli.command()
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Mirror .agents/skills into .claude/skills so Claude Code loads them natively.

    Copies carry a .repo-memory-generated marker; a hand-written skill folder there is never touched.
    """
    store = _store(ctx)
    report = mirror.mirror(store.root, store.config.state_dir)
    for name in report.written:
        click.echo(f"mirrored {name}")
    for name in report.removed:
        click.echo(f"removed stale mirror {name}")
    for name in report.kept_hand_written:
        click.echo(f"kept {mirror.TARGET}/{name}: it was written by hand, not by sync", err=True)
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.removed)} removed.")


@cli.command(name="report")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Where to write the page (default: the git dir).")
@click.pass_context
def report_cmd(ctx: click.Context, output: Path | None) -> None:
    """Write a self-contained HTML page of this repository's memory and print its path.

    Skills with status, utility and staleness; drafts awaiting review; loop runs as a timeline with their end
    states; experience recorded per day. No scripts and no network: open it in any browser, attach it anywhere.
    The default location (.git/repo-memory/report.html) keeps it out of your working tree.
    """
    from repo_memory.shells import report

    store = _store(ctx)
    target = output or store.config.state_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(report.build(store), encoding="utf-8")
    click.echo(str(target))


@cli.command(name="stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool) -> None:
    """Skills by what their uses earned: loop runs that succeeded or failed with them, and agents' feedback.

    utility = (successes + helped + 1) / (all outcomes + 2): 0.50 with no evidence; recall multiplies a
    skill's text score by 0.5 + utility. Skills marked "deprecate?" misled or failed more often than they helped.
    """
    store = _store(ctx)
    store.refresh()
    evidence = utility.gather(store)
    rows = []
    for row in store.list_skills():
        if not row["winner"]:
            continue
        u = evidence.get(row["name"], utility.Utility(row["name"]))
        rows.append({"skill": row["name"], "status": row["status"], "uses": u.uses, "succeeded": u.successes, "failed": u.failures,
                     "helped": u.helped, "misled": u.misled, "outdated": u.outdated, "utility": round(u.score, 2),
                     "last_used": u.last_used[:10], "deprecate": u.deprecate})
    rows.sort(key=lambda r: (-r["utility"], -r["uses"], r["skill"]))

    def text() -> None:
        if not rows:
            click.echo("No skills yet: `repo-memory skill new NAME` or an agent's skill_write adds one.")
            return
        click.echo(f"{'skill':32} {'status':10} {'uses':>5} {'ok':>4} {'fail':>5} {'help':>5} {'mislead':>8} {'old':>4} {'utility':>8}  last used")
        for r in rows:
            flag = "  deprecate?" if r["deprecate"] else ""
            click.echo(f"{r['skill'][:32]:32} {r['status']:10} {r['uses']:>5} {r['succeeded']:>4} {r['failed']:>5} {r['helped']:>5} "
                       f"{r['misled']:>8} {r['outdated']:>4} {r['utility']:>8.2f}  {r['last_used'] or '-'}{flag}")

    _emit(rows, as_json, text)


@cli.command(name="feedback")
@click.argument("ref")
@click.argument("outcome", type=click.Choice(["helped", "misled", "outdated"]))
@click.option("--note", help="What happened, briefly.")
@click.pass_context
def feedback_cmd(ctx: click.Context, ref: str, outcome: str, note: str | None) -> None:
    """Record that a skill (skill:NAME) or a record (SESSION#N) helped, misled or was outdated; it ranks skills.

    \b
    Example:
      repo-memory feedback skill:deploy-staging outdated --note "the script moved to tools/deploy.sh"
    """
    store = _store(ctx)
    record = store.feedback(ref, outcome, note, actor="human", tool="cli")
    click.echo(f"{record['id']}: {record['text']}")


@cli.command(name="stale")
@click.option("--pin", "pins", multiple=True, metavar="NAME",
              help="You checked skill NAME (or loop:NAME) against the code: take the code as it is now as its baseline.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def stale_cmd(ctx: click.Context, pins: tuple[str, ...], as_json: bool) -> None:
    """List memories whose cited code changed or is gone since they were written (exit code 1 when there are any).

    A memory cites code with anchors like src/config.py::Config.load (a skill's metadata.anchors, a record's refs).
    Formatting and comment edits do not count; a changed body, a rename or a deletion does.

    \b
    Examples:
      repo-memory stale                          # what to re-check
      repo-memory stale --pin release-checklist  # it still holds: accept the new code as its baseline
    """
    store = _store(ctx)
    for name in pins:
        if name.startswith("loop:"):
            click.echo(f"pinned {', '.join(staleness.repin_first_seen(store, name)) or 'nothing'} for {name}", err=True)
        else:
            click.echo(f"pinned {', '.join(store.repin(name.removeprefix('skill:')))} for skill:{name.removeprefix('skill:')}", err=True)
    store.refresh()
    found = staleness.stale(store)

    def text() -> None:
        if not found:
            click.echo("Nothing stale: every anchored memory matches the code it cites.")
        for item in found:
            click.echo(f"{item.memory}  {item.reason}")

    _emit([item.__dict__ for item in found], as_json, text)
    ctx.exit(1 if found else 0)


@cli.command(name="doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--fix", is_flag=True, help="Re-index what drifted before checking.")
@click.pass_context
def doctor_cmd(ctx: click.Context, as_json: bool, fix: bool) -> None:
    """Check the memory: index against files, invalid or non-UTF-8 files, shadowed skills, set-up.

    Exit code 1 when an error is found; every finding says how to fix it.
    """
    store = _store(ctx)
    if fix:
        store.refresh()
        store.committer.flush()
    findings = doctor.examine(store)

    def text() -> None:
        if not findings:
            click.echo("All good: index matches the files and every skill is valid.")
        for f in findings:
            click.echo(f"{f.level}: {f.path}: {f.message}\n  fix: {f.fix}")

    _emit([f.__dict__ for f in findings], as_json, text)
    if any(f.level == "error" for f in findings):
        ctx.exit(1)


def main() -> None:
    """Entry point of the console script."""
    cli(prog_name="repo-memory")
