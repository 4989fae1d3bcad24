"""Getting started and attaching: init, demo, serve, hook handling, and setup for Claude Code, Codex and Gemini CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from repo_memory import layout
from repo_memory.core import mirror, mirror_checks
from repo_memory.core.store import Store
from repo_memory.git.message import NAME_YOURSELF
from repo_memory.shells import attach, harnesses, hookcalls, hooks, teamfiles
from repo_memory.shells.cli.base import init_note, root_of, store_of
from repo_memory.shells.cli.skills import settle_offers
from repo_memory.guards.shellwords import quoted


@click.command()
@click.option("--root", type=click.Path(file_okay=False), default=None,  # a str: `--root ""` is refused, not taken as `.`
              help="Repository to serve (as `repo-memory --root PATH serve`; default: REPO_MEMORY_ROOT, $CLAUDE_PROJECT_DIR, "
                   "else the working directory's repository if `repo-memory init` ran there, else the first MCP root the "
                   "client names inside a git repository, else the working directory's).")
@click.pass_context
def serve(ctx: click.Context, root: str | None) -> None:
    """Run the MCP server over stdio (what Claude Code, Codex and other clients start).

    stdout carries only MCP messages; logs go to stderr. A client that starts servers in another folder:
    `repo-memory serve --root ${workspaceFolder}` (VS Code, Cursor), or REPO_MEMORY_ROOT in the server's env.
    """
    from repo_memory.shells import serve as serving

    named = root if root is not None else root_of(ctx)
    serving.run(str(named) if named is not None else None)


@click.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the .agents/ layout, the union-merge and diff rules for experience logs, and this clone's diff driver.

    Safe to run again. With `commit = "auto"` (the default) the files it writes are committed as one memory commit
    (only those: your own edits to them stay yours); otherwise init lists them to commit with your code.
    """
    store = store_of(ctx)  # refused where the sparse checkout leaves memory out: the layout would be written there
    mode = store.config.commit
    done, result = layout.set_up(store.config, store.commit_files)  # the demo's repository is set up so too
    for change in done.changes:
        click.echo(change)
    if done.files and mode == "auto":
        if result is not None and result.sha:  # a deferral is said as the command ends (cli/base.py), with its next step
            click.echo(f"committed {', '.join(done.files)} ({result.sha[:12]})")
    elif done.files:
        click.echo(f"Commit these with your code: git add {' '.join(done.files)}")
    # no git identity: said once, as the clone is set up (doctor says it after); memory commits go on, naming no one
    if done.changes and mode in ("auto", "private") and (nameless := store.git_health().nameless):
        click.echo(f"note: {nameless}. {NAME_YOURSELF}")
    click.echo("Already set up; nothing to change." if not done.changes else f"repo-memory is set up in {store.root} (commit = {mode}).")


@click.command(name="demo")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), help="Build the demo repository here instead of a temporary folder.")
@click.option("--throwaway", is_flag=True, hidden=True, help="Remove the demo repository when done (install.sh's run).")
def demo(keep: Path | None, throwaway: bool) -> None:
    """Build a throwaway repository with sample skills and drive it through a real MCP client.

    Prints every tool call and result exactly as the agent receives it, then how to attach
    repo-memory to Claude Code, Codex, Gemini CLI and other MCP clients.
    """
    import shutil

    from repo_memory.shells import demo as demo_shell  # imports the MCP SDK

    path = demo_shell.run(click.echo, keep)
    if throwaway:
        shutil.rmtree(path, ignore_errors=True)
        click.echo("The demo repository is removed now; `repo-memory demo` builds one that stays (`--keep DIR`: there).\n")
    else:
        click.echo(f"Demo repository: {path}  (look inside: `git -C {quoted(str(path))} log --stat`, `ls {quoted(f'{path}/.agents/skills')}`)\n")
    click.echo(attach.instructions())


@click.command()
@click.argument("event", type=click.Choice(sorted(hooks.HANDLERS)))
@click.pass_context
def hook(ctx: click.Context, event: str) -> None:
    """Handle a Claude Code / Codex / Gemini CLI hook EVENT: JSON on stdin, JSON on stdout; errors never block the harness.

    \b
    By hand: echo '{"session_id": "try-1", "cwd": "'"$PWD"'"}' | repo-memory hook session-start"""
    root = root_of(ctx)
    click.echo(json.dumps(hooks.handle(event, hookcalls.payload_of(sys.stdin.buffer.read()), str(root) if root else None)))


@click.group(name="setup", invoke_without_command=True)
@click.pass_context
def setup(ctx: click.Context) -> None:
    """Attach repo-memory to Claude Code, Codex or Gemini CLI (idempotent; --remove undoes it). Alone: which of them
    this machine has, and the command for each."""
    if ctx.invoked_subcommand is None:
        click.echo(harnesses.overview())


@setup.command(name="claude-code")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True,
              help="project: .mcp.json in this repository; user: `claude mcp add --scope user`.")
@click.option("--shared", is_flag=True, help="Put the hooks and the tool permission in .claude/settings.json (the whole team, "
              "to commit) instead of your own settings.local.json; running setup again without it moves them back.")
@click.option("--trust", is_flag=True, help="Also answer Claude Code's 'Do you trust the files in this folder?' for you (in "
              "~/.claude.json), so the server is Connected without opening `claude` first.")
@click.option("--hooks", "hooks_kind", type=click.Choice(["auto", "mcp", "command"]), default="auto", show_default=True,
              help="mcp: PostToolUse and Stop hooks call the running server (Claude Code 2.1.118+: no process after each "
              "tool call; the guard before file and shell calls stays one); "
              "command: a `repo-memory hook` process each time (every version). auto: mcp when the `claude` on PATH has "
              "it, except with --shared (teammates' versions are unknown).")
@click.option("--plugin", "marketplace", metavar="SOURCE",
              help="Roll repo-memory out to the team as a plugin instead: .claude/settings.json names the marketplace SOURCE "
              "(a GitHub owner/repo, a git URL, or a folder holding .claude-plugin/marketplace.json) and enables "
              "repo-memory@repo-memory; the raw registration (.mcp.json, our hooks) is taken out.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Undo: unregister the server and remove only our hooks and rules (a team file git "
              "holds with repo-memory in it stays, for your teammates).")
@click.option("--team", is_flag=True, help="With --remove: also take it out of the team files git holds (.mcp.json, "
              ".claude/settings.json); commit that to detach it for everyone.")
@click.pass_context
def setup_claude(ctx: click.Context, scope: str, shared: bool, trust: bool, hooks_kind: str, marketplace: str | None, dry_run: bool,
                 remove: bool, team: bool) -> None:
    """Register the MCP server for Claude Code, allow its tools (mcp__repo-memory, and the plugin's), install the hooks
    (session briefing, tool capture, compaction summaries, loop driver, commit at session end), and mirror skills
    into .claude/skills.

    \b
    Your settings.local.json holds this machine's paths: setup makes git ignore it (.git/info/exclude).
    """
    from repo_memory.shells import setup as attaching
    from repo_memory.shells.cli import memories

    store = store_of(ctx, memory=not remove)  # it mirrors skills
    files = (".mcp.json", ".claude/settings.json") if scope == "project" else (".claude/settings.json",)
    undo = _undo(store, files, remove, team, f"repo-memory setup claude-code{' --scope user' if scope == 'user' else ''} --remove")
    if marketplace is not None:
        from repo_memory.shells import personal, rollout

        try:
            for change in rollout.team_plugin(store.root, marketplace, remove, dry_run) + ([] if remove else personal.trust_folder(
                    store.root, Path.home(), trust, dry_run, personal.UNINSTALLED, f"repo-memory setup claude-code --plugin {quoted(marketplace)}")):
                click.echo(change)
        except attaching.SettingsError as exc:
            raise click.ClickException(str(exc)) from exc
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--plugin") from exc
        return
    asked = "command" if hooks_kind == "auto" and shared else hooks_kind
    kind, why = attaching.hook_kind(asked, attaching.claude_version() if asked == "auto" else None)
    try:
        changes = attaching.claude_code(store.root, scope, shared, dry_run, remove, trust=trust, hooks=kind,
                                        claude_dir=memories.homes().claude, undo=undo)
    except attaching.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    if not remove:
        click.echo(_hooks_line(changes, kind, '--shared: teammates may run an older Claude Code; --hooks mcp to choose'
                               if asked != hooks_kind else why))
    for change in changes + (undo.notes(store.root, changes, dry_run) if remove else []):
        click.echo(change)
    if remove:  # a dry run names the copies it would remove, as uninstall's does
        for name in mirror.unmirror(store.root, store.config.state_dir, dry_run=dry_run, git_dir=store.config.common_dir):
            click.echo(f"{'would remove' if dry_run else 'removed'} the generated mirror {mirror.TARGET}/{name}")
        if not dry_run:
            attaching.tidy(store.root)
    elif not dry_run:
        settled = settle_offers(store)  # drafts in .claude/skills (and .agents/skills) written before; then copied as settled
        report = mirror.of(store)
        click.echo(f"skills mirrored into {mirror.TARGET}: {len(report.written)} written, {len(report.unchanged)} unchanged")
        for line in settled:
            click.echo(line)
        if note := mirror.beyond_note(report, store.config.mirror_limit):
            click.echo(note)
        if note := mirror_checks.tracked_note(store.root, store.config.git_dir):
            click.echo(note)
    if not remove:
        init_note(store)
        waiting = next((status for status, said in (("⏸ Pending approval", "Pending approval"), ("- Not checked", "Not checked"))
                        if any(said in change for change in changes)), None)
        server = "plugin:repo-memory:repo-memory" if any(attaching.PLUGIN in change for change in changes) else "repo-memory"
        if any(change.startswith(attaching.NOT_ON_PATH) for change in changes):  # Claude Code cannot start it: ENOENT
            click.echo(harnesses.check("claude", f"claude mcp list   ({server}: ... ✘ Failed to connect until then)",
                                       "`repo-memory` is on your PATH (the note above)"))
        else:
            click.echo(harnesses.check("claude", f"claude mcp list   ({server}: ... " + (
                f"{waiting} until you trust the folder, then ✔ Connected)" if waiting else "✔ Connected)")))


def _hooks_line(changes: list[str], kind: str, why: str) -> str:
    """The kind of hooks setup wrote, or that it wrote none and who brings them."""
    from repo_memory.shells import setup as attaching

    if any(change.startswith(attaching.PLUGIN_NOTE) for change in changes):
        return f"hooks: none written here (the plugin {attaching.PLUGIN} brings them)"
    if any(attaching.TEAMS_LEFT in change for change in changes):
        return "hooks: none written here (the team's .claude/settings.json holds them)"
    return f"hooks: {kind} ({why})"


@setup.command(name="codex")
@click.option("--trust", is_flag=True, help="Also trust this project and exactly repo-memory's hooks in ~/.codex/config.toml, as "
              "answering Codex's 'Hooks need review' with 'Trust all and continue' would (without it, Codex runs no hook here).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Undo: remove our hooks from this repository (the server entry serves every repository "
              "and stays; a .codex/hooks.json git holds with them stays, for your teammates).")
@click.option("--global", "everywhere", is_flag=True, help="With --remove: remove the server entry from ~/.codex/config.toml too.")
@click.option("--team", is_flag=True, help="With --remove: also take them out of .codex/hooks.json when git holds it; commit that "
              "to detach it for everyone.")
@click.pass_context
def setup_codex(ctx: click.Context, trust: bool, dry_run: bool, remove: bool, everywhere: bool, team: bool) -> None:
    """Add the MCP server to ~/.codex/config.toml (one entry for every repository) and hooks to .codex/hooks.json.

    The server serves the repository each Codex session runs in. Codex reads .agents/skills natively, so no mirror
    is needed; a skill not to be served (a draft not reviewed yet, a deprecated or quarantined one) gets an
    agents/openai.yaml that keeps it out of the skills Codex offers its model (`repo-memory sync` does the same).
    """
    from repo_memory.shells import codex
    from repo_memory.shells import setup as attaching

    if everywhere and not remove:  # setup always writes the one server entry: --global only widens what --remove takes out
        raise click.UsageError("--global goes with --remove: `repo-memory setup codex --remove --global` takes out the server "
                               "entry in ~/.codex/config.toml too; `repo-memory setup codex` alone sets it up for every repository")
    store = store_of(ctx, memory=not remove)  # it settles skills
    undo = _undo(store, (".codex/hooks.json",), remove, team, "repo-memory setup codex --remove")
    try:
        changes = codex.attach_codex(store.root, Path.home(), dry_run, remove, everywhere, trust, undo=undo)
    except (codex.ConfigTomlError, attaching.SettingsError) as exc:
        raise click.ClickException(str(exc)) from exc
    for change in changes + (undo.notes(store.root, changes, dry_run) if remove else []):
        click.echo(change)
    if remove and not dry_run:
        attaching.tidy(store.root)
    if not remove:
        if not dry_run:
            for line in settle_offers(store):
                click.echo(line)
        init_note(store)
        command = attach.command()  # Codex starts the server by this path, so it is there without repo-memory on PATH
        click.echo(harnesses.check("codex", f"codex mcp list   (repo-memory  {command[0]}  {' '.join(command[1:])}  …  enabled)"))


@setup.command(name="gemini")
@click.option("--trust", is_flag=True, help="Also trust this folder for Gemini CLI (in ~/.gemini/trustedFolders.json), as "
              "choosing to trust it in Gemini's dialog would (without it, Gemini starts no server and runs no hook here).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Undo: take the server and our hooks out of .gemini/settings.json (when git holds it "
              "with them in, it stays, for your teammates).")
@click.option("--team", is_flag=True, help="With --remove: also take them out of .gemini/settings.json when git holds it; commit "
              "that to detach it for everyone.")
@click.pass_context
def setup_gemini(ctx: click.Context, trust: bool, dry_run: bool, remove: bool, team: bool) -> None:
    """Register the MCP server for Gemini CLI and install its hooks (session briefing, tool capture, the guard before
    file, shell and skill tools, commit at session end), all in .gemini/settings.json, a team file calling repo-memory
    by name. It replaces `gemini mcp add --trust repo-memory repo-memory serve`.
    """
    from repo_memory.shells import gemini, gemini_trust
    from repo_memory.shells import setup as attaching

    store = store_of(ctx, memory=not remove)
    undo = _undo(store, (gemini.FILE,), remove, team, "repo-memory setup gemini --remove")
    try:
        changes = gemini.attach_gemini(store.root, dry_run, remove, undo=undo, trust=trust, home=Path.home())
    except attaching.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    for change in changes + (undo.notes(store.root, changes, dry_run) if remove else []):
        click.echo(change)
    if remove and not dry_run:
        attaching.tidy(store.root)
    if not remove:
        init_note(store)
        here = Path.cwd().resolve() != store.root.resolve()  # Gemini CLI reads no project settings above where it starts
        if here:
            click.echo(f"note: started in {Path.cwd()}, Gemini CLI has no repo-memory. For the tools alone in any subfolder (no "
                       "briefing, records or guard: those hooks live in the project's file): `gemini mcp add --scope user "
                       "--trust repo-memory repo-memory serve` (it serves the repository of the folder gemini starts in)")
        waiting = any(change.startswith(gemini_trust.UNTRUSTED) for change in changes)
        refused = any(change.startswith(gemini_trust.REFUSED) for change in changes)
        click.echo(harnesses.check("gemini", f"{f'cd {store.root} && ' if here else ''}gemini mcp list   (" + (
            f"Error in {gemini_trust.folders_file(Path.home())} until you fix that file)" if refused else
            "○ repo-memory: repo-memory serve (stdio) - Disabled until you trust the folder, then ✓ … Connected)" if waiting
            else "✓ repo-memory: repo-memory serve (stdio) - Connected)")))


def _undo(store: Store, files: tuple[str, ...], remove: bool, team: bool, again: str) -> teamfiles.Undo:
    """What `setup … --remove` does to the team `files`: what `uninstall` does (a file git holds with repo-memory in it
    stays unless --team)."""
    if team and not remove:
        raise click.UsageError("--team goes with --remove (setup writes the team files either way)")
    return teamfiles.Undo.of(store.root, files, team, again) if remove else teamfiles.Undo()


@click.command()
@click.option("--team", is_flag=True, help="Also remove repo-memory from the files your team commits (.mcp.json, "
              ".claude/settings.json, .codex/hooks.json, .gemini/settings.json); commit that to detach it for everyone.")
@click.option("--global", "everywhere", is_flag=True, help="Also remove the entries that serve every repository (~/.codex, Claude's user scope).")
@click.option("--dry-run", is_flag=True, help="List every change, once; change nothing.")
@click.pass_context
def uninstall(ctx: click.Context, team: bool, everywhere: bool, dry_run: bool) -> None:
    """Detach repo-memory from this clone: your harness registrations, hooks and permissions, the git hooks, the
    diff driver, the .claude/skills mirror; an embedder still saving vectors for it is stopped first. Your memory (.agents/) and its history stay, and so do the files your
    team commits (your teammates keep repo-memory) unless you pass --team.

    \b
    Then remove the program itself: rm -rf <checkout>/.venv (or pipx uninstall repo-memory).
    """
    from repo_memory.core import mirror, offering
    from repo_memory.git.repo import Git
    from repo_memory.runner import triggers
    from repo_memory.shells import codex, embedder, gemini, personal, plugin
    from repo_memory.shells import setup as attaching
    from repo_memory.shells.cli import memories

    store = store_of(ctx, memory=False)  # detaching needs no memory on disk
    root, git = store.root, Git(store.root, store.config.git_dir)
    # a team file git does not hold with repo-memory in it is this clone's only: what setup writes goes from it too (exactly
    # that: an entry of the person's own stays, as git has no copy to give back)
    undo = teamfiles.Undo.of(root, teamfiles.TEAM_FILES, team, "repo-memory uninstall")
    try:  # every settings file is checked before anything is changed
        attaching.check([root / name for name in (".mcp.json", attaching.LOCAL_FILE, ".claude/settings.json", ".codex/hooks.json")])
        gemini.attach_gemini(root, True, remove=True, undo=undo)  # comments allowed, as Gemini CLI reads them; ours in one stops here
        codex.attach_codex(root, Path.home(), True, remove=True, everywhere=everywhere, undo=undo)  # parses config.toml
        changes = embedder.stop(root, dry_run)  # first: one left running writes into the git dir after the rest is gone
        changes += attaching.claude_code(root, "project", False, dry_run, remove=True, undo=undo)
        if everywhere:
            changes += attaching.claude_code(root, "user", False, dry_run, remove=True, undo=teamfiles.Undo(files=()))
            changes += plugin.uninstall_user_scope(root, memories.homes().claude, dry_run)
        changes += [c for c in codex.attach_codex(root, Path.home(), dry_run, remove=True, everywhere=everywhere, undo=undo)
                    if not c.startswith("note:")]
        changes += gemini.attach_gemini(root, dry_run, remove=True, undo=undo)
    except (codex.ConfigTomlError, attaching.SettingsError) as exc:
        raise click.ClickException(str(exc)) from exc
    changes += [f"{'would remove' if dry_run else 'removed'} the generated mirror {mirror.TARGET}/{name}"
                for name in mirror.unmirror(root, store.config.state_dir, dry_run=dry_run, git_dir=store.config.common_dir)]
    changes += [f"git hook {c}" for c in triggers.remove_git_hooks(git, dry_run=dry_run)]
    changes += layout.remove(root, store.config.common_dir, dry_run)
    shown: list[str] = []
    for change in changes:
        if "already" not in change and change not in shown:
            shown.append(change)
            click.echo(change)
    for note in undo.notes(root, shown, dry_run):
        click.echo(note)
    if not dry_run:
        attaching.tidy(root)
    if held := offering.kept_out(root, store.sources):  # nobody takes the mark away on accept without repo-memory
        click.echo(f"left as it is: {', '.join(held)} kept out of the skills Codex / Claude Code offer their models (not reviewed "
                   "or not served): `repo-memory accept NAME` or `reject NAME` before you uninstall; later, by hand: an agents/openai.yaml "
                   "repo-memory wrote says so in its comment (delete it), one of the skill's own carries a `# repo-memory:` line "
                   "saying what allow_implicit_invocation was (put that back, drop the line); in .claude/skills, drop "
                   "disable-model-invocation and metadata.withheld")
    if left := personal.left_behind(root):
        click.echo(f"left as it is: {'; '.join(left)}")
    if dry_run:
        click.echo("Dry run: nothing was changed." if shown else "Dry run: nothing to change.")
    if not dry_run:
        click.echo(_detached(Path.home(), root, memories.homes().claude, gemini.still_serving(root, Path.home())))


DETACHED = "repo-memory is detached from this clone; .agents/ (your memory) and its git history stay."


def _detached(home: Path, root: Path, claude_dir: Path, gemini: list[str] | None = None) -> str:
    """uninstall's last line: detached, unless something still serves this clone: an entry that serves every
    repository, the Claude Code plugin enabled for it, or a Gemini CLI settings file (`gemini`: gemini.still_serving)."""
    from repo_memory.shells import codex, personal, plugin

    serving = [f"{found} (or `repo-memory uninstall --global`)" if "--scope user" in found else found
               for found in plugin.serving(root, claude_dir)]
    if (config := codex.serving_entry(home)) is not None:
        serving.append(f"[mcp_servers.{codex.NAME}] in {config} (Codex; or `repo-memory setup codex --remove --global`)")
    state = personal.claude_state(home / ".claude.json")
    if state and codex.NAME in (state.get("mcpServers") or {}):
        serving.append(f"Claude Code's user-scope entry in {home / '.claude.json'} (or `repo-memory setup claude-code --scope "
                       "user --remove`)")
    said = [f"repo-memory still serves this clone through {' and '.join(serving)}: sessions here still get its tools and "
            "write .agents/ here; `repo-memory uninstall --global` removes an entry that serves every repository (the "
            "commands named remove each)."] if serving else []
    if gemini:  # with the hooks: the briefing, the records, a memory commit when a session ends
        said.append(f"Gemini CLI sessions here still start repo-memory, through {' and '.join(gemini)}.")
    if not said:
        return DETACHED
    return " ".join(said) + " The rest is gone from this clone; .agents/ (your memory) and its git history stay."
