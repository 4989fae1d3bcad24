"""`log import --claude-memory / --codex-memories`: the harnesses' own memories of this repository, brought in for
review as experience records (core/native_memory.py), and draft skills proposed from them (core/drafts.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import click

from repo_memory.core import drafts, native_memory as native
from repo_memory.core.native_memory import CLAUDE, CODEX, Homes, Outcome
from repo_memory.core.store import Store
from repo_memory.shells.cli.base import emit
from repo_memory.guards.shellwords import quoted


def homes() -> Homes:
    """Where the harnesses keep their state, from this process's environment."""
    return Homes.of(os.environ, Path.home())


def import_memories(store: Store, claude: bool, codex: bool, propose: bool, dry_run: bool, as_json: bool) -> None:
    """Import what was asked for, propose drafts if asked, commit once, and report."""
    where, outcomes = homes(), []
    importer = native.MemoryImport(store, where, write=not dry_run)
    if claude:
        folder = native.claude_folder(store.root, store.config.git_dir, where)
        found = native.read_claude(folder) if folder.is_dir() else []
        if not found:
            click.echo(f"No Claude Code auto memory of {store.root} in {where.short(folder)}.", err=True)
        outcomes.append(importer.run(CLAUDE, [folder], found))
    if codex:
        folders = native.codex_folders(where)
        here, elsewhere = native.read_codex(folders, store.root, where)
        if not folders:
            click.echo(f"No Codex memories in {where.short(where.codex)} (memories, memories_v2).", err=True)
        outcomes.append(importer.run(CODEX, folders or [where.codex / native.CODEX_FOLDERS[0]], here, elsewhere))
    proposals = [p for o in outcomes for p in drafts.propose(store, o.session, write=not dry_run)] if propose else []
    written = sum(o.added for o in outcomes) + sum(p.written for p in proposals)
    harnesses = ", ".join(sorted({o.harness for o in outcomes if o.added}))
    commit = store.flush("import", harness=harnesses or None) if written and not dry_run else None
    data = {"added": sum(o.added for o in outcomes), "present": sum(o.present for o in outcomes), "dry_run": dry_run,
            "commit": commit.sha if commit and commit.sha else None, "deferred": commit.deferred if commit else None,
            "memories": [dataclasses.asdict(o) for o in outcomes],
            "proposals": [dataclasses.asdict(p) for p in proposals]}
    emit(data, as_json, lambda: _report(outcomes, proposals, data, dry_run))


def _report(outcomes: list[Outcome], proposals: list[drafts.Proposal], data: dict[str, Any], dry_run: bool) -> None:
    for o in outcomes:
        span = f"#{o.ids[0].rpartition('#')[2]}-{o.ids[-1].rpartition('#')[2]}" if o.ids else ""
        changed = f" ({o.changed} a new version of a memory imported before)" if o.changed else ""
        click.echo(f"{o.session}{span}: {o.added} new{changed}, {o.present} already there  <- {', '.join(o.folders)}")
        if o.elsewhere:
            click.echo(f"  skipped {len(o.elsewhere)} Codex memories about other places (they name no path in this "
                       "repository; --json lists them)")
        for record in o.redacted:
            click.echo(f"  redacted a secret in {record}")
    for p in proposals:
        if p.written:
            click.echo(f"proposed the draft skill {p.skill} from {p.record}: read it (`repo-memory skill show {quoted(p.skill)}`), "
                       f"then `repo-memory accept {quoted(p.skill)}` or `repo-memory reject {quoted(p.skill)}`")
        else:
            click.echo(f"not proposed from {p.record} ({p.skill}): {p.why}")
    commit = data["commit"]
    where = ("a dry run: nothing written" if dry_run else f"committed {str(commit)[:12]}" if commit
             else f"not committed yet: {data['deferred']}" if data["deferred"] else "nothing new to commit" if not data["added"]
             else "written; committed with your next memory commit")
    click.echo(f"{'Would import' if dry_run else 'Imported'} {data['added']} memory record(s); {data['present']} were "
               f"already there; {where}.")
