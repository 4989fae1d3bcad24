"""What every command shares: the root group, opening the Store once per invocation, JSON or text output, progress."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError


class Group(click.Group):
    """A click group that turns our errors into a one-line message and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RepoMemoryError as exc:
            raise click.ClickException(str(exc)) from exc


def store_of(ctx: click.Context) -> Store:
    """The Store of the repository this invocation works on, opened once and closed (committing) at exit."""
    obj = ctx.find_root().obj
    if "store" not in obj:
        obj["store"] = Store(Config.load(obj["root"]))
        ctx.call_on_close(obj["store"].close)
    store: Store = obj["store"]
    return store


def root_of(ctx: click.Context) -> Path | None:
    root: Path | None = ctx.find_root().obj["root"]
    return root


def emit(data: Any, as_json: bool, text: Callable[[], None]) -> None:
    """Print `data` as JSON, or call `text` to print it for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        text()


def progress(label: str) -> Callable[[int, int], None]:
    """A progress reporter for long work (shown from 500 items), on stderr."""

    def report(done: int, total: int) -> None:
        if total >= 500:
            click.echo(f"\r{label}: {done}/{total} files", nl=done == total, err=True)

    return report


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
