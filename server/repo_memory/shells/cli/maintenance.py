"""Looking after memory: search as an agent would, history, staleness, health checks, the index and the report."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import click

from repo_memory import layout
from repo_memory.code.staleness import Stale
from repo_memory.core import doctor as checks, stale_checks
from repo_memory.core.settling import Followed
from repo_memory.formats import when
from repo_memory.guards import markers
from repo_memory.shells.cli import memories
from repo_memory.guards.terminal import visible
from repo_memory.shells.cli.base import emit, json_option, megabytes, progress, say, store_of


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=click.IntRange(1, 50), default=8, show_default=True, help="How many hits.")
@json_option
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Search memory the way an agent's `recall` does (the same hits, the same JSON).

    \b
    Example: repo-memory search how do we cut a release
    """
    if not " ".join(query).strip():  # as recall refuses it: an empty query matched nothing and said only "No matches."
        raise click.UsageError("Give a query: what you are about to do, e.g. `repo-memory search how do we cut a release`.")
    store = store_of(ctx)
    store.refresh()
    result = store.recall(" ".join(query), limit)

    def text() -> None:
        if not result.hits:
            hint = f" Did you mean: {', '.join(result.suggestions)}?" if result.suggestions else ""
            if not hint and not layout.initialised(store.root, store.config.common_dir):
                hint = " repo-memory is not set up here yet: `repo-memory init` sets it up, `repo-memory setup` attaches a harness."
            click.echo(f"No matches.{hint}")
        for hit in result.hits:
            title = hit.title or f"{hit.kind} in session {hit.session} at {when.shown(hit.ts, seconds=False)}"  # a record's: where and when
            title += f", about {when.shown(hit.when, seconds=False)}" if hit.when else ""  # what it tells happened then
            # what an agent's hit says besides its text: uncommitted, stale, found by its neighbours' words or by meaning
            marks = [hit.status or "recorded", *(["uncommitted"] * (not hit.committed)), *(["stale"] * hit.stale),
                     *([f"matched {hit.matched}"] if hit.matched else [])]
            score = f"{hit.score:8.3f}" if hit.score >= 0.0005 or hit.score <= 0 else f"{'<0.001':>8}"  # matched, if barely
            say(f"{score}  {hit.id}  [{', '.join(marks)}]  {title[:90] if hit.title else title}")
            said = " ".join(hit.snippet.replace("**", "").split())
            if said and said != title:
                say(f"          {said[:150]}{'…' if len(said) > 150 else ''}")
            if hit.stale:
                say(f"          stale: {hit.stale_reason[:300]}")
        if result.hits and "by meaning alone" in result.ranking:
            click.echo("(no word of the query is in any memory: these are only the nearest in meaning, and may be unrelated)")

    if not as_json:
        emit(None, as_json, text)
        return
    from repo_memory.shells import tools  # pydantic, for --json only

    emit(tools.structured(result), as_json, text)  # the JSON of recall's answer to an agent


@click.command(name="history")
@click.argument("ref")
@click.option("--since", help="Only commits after this date (e.g. 2026-11-01 or '2 weeks ago').")
@click.option("-n", "--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("--as-of", "as_of", help="Print REF as it stood at this date or commit instead.")
@json_option
@click.pass_context
def history(ctx: click.Context, ref: str, since: str | None, limit: int, as_of: str | None, as_json: bool) -> None:
    """Commits that changed a skill (any file of its folder), loop (loop:NAME) or session, with diffs; or REF as of a date/commit.

    \b
    Examples:
      repo-memory history release-checklist
      repo-memory history release-checklist --as-of 2026-11-01
    """
    store = store_of(ctx, memory=False)  # read from git's commits: the Store refuses what needs memory on disk
    if as_of:
        item = store.read(ref, as_of=as_of)
        if as_json:
            click.echo(json.dumps(dataclasses.asdict(item), indent=2, ensure_ascii=False))
        else:
            records = (json.dumps(r.record, ensure_ascii=False) for r in item.records)
            shown = item.content if not item.records else "\n".join(records)
            click.echo(visible(markers.shown(shown)), nl=not item.content)
        return
    _, found = store.history(ref, since, limit)

    def text() -> None:
        if not found:
            click.echo(f"No commits changed {ref} yet.")
        for change in found:
            click.echo(f"commit {change.sha}\nDate:   {when.shown(change.date)}")
            say(f"Author: {change.author}")  # a commit's author and subject are anyone's to write, as its diff is
            click.echo(f"\n    {visible(change.subject, lines=False)}\n\n{visible(markers.shown(change.diff))}")

    emit([dataclasses.asdict(c) for c in found], as_json, text)


@click.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the search index from the files, and embed whatever has no vector yet (for semantic recall).

    Both live in .git/repo-memory/ and are never committed. Embedding runs at about 25-40 texts a second on two
    cores; a running server does the same in the background, so this is only needed to have it done now.
    """
    embedded: list[int] = []
    bar = progress("embedding", "texts", least=100)

    def embedding(done: int, total: int) -> None:
        embedded[:] = [done]
        bar(done, total)

    report = store_of(ctx).reindex(progress("indexing"), embedding)
    click.echo(f"Rebuilt the index: {report.added} skill and loop files and every experience log; embedded "
               f"{embedded[0] if embedded else 0} texts that had no vector.")


@click.command(name="report")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Where to write the page (default: the git dir).")
@click.pass_context
def report(ctx: click.Context, output: Path | None) -> None:
    """Write a self-contained HTML page of this repository's memory and print its path.

    Skills with status, utility and staleness; drafts awaiting review; loop runs as a timeline with their end
    states; experience recorded per day. No scripts and no network: open it in any browser, attach it anywhere.
    The default location (.git/repo-memory/report.html) keeps it out of your working tree.
    """
    from repo_memory.shells import report as page

    store = store_of(ctx)
    target = output or store.config.state_dir / "report.html"
    if output is None:
        target.parent.mkdir(parents=True, exist_ok=True)
    elif not output.parent.is_dir():
        raise click.ClickException(f"{output.parent} is not a folder: create it first, or give -o a path in an existing folder.")
    elif output.exists() and not output.is_file():
        raise click.ClickException(f"{output} exists and is not a regular file; give -o the path of a new or existing .html file.")
    html = page.build(store)
    try:
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"could not write {target}: {exc.strerror or exc}") from None
    click.echo(str(target))


@click.command(name="stale")
@click.option("--pin", "pins", multiple=True, metavar="NAME|ID",
              help="You checked skill NAME (or loop:NAME, or record ID) against the code: it holds for the code as it is now.")
@click.option("--follow-renames", is_flag=True, help="Re-anchor skills citing files git moved to the new paths (a commit), and "
              "settle records whose code moved unchanged (a note each).")
@json_option
@click.pass_context
def stale(ctx: click.Context, pins: tuple[str, ...], follow_renames: bool, as_json: bool) -> None:
    """List memories whose cited code changed or is gone since they were written (exit code 1 when there are any).

    A memory cites code with anchors like src/config.py::Config.load (a skill's metadata.anchors, a record's refs).
    Formatting and comment edits do not count; a changed body, a rename or a deletion does; each says the commit that
    changed the file, or where git moved it. Anchors into code that cannot be checked (a language not parsed, a file
    over 2 MiB) are listed after, and do not set the exit code. Nor does a record that is settled: a correction cites it
    and its code as it is now, `repo-memory feedback ID outdated` (or misled) was given, or a person pinned it or noted
    on it (`repo-memory log add TEXT -r ID`).

    \b
    Examples:
      repo-memory stale                          # what to re-check
      repo-memory stale --pin release-checklist  # it still holds: accept the new code as its baseline
      repo-memory stale --pin 2026-12-02-a1b2c3#17   # a record still holds: a note of yours settles it
      repo-memory stale --follow-renames         # after a git mv: skills cite the new paths
    """
    store = store_of(ctx)
    store.refresh()  # skills written or pulled since the index last looked: followed and listed too
    if follow_renames:
        _say_followed(store.follow_renames())
    for name in pins:
        cited, note = store.repin(name)  # a record is append-only: a note of yours settles it
        shown = name if name.startswith("loop:") or note else f"skill:{name.removeprefix('skill:')}"
        settles = f" (your note {note} settles it)" if note else ""
        click.echo(f"pinned {', '.join(cited) or 'nothing'} for {shown}{settles}", err=True)
    found, unchecked = store.stale(), store.stale(checkable=False)  # the second: code that cannot be checked, which exit 1 ignores
    waiting, settled = [i for i in found if not i.settled], [i for i in found if i.settled]
    happened = stale_checks.changes(store, waiting)
    followable = stale_checks.followed(store, waiting, happened)  # of the moved: those --follow-renames follows
    listed = [(item, happened.get(item.anchor, "")) for item in [*waiting, *unchecked, *settled]]
    first_unchecked, first_settled = len(waiting), len(waiting) + len(unchecked)
    emit([{"memory": i.memory, "anchor": i.anchor, "reason": i.reason, "checked": not first_unchecked <= n < first_settled,
           "settled": i.settled, "change": change} for n, (i, change) in enumerate(listed)], as_json,
         lambda: _say_stale(listed, len(waiting), len(unchecked), followable if not follow_renames else {},
                            [stale_checks.fix(item, happened, followable) for item in waiting]))
    ctx.exit(1 if waiting else 0)


def _say_stale(shown: list[tuple[Stale, str]], waiting: int, unchecked: int, followable: Mapping[tuple[str, str], bool],
               fixes: list[str]) -> None:
    """The listing of `repo-memory stale`, each stale anchor with doctor's fix (those `--follow-renames` would follow,
    `followable`, with one line for all)."""
    if not waiting:
        or_settled = ", or is settled" if len(shown) > unchecked else ""
        click.echo(f"Nothing stale: every anchored memory matches the code it cites{or_settled}"
                   + (" (of the code that can be checked: not what follows)." if unchecked else "."))
    for n, (item, change) in enumerate(shown[:waiting + unchecked]):
        say(f"{item.memory}  {stale_checks.shown(item, change)}")
        if n < waiting and not followable.get((item.memory, item.anchor)):
            say(f"  fix: {fixes[n]}")
    if settled := {item.memory for item, _ in shown[waiting + unchecked:]}:
        click.echo(f"({len(settled)} stale record(s) settled, not counted: corrected by a later record, reported outdated or "
                   "misled, or pinned by a person; --json says by what)")
    if moved := sum(1 for item, _ in shown[:waiting] if followable.get((item.memory, item.anchor))):
        click.echo(f"({moved} of them cite files git moved: `repo-memory stale --follow-renames` follows them)")


def _say_followed(followed: Followed) -> None:
    for name, moves in followed.skills.items():
        click.echo(f"re-anchored skill:{name}: {', '.join(f'{old} -> {new}' for old, new in moves)}", err=True)
    if followed.records:
        click.echo(f"settled {len(followed.records)} record(s) whose code moved unchanged, each with a note citing it at the new path",
                   err=True)
    for line in followed.left:
        click.echo(f"left to you: {line}", err=True)


@click.command(name="doctor")
@json_option
@click.option("--fix", is_flag=True, help="Re-index what drifted, commit what is pending and move torn lines aside before checking.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, fix: bool) -> None:
    """Check the memory: index against files, invalid or non-UTF-8 files, shadowed skills, set-up.

    Exit code 1 when an error is found; every finding says how to fix it.
    """
    store = store_of(ctx, memory=False)  # it says what the sparse checkout leaves out, first
    unmoved: dict[str, str] = {}
    if fix:
        unmoved = checks.set_aside_torn(store)  # a log HEAD holds: no append or commit of ours would move its torn tail
        if any(o.movable for o in layout.overridden(store.root, store.config.common_dir)):  # init puts the rules last
            for change in layout.set_up(store.config, store.commit_files)[0].changes:
                click.echo(change, err=True)
        store.refresh()
        for path, why in store.heal(store.git_health().at_risk).items():  # said as it leaves the pending list
            click.echo(f"let go of the agent's change of {path} (the file stays as it is): {why}", err=True)
        store.flush("all")
        own, blobs = checks.own_logs(store, store.git_health().uncommitted)  # their note that a commit is due was lost
        if own:  # with the blobs their records cite: a log committed without them would cite what git lacks
            store.commit_files(own + blobs, f"memory(experience): {len(own)} log(s) whose commit was never noted")
    findings = checks.examine(store, memories.homes(), megabytes("Checking the logs", 8 << 20), unmoved)
    from repo_memory.shells import programs, setup as attaching

    from repo_memory.shells import codex

    trusted = codex.trusted_before(store.root, memories.homes().codex)  # then the hooks setup adds need trusting too
    findings += [checks.Finding("warning", rel, "repo-memory's hooks here are an older `setup`'s: " + attaching.costs(lacking),
                                f"Run `repo-memory setup {attaching.harness_of(rel)}` again: it brings them up to date and "
                                "keeps your own hooks." if rel != ".codex/hooks.json" or not trusted else "Run `repo-memory "
                                "setup codex --trust`: it brings them up to date, keeps your own hooks, and trusts the ones it "
                                "adds as you trusted the others (Codex skips a hook no trust covers).")
                 for rel, lacking in attaching.missing_hooks(store.root)]
    findings += [checks.Finding(d.level, d.path, d.message, d.fix)  # an older setup's path, repo-memory reinstalled elsewhere
                 for d in programs.dead(store.root, memories.homes().home, memories.homes().codex)]
    if doubled := attaching.doubled_hooks(store.root, memories.homes().claude):
        findings.append(checks.Finding("warning", doubled[1][0], f"repo-memory's hooks are in {', '.join(doubled[1])} and the "
                                       f"Claude Code plugin {attaching.PLUGIN} ({doubled[0]}) brings its own: every hook runs "
                                       "twice", "Run `repo-memory setup claude-code` again: with the plugin enabled it "
                                       f"takes its own hooks out; or `claude plugin disable {attaching.PLUGIN}` to keep setup's."))
    missing = any(rel == ".codex/hooks.json" for rel, _ in attaching.missing_hooks(store.root))  # its fix trusts them too
    if not (missing and trusted) and (why := codex.untrusted_hooks(store.root, memories.homes().codex)):
        findings.append(checks.Finding("warning", ".codex/hooks.json", why,
                                       "Run `repo-memory setup codex --trust`: it trusts this project and exactly "
                                       "repo-memory's hooks as they are now; or open `codex` here and answer 'Hooks need "
                                       "review' with 'Trust all and continue'."))

    def text() -> None:
        if all(f.level == "info" for f in findings):  # what is under way (embedding, an index brought up to date) is no problem
            click.echo("All good: index matches the files and every skill is valid.")
        for f in findings:  # a folder's or a file's name is the repository's to choose: no line of it fakes one of ours
            say(f"{f.level}: {f.path}: {f.message}")
            say(f"  fix: {f.fix}")

    emit([dataclasses.asdict(f) for f in findings], as_json, text)
    if any(f.level == "error" for f in findings):
        ctx.exit(1)
