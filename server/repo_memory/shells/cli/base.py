"""What every command shares: the root group, opening the Store once per invocation, JSON or text output, progress."""

from __future__ import annotations

import difflib
import importlib
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError, disk_refused, refused_by_disk
from repo_memory.git.deferral import next_step, why
from repo_memory.guards import markers
from repo_memory.guards.terminal import visible
from repo_memory.index.db import damage


class Group(click.Group):
    """A click group that turns our errors into a one-line message and exit code 1, and runs a command again once
    after rebuilding a damaged index from the memory files (a command that failed on it wrote nothing). A command no
    group has is answered by `meant`. Commands named in `lazy` (name -> module of shells/cli, attribute) are imported
    when first looked up."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attribute = self.lazy[name]
            self.add_command(getattr(importlib.import_module(f"repo_memory.shells.cli.{module}"), attribute), name)
        return super().get_command(ctx, name)

    def loaded(self) -> dict[str, click.Command]:
        """Every command, imported (for whatever walks them all: help, docs)."""
        ctx = click.Context(self)
        return {name: command for name in self.list_commands(ctx) if (command := self.get_command(ctx, name))}

    def invoke(self, ctx: click.Context) -> Any:
        args, protected = list(ctx.args), list(ctx._protected_args)
        try:
            try:
                return super().invoke(ctx)
            except (sqlite3.DatabaseError, MemoryError) as exc:  # MemoryError: SQLite's NOMEM on a damaged block
                store = ctx.find_root().obj.get("store")
                if store is None or not damage(exc):
                    raise
                click.echo("repo-memory: the index was damaged; rebuilding it from the memory files", err=True)
                store.repair_index(str(exc))
                ctx.args, ctx._protected_args = args, protected
                return super().invoke(ctx)
        except click.exceptions.NoSuchCommand as exc:  # raised by this group or a group under it
            raise meant(exc) from None
        except RepoMemoryError as exc:  # it may quote a file's value or a folder's name: escaped, as output is
            raise click.ClickException(visible(str(exc))) from exc
        except OSError as exc:  # a file the file system refused (not a closed pipe): where, why, what to do
            if not refused_by_disk(exc):
                raise
            raise click.ClickException(disk_refused(exc, "run it again")) from exc


# What people type that is a command elsewhere, and that command: the MCP tools' names (the README names the tools),
# and a review under `skill`, where `skill show` is
MEANT = {"recall": "that is an MCP tool's name; here it is `repo-memory search`",
         "remember": "that is an MCP tool's name; here it is `repo-memory log add`",
         "read": "that is an MCP tool's name; here it is `repo-memory skill show NAME` or `repo-memory log show SESSION`",
         "skill_write": "that is an MCP tool's name; here it is `repo-memory skill new`",
         "skill-write": "that is an MCP tool's name; here it is `repo-memory skill new`",
         "skill accept": "`accept` is `repo-memory accept NAME --sha SHA` (the sha `repo-memory skill show NAME` prints)",
         "skill reject": "`reject` is `repo-memory reject NAME`"}


def meant(exc: click.exceptions.NoSuchCommand) -> click.UsageError:
    """The error for a command no group has: the command that does it, or the closest names first (click sorts its
    suggestions by name, so `unistall` offered 'stale' before 'uninstall')."""
    words, ctx = [exc.command_name], exc.ctx
    while ctx is not None and ctx.parent is not None:
        words.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    if " ".join(words) in MEANT:
        return click.UsageError(f"No such command '{exc.command_name}': {MEANT[' '.join(words)]}.", exc.ctx)
    group = exc.ctx.command if exc.ctx is not None else None
    names = group.list_commands(exc.ctx) if isinstance(group, click.Group) and exc.ctx is not None else []  # the lazy ones too
    close = [f"'{name}'" for name in difflib.get_close_matches(exc.command_name, names)]  # the closest first
    listed = f"{', '.join(close[:-1])} or {close[-1]}" if len(close) > 1 else "".join(close)
    return click.UsageError(f"No such command '{exc.command_name}'." + (f" Did you mean {listed}?" if close else ""), exc.ctx)


def store_of(ctx: click.Context, memory: bool = True) -> Store:
    """The Store of the repository this invocation works on, opened once and closed (committing) at exit.

    With `memory` (what reads or writes memory) it is refused, naming the fix, while a sparse checkout leaves memory
    off disk: a listing would read as empty ("No skills yet", nothing stale, a report of nothing).
    """
    obj = ctx.find_root().obj
    if "store" not in obj:
        obj["store"] = Store(Config.load(obj["root"]))
        ctx.call_on_close(lambda: closed(obj["store"]))
    store: Store = obj["store"]
    if memory:
        store.sparse.check()
    return store


def closed(store: Store) -> None:
    """Close `store`, committing what this invocation wrote; when that commit waits, say so on stderr: why, and the
    step that lets it land (the answer an MCP write gives, and what doctor says)."""
    if waits := store.close():
        said = f"repo-memory: written, but not committed yet: {why(waits).rstrip('.')}. {next_step(waits)}"
        click.echo(said.rstrip(), err=True)


def root_of(ctx: click.Context) -> Path | None:
    root: Path | None = ctx.find_root().obj["root"]
    return root


def emit(data: Any, as_json: bool, text: Callable[[], None]) -> None:
    """Print `data` as JSON, or call `text` to print it for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        text()


def progress(label: str, unit: str = "files", least: int = 500) -> Callable[[int, int], None]:
    """A progress reporter for long work (shown from `least` items), on stderr."""

    def report(done: int, total: int) -> None:
        if total >= least:
            click.echo(f"\r{label}: {done}/{total} {unit}", nl=done == total, err=True)

    return report


def megabytes(label: str, least: int = 4 << 20) -> Callable[[int, int], None]:
    """A progress reporter for long work over bytes (an import read, logs checked), shown from `least` bytes, on stderr;
    a line the same as the one before is not shown again (the work reports its end more than once)."""
    shown = [""]

    def report(done: int, total: int) -> None:
        line = f"\r{label}: {done / 1e6:.1f}/{total / 1e6:.1f} MB"
        if total >= least and line != shown[0]:
            click.echo(line, nl=done >= total, err=True)
            shown[0] = line

    return report


def say(line: str, err: bool = False) -> None:
    """Print one line holding names or text from the repository, each character a terminal would act on escaped
    (guards/terminal.py): a newline in a folder's name fakes no line of output, a record's OSC 52 sets no clipboard."""
    click.echo(visible(line, lines=False), err=err)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


SHA_HELP = "The sha `show` printed for the version you reviewed; refused if it changed since (default: show it and ask)."


def reviewed_sha(what: str, given: str | None, current: str, shown: Callable[[], str], show_cmd: str) -> str:
    """The version a person accepts: the one they name with --sha, or at a terminal the current one, `shown` (its
    text) printed with every control character escaped, and confirmed.

    Without a terminal and without --sha nothing is accepted: what was reviewed must be named, or an agent's edit
    between the review and the accept would be accepted unseen.
    """
    if given:
        return given
    if not sys.stdin.isatty():
        raise click.ClickException(f"Name the version of {what} you reviewed: `{show_cmd}` prints it with its sha; "
                                   "then accept with --sha SHA. Nothing was accepted.")
    click.echo(visible(markers.shown(shown())), nl=False)  # what they accept is what they could read: no line drawn over another
    click.confirm(f"Accept this version of {what} (sha {current[:12]})?", abort=True)
    return current


def show_sha(what: str, sha: str, accept_command: str) -> None:
    """Tell a person (on stderr, so stdout stays the content) which version they are looking at and how to accept it."""
    click.echo(f"{what}: sha {sha[:12]} — to accept exactly this version: {accept_command} --sha {sha[:12]}", err=True)


def init_note(store: Store, drivers: bool = True) -> None:
    """Say so when `init` has not run here (setup and writes work, and memory is committed without the union-merge
    rule), or, with `drivers`, when this clone lacks the diff driver `init` registers: a clone gets .gitattributes, not
    .git/config (a write leaves that to setup and doctor: each write in a fresh clone would say it)."""
    if not layout.initialised(store.root, store.config.common_dir):
        click.echo("note: `repo-memory init` has not run here, so the experience logs agents commit have no union-merge rule "
                   "(two branches' logs conflict when merged) and `git log -p` shows their raw JSON lines: run `repo-memory init` "
                   "once (it creates .agents/ and those rules in .gitattributes)", err=True)
    elif drivers and (lacks := layout.missing_drivers(store.root, store.config.git_dir)):
        click.echo(f"note: this clone lacks {' and '.join(lacks)} (git does not clone .git/config): run `repo-memory init` "
                   "here once (it changes nothing that is committed)", err=True)
