"""Experience logs: add and read records, the timeline across sessions, verifying every hash chain, rendering for git."""

from __future__ import annotations

from pathlib import Path

import click

from repo_memory.formats import experience, transcript, when
from repo_memory.shells.cli.base import emit, json_option, store_of


@click.group()
def log() -> None:
    """Write and read experience logs (.agents/experience/<YYYY-MM>/<session>.jsonl)."""


@log.command(name="add")
@click.argument("text")
@click.option("-k", "--kind", default="note", show_default=True, help="note, action, observation, tool, decision or error (outcomes: `repo-memory feedback`).")
@click.option("-s", "--session", help="Session to append to (default: a new session id, printed).")
@click.option("-r", "--ref", "refs", multiple=True, help="An id this record cites (repeat for several).")
@click.pass_context
def log_add(ctx: click.Context, text: str, kind: str, session: str | None, refs: tuple[str, ...]) -> None:
    """Append a record written by you to a session's log and print its id.

    \b
    Example: repo-memory log add "Staging DB is read-only on Fridays" -k decision -s ops-notes
    """
    record = store_of(ctx).remember(text, kind, list(refs), session=session, actor="human", tool="cli")[0]
    click.echo(record["id"])


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
        click.echo(line.raw.decode("utf-8") if as_json else transcript.one_line(line.record))


@log.command(name="show")
@click.argument("session")
@click.pass_context
def log_show(ctx: click.Context, session: str) -> None:
    """Render SESSION as readable markdown, each record headed by its id (an anchor you can cite)."""
    click.echo(transcript.markdown(session, store_of(ctx).lines(session)), nl=False)


@click.command()
@click.option("--since", help="Start at this date or time (ISO, UTC), e.g. 2026-11-30.")
@click.option("-n", "--limit", type=click.IntRange(1, 10000), default=200, show_default=True)
@json_option
@click.pass_context
def timeline(ctx: click.Context, since: str | None, limit: int, as_json: bool) -> None:
    """Experience across every session in time order: time, id, kind, actor, text."""
    store = store_of(ctx)
    store.refresh()
    rows = store.timeline(when.moment(since, "--since"), limit)

    def text() -> None:
        if not rows:
            click.echo("Nothing recorded" + (f" since {since}." if since else " yet."))
        for row in rows:
            first = (row["text"] or "").splitlines()[0] if row["text"] else ""
            click.echo(f"{row['ts'][:19].replace('T', ' ')}  {row['id']:<28} {row['kind']:<10} {row['actor']:<6} {first[:80]}")

    emit(rows, as_json, text)


@click.command()
@json_option
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Check every experience log's hash chain and every blob; exit 1 listing each break."""
    breaks = store_of(ctx).verify()

    def text() -> None:
        for where, what in breaks:
            click.echo(f"{where}: {what}")
        click.echo("All experience logs verify." if not breaks else f"{len(breaks)} problem(s) found.")

    emit([{"where": w, "problem": p} for w, p in breaks], as_json, text)
    if breaks:
        ctx.exit(1)


@click.command(name="textconv")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def textconv(path: Path) -> None:
    """Render an experience log for git (the diff driver `init` registers): time, id, kind, actor, text per record."""
    click.echo(transcript.textconv(experience.parse_lines(path.read_bytes())), nl=False)
