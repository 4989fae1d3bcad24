"""Experience logs: add and read records, the timeline across sessions, verifying every hash chain, rendering for git."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from repo_memory.core import dropped, importing, redacting, transcripts
from repo_memory.core.breaks import note
from repo_memory.formats import experience, speech, transcript, when
from repo_memory.core.session_files import TIPS_DIR
from repo_memory.git.repo import CommitResult, Git
from repo_memory.guards import markers
from repo_memory.shells.cli import memories
from repo_memory.guards.terminal import visible
from repo_memory.shells.cli.base import emit, init_note, json_option, megabytes, say, store_of
from repo_memory.guards.shellwords import quoted

SHOWN = 10  # sessions an import lists by name


@click.group()
def log() -> None:
    """Write and read experience logs (.agents/experience/<YYYY-MM>/<session>.jsonl)."""


@log.command(name="add")
@click.argument("text")
@click.option("-k", "--kind", default="note", show_default=True, help="note, action, observation, tool, decision or error (outcomes: `repo-memory feedback`).")
@click.option("-s", "--session", help="Session to append to (default: a new session id, printed). A name of yours is kept "
              "as this clone's: `-s ops-notes` gives ids ops-notes.<clone>#N, and names that log again later.")
@click.option("-r", "--ref", "refs", multiple=True, help="An id this record cites (repeat for several).")
@click.option("--speaker", help="Who said it, when the record is what a person said.")
@click.option("--when", "about", help="When what it tells happened, if not now (2023-05-08, yesterday, '3 days ago').")
@click.pass_context
def log_add(ctx: click.Context, text: str, kind: str, session: str | None, refs: tuple[str, ...], speaker: str | None,
            about: str | None) -> None:
    """Append a record written by you to a session's log and print its id.

    With commit = "auto" each call commits its record, and a log a commit holds is never appended to (git would see
    your own uncommitted change in it), so the next call to the session goes on in SESSION+2.jsonl, then +3, as one
    session. To add several records in one file and one commit, pipe them as JSON lines to
    `repo-memory log import -` ({"kind": "note", "text": "…", "session": "ops-notes"} a line).

    \b
    Example: repo-memory log add "Staging DB is read-only on Fridays" -k decision -s ops-notes
    """
    if kind == "summary":  # the engine says checkpoint(summary, covers), a tool a terminal has no way to call
        raise click.UsageError("A summary cites the records it compresses: write it with covers, as `echo '{\"kind\": "
                               "\"summary\", \"text\": \"…\", \"covers\": [\"SESSION#1-20\"]}' | repo-memory log import -`.")
    data = speech.told(text, None, speaker, about)
    store = store_of(ctx)
    record = store.remember(text, kind, list(refs), data, session=session, actor="human", tool="cli")[0]
    click.echo(record["id"])
    init_note(store, drivers=False)
    for rid, flags in store.flagged([record["id"]]):  # written, but nothing will find it: say so now, not in doctor
        found = "; ".join(json.loads(flags))
        click.echo(f"warning: {rid} is quarantined: its text holds what injection hides behind ({found}): "
                   f"recall and session briefings leave it out. `repo-memory log show {record['session']}` shows it (bidi "
                   "controls escaped); if those characters were not meant, add the text again without them.", err=True)
    if held := store.commit_status("experience", session=record["session"]):  # kept, and waiting with the rest of its log
        log_file, why = held.split(": ", 1)
        click.echo(f"warning: {record['id']} is written but not committed: repo-memory commits nothing of {log_file} while "
                   f"{why}; `repo-memory doctor` says how to settle it.", err=True)


@log.command(name="tail")
@click.argument("session", required=False)
@click.option("-n", "--lines", "count", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many records.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines exactly as stored.")
@click.pass_context
def log_tail(ctx: click.Context, session: str | None, count: int, as_json: bool) -> None:
    """Print the last records of SESSION (default: the most recently active session)."""
    store = store_of(ctx)
    store.refresh()
    session = session or next((s[0] for s in store.sessions()), None)
    if session is None:
        raise click.ClickException("No experience recorded yet. Add one: repo-memory log add 'what happened'")
    for line in [ln for ln in store.lines(session) if ln.record][-count:]:
        assert line.record is not None
        edited = experience.seal(line.record)["sha256"] != line.record["sha256"]  # as log show and read mark it
        view = store.read(line.record["id"]).records[0] if edited else None  # a person's attested redaction, or a break
        mark = ("" if view is None else "  [redacted by the person: a redaction record of theirs attests it]" if view.verified else
                "  [verification failed: its content does not match its sha256; `repo-memory verify` says more]")
        if as_json:
            click.echo(line.raw.decode("utf-8"))
        else:
            say(transcript.one_line(line.record) + mark)


@log.command(name="redact")
@click.argument("record_id", metavar="ID")
@click.option("--text", "strings", multiple=True, metavar="STRING",
              help="A string to replace by [REDACTED] wherever the record holds it (repeat for several; - reads them from stdin, one a line).")
@click.option("--all-text", "whole", is_flag=True, help="Replace the record's whole text and data (and its blob) by [REDACTED].")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@json_option
@click.pass_context
def log_redact(ctx: click.Context, record_id: str, strings: tuple[str, ...], whole: bool, dry_run: bool, as_json: bool) -> None:
    """Take a secret the scanner missed out of record ID: it reads [REDACTED] there, attested by a record of yours.

    \b
    The record keeps its hash (the chain goes on), and a `redaction` record by you, appended to its session, names it
    and the hash of what it now holds: verify, doctor and read then call it redacted on that date by the person, where
    an edit by hand breaks for good. Its blob and its tool call's output blob are redacted too (the old ones deleted
    unless another record cites them); other records holding the string (any session, line or blob) are named, to
    redact in turn, and so is a file of yours the record cites as its output. The search index is rebuilt
    without the secret's bytes, and the change is one memory commit. Older commits still hold the secret: rotate it,
    then rewrite history (the command says how). A secret on the command line lands in your shell's history: pass
    `--text -` and give it on stdin. Two clones that redacted the record differently leave, once merged, a line of
    each (verify says so): with no --text, the command folds them into one line redacting what each redacts.

    \b
    Examples:
      repo-memory log redact ops.4c8935a9#12 --text -          # then paste the secret, Ctrl-D
      repo-memory log redact 2026-12-02-a1b2c3#7 --all-text --dry-run
    """
    if "-" in strings:
        strings = tuple(s for s in strings if s != "-") + tuple(ln for ln in sys.stdin.read().splitlines() if ln.strip())
    done = store_of(ctx).redact(record_id, strings, whole, dry_run)
    emit({**dataclasses.asdict(done), "commit": done.commit.sha if done.commit else None, "dry_run": dry_run}, as_json,
         lambda: _redacted(done, dry_run))


def _redacted(done: redacting.Redacted, dry_run: bool) -> None:
    fields = ", ".join(done.fields)
    what = (f"{done.replaced} occurrence(s) in {fields}" if done.replaced else f"redacting what each redacts ({fields})") + (
        f"; its {done.folded} lines (versions clones redacted, merged) folded into one" if done.folded else "")
    if dry_run:
        click.echo(f"Would redact {done.id}: {what}. Nothing was written.")
    else:
        commit = done.commit
        where = (f"committed {commit.sha[:12]}" if commit and commit.sha else f"not committed yet: {commit.deferred}"
                 if commit and commit.deferred else "not committed: commit it yourself (`git add .agents/experience && git commit`)")
        click.echo(f"Redacted {done.id}: {what}; attested by {done.attestation}; {where}.")
    if done.others:
        click.echo(f"warning: {len(done.others)} other record(s) hold it too: {', '.join(done.others[:10])}; "
                   "redact each the same way.", err=True)
    for said in done.remains:  # a blob other records cite, one this checkout lacks, a file of the person's
        click.echo(f"warning: {said}", err=True)
    if not dry_run and not done.in_history:
        click.echo("No commit holds the secret: the record was never committed, so no history needs rewriting. Rotate "
                   "it all the same if it left this machine.")
    elif not dry_run:
        click.echo("Still to do: the commits before this one hold the secret. Rotate it first (revoke it where it was "
                   "issued). Then rewrite history: `git filter-repo --replace-text FILE` (a line `THE-SECRET==>[REDACTED]` "
                   "in FILE), force-push, and have every other clone clone again (docs/security.md, \"A secret got "
                   f"committed anyway\"). git's textconv cache of the logs ({redacting.TEXTCONV_CACHE}) was deleted here (git "
                   f"rebuilds it): delete it in every other clone too (`git update-ref -d {redacting.TEXTCONV_CACHE}`).")


@log.command(name="accept-loss")
@click.argument("session")
@click.pass_context
def accept_loss(ctx: click.Context, session: str) -> None:
    """Accept that records of SESSION this clone committed are gone from every branch (a `git reset`, a force push, a
    deleted branch): `verify` and `doctor` stop naming them; the session goes on after its last id."""
    config = store_of(ctx).config
    git, tips = Git(config.root, config.git_dir), config.clone_dir / TIPS_DIR
    drops = dropped.dropped(config.root, tips, git, git.holds, only=session)
    if not drops:
        raise click.ClickException(f"No records of session '{session}' this clone wrote are missing from every branch "
                                   "(`repo-memory verify` names the sessions that have some).")
    for drop in drops:
        dropped.accept(tips, drop)
        click.echo(f"Accepted the loss of {drop.ids()}: verify no longer names them; while the reflog keeps commit "
                   f"{drop.commit[:12]}, `git checkout {drop.commit[:12]} -- {quoted(*drop.files)}` still brings them back.")


@log.command(name="import")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--claude", is_flag=True, help="Import this repository's past Claude Code sessions (from ~/.claude, or $CLAUDE_CONFIG_DIR).")
@click.option("--codex", is_flag=True, help="Import this repository's past Codex sessions (from ~/.codex, or $CODEX_HOME).")
@click.option("--claude-memory", is_flag=True, help="Import Claude Code's auto memory of this repository (~/.claude/projects/<repo>/memory/).")
@click.option("--codex-memories", is_flag=True, help="Import the entries of Codex's memories (~/.codex/memories*/) that name this repository's paths.")
@click.option("--propose-skills", is_flag=True, help="With --claude-memory or --codex-memories: propose a draft skill for each memory written as numbered steps.")
@click.option("-s", "--session", help="Session for entries that name none (default: import-<file name>).")
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines of a records file and list the others (default: nothing is imported).")
@click.option("--dry-run", is_flag=True, help="Count what would be imported; write nothing.")
@json_option
@click.pass_context
def log_import(ctx: click.Context, files: tuple[Path, ...], claude: bool, codex: bool, claude_memory: bool, codex_memories: bool,
               propose_skills: bool, session: str | None, skip_invalid: bool, dry_run: bool, as_json: bool) -> None:
    """Import experience in bulk: JSONL records, and past Claude Code and Codex sessions of this repository.

    \b
    A transcript becomes one session, claude-<session id> or codex-<session id>, with its original times: your
    prompts, the agent's messages, each tool call and each output (long ones in blobs). Sessions started in a folder
    inside the repository count. A records file (format told from its first lines) holds one JSON object per line:
    records as `log tail --json` prints them, or entries like
      {"kind": "decision", "text": "Chose pytest-postgresql", "ts": "2026-11-02T10:00:00Z", "session": "ops-notes"}
    (kind note, action, observation, tool, decision, error or summary; text or data; refs, ts, session and actor
    human|agent optional). Refs and covers citing an earlier record of the file (an exported record's id, or SESSION#N,
    the Nth entry of that session there) name the record it became; records another clone exported go to this
    clone's own NAME.<clone>, and their refs naming no record here are kept as they were (counted in the report;
    an entry's are refused).

    \b
    --claude-memory and --codex-memories bring in the memories the harnesses keep outside the repository: each memory
    (a topic file, a section, a Codex entry that names a path in this repository) becomes a note in the session
    claude-memory or codex-memories, by the agent, with its file and entry; a memory whose text changed comes in again
    citing the record it replaces. --propose-skills turns memories written as numbered steps into draft skills.

    \b
    Secrets are redacted and records with injection markers quarantined, as on every write. Importing a file again
    adds only what it did not hold before (a transcript that grew adds its new part). The whole import is one commit.

    \b
    Examples:
      repo-memory log import --claude --codex           # every past session of this repository
      repo-memory log import --claude --dry-run         # how many records that would be
      repo-memory log import --claude-memory --codex-memories --propose-skills   # the harnesses' own memories
      repo-memory log import notes.jsonl                # entries that name no session go to import-notes
      repo-memory log tail --json -n 1000 SESSION | repo-memory log import -     # from another clone
    """
    if claude_memory or codex_memories or propose_skills:
        if files or claude or codex or session or skip_invalid or not (claude_memory or codex_memories):
            raise click.UsageError("--propose-skills goes with --claude-memory or --codex-memories, and memory files are "
                                   "imported in a command of their own (transcripts and JSONL files in another).")
        return memories.import_memories(store_of(ctx), claude_memory, codex_memories, propose_skills, dry_run, as_json)
    if not (files or claude or codex):
        raise click.UsageError("Nothing to import: name JSONL files (- for stdin), or pass --claude or --codex "
                               "(--claude-memory or --codex-memories for the harnesses' own memories).")
    store = store_of(ctx)
    stdin = sys.stdin.buffer.read() if Path("-") in files else None
    claude_files, codex_files = _discovered(store.root, claude, codex)
    found = importing.sources(files, stdin, claude_files, codex_files)
    problems = importing.check(found, store, session)
    if problems and not skip_invalid:
        raise click.ClickException(f"{len(problems)} line(s) cannot be imported, so nothing was:\n  " + "\n  ".join(problems[:10])
                                   + "\nFix them, or pass --skip-invalid to import the other lines.")
    started = time.perf_counter()
    report = importing.Importer(store, session, megabytes("Importing"), write=not dry_run).run(found, checked=not problems)
    # a transcript's format is the harness that wrote it: the commit names those, not this process's (a terminal's: unknown)
    harnesses = sorted({s.format for s in report.sessions if s.added and s.format != importing.RECORDS})
    commit = store.flush("import", harness=", ".join(harnesses) or None) if report.added and not dry_run else None
    _imported(report, commit, time.perf_counter() - started, dry_run, as_json)
    if report.added and not dry_run:
        init_note(store, drivers=False)


def _discovered(root: Path, claude: bool, codex: bool) -> tuple[list[Path], list[Path]]:
    """The transcripts of this repository's past sessions each harness keeps (saying so on stderr when there are none)."""
    found: tuple[list[Path], list[Path]] = ([], [])
    homes: list[tuple[bool, str, str | None, str, Callable[[Path, Path], list[Path]]]] = [
        (claude, "Claude Code", os.environ.get("CLAUDE_CONFIG_DIR"), ".claude", transcripts.claude_transcripts),
        (codex, "Codex", os.environ.get("CODEX_HOME"), ".codex", transcripts.codex_rollouts)]
    for (wanted, name, env, default, discover), into in zip(homes, found):
        if wanted:
            into += discover(root, Path(env) if env else Path.home() / default)
            if not into:
                click.echo(f"No {name} sessions of {root} in {env or '~/' + default}.", err=True)
    return found


def _imported(report: importing.Report, commit: CommitResult | None, seconds: float, dry_run: bool, as_json: bool) -> None:
    rate = round(report.added / seconds) if seconds > 0 else 0
    where = ("a dry run: nothing written" if dry_run else f"committed {commit.sha[:12]}" if commit and commit.sha
             else f"not committed yet: {commit.deferred}" if commit and commit.deferred else "nothing new to commit" if not report.added
             else "written; committed with your next memory commit")
    odd = report.undecodable  # lines holding bytes that are not UTF-8, each such byte read as U+FFFD
    odd_bytes, odd_lines = sum(n for _, _, n in odd), [f"{f}:{line}" for f, line, _ in odd[:100]]
    data = {"added": report.added, "present": report.present, "redacted": report.redacted, "seconds": round(seconds, 3), "records_per_second": rate,
            "commit": commit.sha if commit else None, "dry_run": dry_run, "skipped": report.skipped,
            "not_utf8": {"lines": len(odd), "bytes": odd_bytes, "where": odd_lines}, "unresolved": report.unresolved,
            "sessions": [dataclasses.asdict(s) for s in report.sessions]}

    def text() -> None:
        changed = [s for s in report.sessions if s.added]
        for s in changed[:SHOWN]:
            first, last = s.first.rpartition("#")[2], s.last.rpartition("#")[2]
            ids = f"#{first}" + (f"-{last}" if last != first else "") if s.first else "(not written)"
            click.echo(f"{s.session}{ids}: {s.added} new, {s.present} already there  <- {_short(s.source)}")
        if len(changed) > SHOWN:
            click.echo(f"… and {len(changed) - SHOWN} more sessions (--json lists every one)")
        for line in report.skipped[:10]:
            say(f"skipped {line}", err=True)
        if report.redacted:
            click.echo(f"{report.redacted} record(s) had a secret redacted: [REDACTED:<rule>] stands in its place, and the "
                       "record's data.redacted names the rules.")
        if report.unresolved:
            click.echo(f"{report.unresolved} ref(s) or cover(s) name no record here, kept as they were: they name records "
                       "of the clone that exported them (pull from it to have them).")
        if odd:
            shown = ", ".join(_short(w) for w in odd_lines[:5]) + (", …" if len(odd) > 5 else "")
            click.echo(f"warning: {len(odd)} line(s) held {odd_bytes} byte(s) that are not UTF-8 (a file saved as "
                       f"Latin-1?), imported with U+FFFD in their place: {shown}", err=True)
        sessions = len({s.session for s in changed})
        speed = f" ({rate} records/s)" if seconds >= 1 else ""
        click.echo(f"{'Would import' if dry_run else 'Imported'} {report.added} record(s) into {sessions} session(s) in {seconds:.1f} s"
                   f"{speed}; {report.present} were already there; {where}.")

    emit(data, as_json, text)


def _short(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


@log.command(name="show")
@click.argument("session")
@click.pass_context
def log_show(ctx: click.Context, session: str) -> None:
    """Render SESSION as readable markdown, each record headed by its id (an anchor you can cite)."""
    click.echo(visible(transcript.markdown(session, store_of(ctx).log_files(session))), nl=False)


@click.command()
@click.option("--since", help="Start at this date or time (ISO, UTC), e.g. 2026-11-30.")
@click.option("-n", "--limit", type=click.IntRange(1, 10000), default=200, show_default=True, help="Show the newest N records.")
@json_option
@click.pass_context
def timeline(ctx: click.Context, since: str | None, limit: int, as_json: bool) -> None:
    """Experience across every session in time order, the newest LIMIT records: time, id, kind, actor, text.

    \b
    Examples:
      repo-memory timeline                       # the latest 200 records
      repo-memory timeline --since yesterday -n 1000
    """
    store = store_of(ctx)
    store.refresh()
    rows, earlier = store.timeline(when.moment(since, "--since"), limit)

    def text() -> None:
        if not rows:
            click.echo("Nothing recorded" + (f" since {since}." if since else " yet."))
        if earlier:
            click.echo(f"… {earlier} earlier record(s) not shown (raise -n, or give a later --since)")
        for row in rows:
            first = (row["text"] or "").split("\n")[0]  # splitlines() ended it at a CR: what followed was hidden
            say(f"{when.shown(row['ts'])}  {row['id']:<28} {row['kind']:<10} {row['actor']:<6} {markers.shown(first[:80])}")

    emit([{**row, "ts": when.stamp(row["ts"])} for row in rows], as_json, text)


@click.command()
@json_option
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Check every experience log's hash chain and every blob; exit 1 listing each break. A torn last line (bytes no append
    acknowledged, which `repo-memory doctor --fix` moves aside), a session's first file a commit deleted and a record a
    person redacted (`log redact`) are listed as notes and are no break."""
    found = store_of(ctx).verify(megabytes("Checking the logs", 8 << 20))
    breaks = [(w, p) for w, p in found if not note(p)]

    def text() -> None:
        for where, what in found:
            say(f"{where}: {what}" + ("" if what != experience.TORN else "; run `repo-memory doctor --fix` to "
                                      "move it to .git/repo-memory/torn/ (never committed)"))
        click.echo(f"{len(breaks)} problem(s) found." if breaks else "All experience logs verify"
                   + (f" ({len(found)} note(s) above)." if found else "."))

    emit([{"where": w, "problem": p, "torn": p == experience.TORN, "redacted": p.startswith(redacting.SAID), "note": note(p)}
          for w, p in found], as_json, text)
    if breaks:
        ctx.exit(1)


@click.command(name="textconv")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def textconv(path: Path) -> None:
    """Render an experience log for git (the diff driver `init` registers): time, id, kind, actor, text per record;
    every other line shown as it is, and a file without records passed through byte for byte."""
    data = path.read_bytes()
    rendered = transcript.textconv(data)
    if rendered is None:  # no log (a `.gitattributes` line may give the driver any file): git shows its real diff
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    click.echo(visible(rendered), nl=False)  # what `git diff` and `git log -p` show a person
