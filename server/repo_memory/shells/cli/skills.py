"""Skills: create, list, show; a person's review (accept, reject); feedback and what skills earned; the .claude mirror."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from repo_memory.config import SKILLS_DIR
from repo_memory.core import following, mirror, mirror_checks, offering, stale_checks
from repo_memory.core.reading import flagged
from repo_memory.core.unreviewed import Unreviewed
from repo_memory.core.utility import Utility
from repo_memory.formats import when
from repo_memory.guards import markers
from repo_memory.guards.terminal import visible
from repo_memory.shells.cli.base import SHA_HELP, emit, init_note, json_option, reviewed_sha, say, show_sha, store_of
from repo_memory.guards.shellwords import quoted

if TYPE_CHECKING:
    from repo_memory.core.store import Store


@click.group()
def skill() -> None:
    """Create, list and show skills (.agents/skills/<name>/SKILL.md).

    \b
    An agent's skill is a draft until you review it; accept and reject are top-level commands:
      repo-memory skill show NAME          # prints the sha of what you read
      repo-memory accept NAME --sha SHA
      repo-memory reject NAME
    """


@skill.command(name="new")
@click.argument("name")
@click.option("-d", "--description", required=True, help="One sentence: what it does and when to use it.")
@click.option("--body", help="Markdown body (default: read from --body-file, or a starter outline kept as a draft).")
@click.option("--body-file", type=click.File("rb"), help="Read the body from this file, in UTF-8 ('-' for stdin).")
@click.option("-t", "--tag", "tags", multiple=True, help="A tag (repeat for several).")
@click.pass_context
def skill_new(ctx: click.Context, name: str, description: str, body: str | None, body_file: Any, tags: tuple[str, ...]) -> None:
    """Create skill NAME, written by you (so it starts active).

    Without --body or --body-file it holds a starter outline and starts as a draft, out of the session briefing until
    you write its steps and accept it (`repo-memory skill show NAME` prints the line).

    \b
    Example:
      repo-memory skill new release-checklist -d "How we cut a release" --body-file notes.md
    """
    store = store_of(ctx)
    store.refresh()  # the index as the files are now: a folder removed by hand is not a skill that exists
    found = next((r for r in store.skills() if r["name"] == name), None)
    if found is not None:
        raise click.ClickException(f"Skill '{name}' exists; edit {found['path']} directly.")
    outline = body is None and body_file is None  # an outline no one wrote is no procedure to brief an agent with
    text = body if body is not None else (_body_of(body_file) if body_file else f"# {name}\n\n1. First step\n2. Second step\n")
    result = store.write_skill(name, description, text, tags=list(tags) or None, actor="human", draft=outline)
    click.echo(f"Created {result.path} (status {result.status}).")
    init_note(store, drivers=False)
    if outline:
        click.echo(f"It holds a starter outline: write its steps in {result.path}, then `repo-memory skill show {name}` "
                   "prints the line that makes it active.")
    if mirror.in_use(store.root, store.config.state_dir) and name in mirror.of(store).written:  # Claude Code loads the copies
        click.echo(f"copied to {mirror.TARGET}/{name} (Claude Code loads it from there)")
    for warning in result.warnings:
        if not (outline and warning.startswith("Saved as a draft")):  # said above, for the version to come
            click.echo(f"note: {warning}", err=True)


def _body_of(file: Any) -> str:
    data = file.read()
    try:
        return str(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{file.name} is not UTF-8 (byte {exc.start}); re-save it as UTF-8 and run the command "
                                   "again. Nothing was written.") from None


@skill.command(name="list")
@json_option
@click.pass_context
def skill_list(ctx: click.Context, as_json: bool) -> None:
    """List every skill: name, status, where it lives; invalid files are marked."""
    store = store_of(ctx)
    store.refresh()
    rows = [{"name": r["name"], "status": r["status"] if r["valid"] else "invalid", "path": r["path"],
             "description": r["description"], "shadowed": bool(r["valid"] and not r["winner"]),
             "quarantined": json.loads(r["flags"] or "[]"), "notes": json.loads(r["notes"] or "[]")}
            for r in store.skills()]

    def text() -> None:
        if not rows:
            click.echo("No skills yet. Create one: repo-memory skill new NAME -d 'what it is for'")
        names = [visible(r["name"], lines=False) for r in rows]  # a folder's name: its newline fakes no line
        width = max(map(len, names), default=0)
        for name, r in zip(names, rows):
            flag = " (shadowed)" if r["shadowed"] else ""
            status = "quarantined" if r["quarantined"] and r["status"] != "invalid" else r["status"]  # served by nothing
            say(f"{name:<{width}}  {status:<11} {r['path']}{flag}")
            for note in r["notes"]:
                say(f"{'':<{width}}  note: {note}")
        if any(r["quarantined"] for r in rows):
            click.echo("(quarantined: left out of recall and briefings; `repo-memory doctor` says what each holds)")

    emit(rows, as_json, text)


@skill.command(name="show")
@click.argument("name")
@json_option
@click.pass_context
def skill_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Print skill NAME exactly as stored (or NAME/FILE for a file beside it), and on stderr the sha that names this
    version of the skill's folder: `repo-memory accept NAME --sha SHA` accepts exactly what you read. A bidi control or
    tag character, which would reorder or hide text, is printed escaped (<U+202E>)."""
    store = store_of(ctx)
    item = flagged(store.read(name if name.startswith("skill:") else f"skill:{name}"), stale_checks.told(store))
    sha = store.fingerprint(item.name)
    whole = item.id == f"skill:{item.name}"  # not NAME/FILE, a file beside it
    changes = store.unreviewed(item.name) if item.status == "draft" and whole else None

    def text() -> None:
        click.echo(visible(markers.shown(item.content)), nl=False)  # a CR drew a line of the draft over another
        if beside := [f for f in item.files if f != "SKILL.md"]:
            click.echo(err=True)
            say(f"(files beside it, part of the reviewed version: {', '.join(beside)})", err=True)
        if changes is not None:
            click.echo(visible(unreviewed_text(changes)), err=True, nl=False)
        if item.status == "draft":
            show_sha(f"skill:{item.name}", sha, f"repo-memory accept {quoted(item.name)}")
        else:  # nothing to accept: an active or deprecated skill
            click.echo(f"skill:{item.name}: sha {sha[:12]} ({item.status})", err=True)
        if item.stale:  # on stderr too, beside the sha: stdout stays the skill as stored
            say(f"stale: {item.stale_reason}", err=True)  # it names the anchor the skill's metadata gives
            click.echo(f"(if it still holds for the code as it is now: `repo-memory stale --pin {item.name}`; else update "
                       "the skill)", err=True)

    said = {"unreviewed": dataclasses.asdict(changes)} if changes is not None else {}
    emit({**dataclasses.asdict(item), "review_sha": sha, **said}, as_json, text)


def unreviewed_text(found: Unreviewed) -> str:
    """What a draft changes, for the person about to accept it: each file that differs from the accepted version."""
    if not found.accepted:
        head = "(never accepted: every file of it is new; beside SKILL.md:)" if found.changes else ""
    elif found.changes:
        head = f"(changed since the version accepted in commit {found.accepted[:7]}; accepting takes every change below:)"
    else:
        head = f"(nothing changed since the version accepted in commit {found.accepted[:7]} but SKILL.md's status)"
    said = [f"\n{head}\n"] if head else []
    for change in found.changes:  # its diff is escaped line by line (core/unreviewed.py); a name has no lines
        said.append(f"{change.change} {visible(change.path, lines=False)}\n{change.diff}")
    return markers.shown("".join(said))


@click.command()
@click.argument("name")
@click.option("--sha", help=SHA_HELP)
@click.pass_context
def accept(ctx: click.Context, name: str, sha: str | None) -> None:
    """Accept the draft skill NAME after reviewing it (sets `status: active`, so briefings and loops use it).

    \b
    Review first, then accept the version you read:
      repo-memory skill show NAME          # prints it, and its sha on stderr
      repo-memory accept NAME --sha SHA    # refused if the skill changed since
    At a terminal, without --sha, it shows the skill and asks. Loop specs: `repo-memory loop accept`.
    """
    store = store_of(ctx)
    if sha is None and store.read(f"skill:{name}").status == "active":
        click.echo(store.review(name, accept=True))  # nothing to review, so no version to name; the harnesses' lists follow
        for source in [s for s in store.sources[1:] if offering.withheld(store.root, s, name).startswith("draft")]:
            click.echo(f"{source}/{name} is a draft of the same name, which this one shadows (so accept cannot name it): review "
                       f"it (`git diff -- {quoted(f'{source}/{name}')}`), set `status: active` under its metadata by hand, then "
                       "`repo-memory sync` lets its harness list it again")
        return

    def show() -> str:
        return f"{store.read(f'skill:{name}').content}\n{unreviewed_text(store.unreviewed(name))}"

    sha = reviewed_sha(f"skill:{name}", sha, store.fingerprint(name), show, f"repo-memory skill show {quoted(name)}")
    click.echo(store.review(name, accept=True, sha=sha))
    copy_again(store, name)


def copy_again(store: Store, name: str) -> None:
    """Claude Code loads the copies: a skill it may see again (accepted, or back to the version accepted) goes there now."""
    if mirror.in_use(store.root, store.config.state_dir):
        report = mirror.of(store)
        if name in report.written:
            click.echo(f"copied to {mirror.TARGET}/{name} (Claude Code loads it from there)")


@click.command()
@click.argument("name")
@click.pass_context
def reject(ctx: click.Context, name: str) -> None:
    """Reject the draft skill NAME: the agent's change is undone.

    A skill that was accepted before goes back to its last accepted version, the files beside SKILL.md too (a file
    whose changes no commit holds, or that you committed, is kept and named); one never accepted is deleted (git
    history keeps it), unless a file beside it is in no commit (__pycache__ bytecode goes with it). Only drafts can
    be rejected, and not while SKILL.md has edits of yours that are not committed."""
    store = store_of(ctx)
    click.echo(store.review(name, accept=False))
    copy_again(store, name)


@click.command()
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Mirror .agents/skills into .claude/skills so Claude Code loads them natively.

    Only what recall serves is copied: active, valid skills (a draft is copied once accepted). Copies carry a
    .repo-memory-generated marker; a hand-written skill folder there is never touched, nor a copy whose files a person
    edited (git ignores the copies: nothing would bring the edit back). Delete such a copy to have it written again.
    """
    store = store_of(ctx)
    settled = settle_offers(store)  # first: what is copied is the skill as Codex's list then wants it
    report = mirror.of(store)
    for name in report.written:
        say(f"mirrored {name}")
    for name in report.removed:
        say(f"removed stale mirror {name}")
    for name in report.kept_hand_written:
        say(f"kept {mirror.TARGET}/{name}: it was written by hand, not by sync", err=True)
    for name in report.kept_edited:
        say(f"kept {mirror.TARGET}/{name}: its files differ from what sync wrote (a hand edit, which git does not keep): move "
            f"the edit into {SKILLS_DIR}/{name}, or delete the copy to drop it, then sync again", err=True)
    for name, why in report.withheld.items():
        say(f"not copied {name}: {why}")
    if note := mirror.beyond_note(report, store.config.mirror_limit):
        click.echo(note)
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.removed)} removed.")
    if report.written and (note := mirror_checks.tracked_note(store.root, store.config.git_dir)):
        click.echo(note)  # what it just wrote shows as modified
    for line in settled:
        click.echo(line)


def settle_offers(store: Store) -> list[str]:
    """Keep every skill recall does not serve out of the lists Codex and Claude Code offer their models by themselves,
    and put back those it serves again (core/offering.py); what is in .agents/skills is committed. Says what changed."""
    folders = [f"{SKILLS_DIR}/{folder.name}" for folder in offering.folders(store.root, SKILLS_DIR)]
    clean, theirs = following.held(store.root, store.config.git_dir, folders)  # as they were before we wrote anything
    changed = offering.settle_all(store.root, store.config.state_dir, store.sources)
    said, ours = [], []
    for source in store.sources:
        harness = "Claude Code" if source == offering.CLAUDE else "Codex"
        for name in dict.fromkeys(p[len(source) + 1:].split("/", 1)[0] for p in changed if p.startswith(f"{source}/")):
            why, folder = offering.withheld(store.root, source, name), f"{source}/{name}"
            # what a person's edit in progress decided (SKILL.md), or is in (agents/), is committed with it, by them
            held = source == SKILLS_DIR and folder in clean and folder not in theirs
            ours += [p for p in changed if p.startswith(f"{folder}/")] if held else []
            said.append(f"{'kept out of' if why else 'back in'} the skills {harness} lists by itself: {folder}"
                        + (f" ({why})" if why else "") + ("" if held else " — yours to commit" if source != SKILLS_DIR
                                                          else " — not committed: commit it with your change to its SKILL.md"
                                                          if folder not in theirs else " — not committed: commit it with your edit of it"))
    if ours:
        store.commit_files(ours, following.MESSAGE)
    return said


@click.command(name="feedback")
@click.argument("ref")
@click.argument("outcome", type=click.Choice(["helped", "misled", "outdated"]))
@click.option("--note", help="What happened, briefly.")
@click.pass_context
def feedback(ctx: click.Context, ref: str, outcome: str, note: str | None) -> None:
    """Record that a skill (skill:NAME) or a record (SESSION#N) helped, misled or was outdated; it ranks skills.

    \b
    Example:
      repo-memory feedback skill:deploy-staging outdated --note "the script moved to tools/deploy.sh"
    """
    record = (store := store_of(ctx)).feedback(ref, outcome, note, actor="human", tool="feedback")
    say(f"{record['id']}: {record['text']}")
    init_note(store, drivers=False)


@click.command(name="stats")
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Skills by what their uses earned: loop runs that succeeded or failed with them, and agents' feedback.

    utility = 0.5 + (successes + helped + 1) / (all outcomes + 2): 1.00 with no evidence, 0.5 to 1.5; recall
    multiplies a skill's text score by it. Skills marked "deprecate?" misled, failed or were outdated at least 3 times,
    more often than they helped, in more than one session (or one reported by a person): set `status: deprecated` if so.
    """
    store = store_of(ctx)
    store.refresh()
    evidence = store.evidence()
    rows = []
    for row in store.skills():
        if not row["winner"]:
            continue
        u = evidence.get(row["name"], Utility(row["name"]))
        rows.append({"skill": row["name"], "status": row["status"], "uses": u.uses, "succeeded": u.successes, "failed": u.failures,
                     "helped": u.helped, "misled": u.misled, "outdated": u.outdated, "utility": round(u.utility, 2),
                     "last_used": when.stamp(u.last_used), "deprecate": u.deprecate})
    rows.sort(key=lambda r: (-r["utility"], -r["uses"], r["skill"]))

    def text() -> None:
        if not rows:
            click.echo("No skills yet: `repo-memory skill new NAME` or an agent's skill_write adds one.")
            return
        click.echo(f"{'skill':32} {'status':10} {'uses':>5} {'ok':>4} {'fail':>5} {'help':>5} {'mislead':>8} {'old':>4} {'utility':>8}  last used")
        for r in rows:
            flag = "  deprecate?" if r["deprecate"] else ""
            say(f"{visible(r['skill'], lines=False)[:32]:32} {r['status']:10} {r['uses']:>5} {r['succeeded']:>4} {r['failed']:>5} {r['helped']:>5} "
                f"{r['misled']:>8} {r['outdated']:>4} {r['utility']:>8.2f}  {when.shown(r['last_used'], seconds=False) or '-'}{flag}")

    emit(rows, as_json, text)


@click.command(name="merge-skill")
@click.argument("base", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("path")
@click.argument("marker_size", type=int, default=7)
@click.pass_context
def merge_skill(ctx: click.Context, base: Path, ours: Path, theirs: Path, path: str, marker_size: int) -> None:
    """Merge a SKILL.md for git (the merge driver `init` registers): git's own merge, but text no person accepted
    joined to an accepted skill is written as a draft."""
    from repo_memory.git import skill_merge

    ctx.exit(skill_merge.merge(base, ours, theirs, path, marker_size))
