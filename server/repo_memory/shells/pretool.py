"""The PreToolUse hook (Gemini CLI's BeforeTool): refuse an agent's file or shell tool call on what only repo-memory
writes, and Gemini's activation of a skill recall does not serve; note when a call that may change files began, so the
post-tool hook can tie every skill changed during it to a draft.

It runs before every Write/Edit/apply_patch/shell call, so it stays light: no index, no git objects, no MCP SDK.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory.config import SKILLS_DIR, Config
from repo_memory.core import agent_commits, offering, skill_changes, skill_removals
from repo_memory.errors import RepoMemoryError
from repo_memory.formats import frontmatter
from repo_memory.git import running
from repo_memory.git.pending import Journal
from repo_memory.git.repo import Git, run_at
from repo_memory.guards import authorship, reserved
from repo_memory.guards.unfolding import Ask
from repo_memory.shells import gitline, neighbours, resets

log = logging.getLogger("repo_memory")
FILE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit", "write_file", "edit_file", "replace", "apply_patch",
              "str_replace_based_edit_tool"}
SHELL_TOOLS = {"Bash", "shell", "exec_command", "local_shell", "run_shell_command"}
PATCH_FILES = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE)
CALLS_DIR = "tool-calls"
SLACK_NS = 50_000_000  # file times come from a coarser clock than time.time_ns(): a change right after the start may read earlier


def handle(payload: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    """Deny the call with the reason, or let it run (after noting when it began); never fails the harness."""
    try:
        return _handle(payload, root)
    except Exception as exc:  # the one top-level handler of this hook process: our bug never blocks a tool call
        log.warning("hook pre-tool failed (%s: %s); the call goes ahead", type(exc).__name__, str(exc)[:300])
        return {}


def _handle(payload: dict[str, Any], root: str | None) -> dict[str, Any]:
    named = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload["cwd"] else None
    try:  # the reserved places need the root and git dir only: settings that cannot be read leave the guard standing
        config = Config.load(root or named, lenient=True)
    except (RepoMemoryError, OSError) as exc:
        log.warning("hook pre-tool: %s", exc)
        return {}
    return answer(config, payload)


def answer(config: Config, payload: dict[str, Any], commit: Callable[[], object] | None = None) -> dict[str, Any]:
    """The PreToolUse answer for `payload` in the repository of `config` (a hook process's, or the running server's);
    `commit` commits all pending memory, called before a shell call that `sweeps`."""
    tool = str(payload.get("tool_name") or "")
    named = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload["cwd"] else None
    cwd = Path(named) if named else config.root
    places = reserved.Places(config.root, config.git_dir, config.key_dir or authorship.key_dir(os.environ), config.common_dir,
                             ask=asker(config.root))
    text = shell_text(payload.get("tool_input")) if tool in SHELL_TOOLS else ""
    alias = functools.cache(Git(config.root, config.git_dir).alias) if "git" in text else lambda _: ""
    resolver = resets.resolver_for(config) if "git" in text else None
    why = refusal(places, tool, payload.get("tool_input"), cwd, alias) or unserved_skill(config, tool, payload.get("tool_input")) \
        or (held_add(config, text, alias, neighbours.shell_dir(payload.get("tool_input"), cwd)) if text else "") \
        or (resets.dropped(text, alias, resolver) if resolver else "")
    why = (f"{why.rstrip('.')}. Note: {config.problem}" if why and config.problem else why).rstrip(".")
    if why and payload.get("hook_event_name") == "BeforeTool":  # Gemini CLI reads a top-level decision, not Claude's form
        return {"decision": "deny", "reason": f"repo-memory refused this {tool} call: {why}."}
    if why:  # no closing period: Codex writes "<reason>. Command: <the command>" after it
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": f"repo-memory refused this {tool} call: {why}"}}
    if resolver is not None and sweeps(text, alias, resolver):
        (commit or (lambda: commit_pending(config)))()  # memory first: the agent's `git add -A` then finds it committed
    if resolver is not None:
        resets.keep_pending(config, text, alias, resolver)
    try:
        head = agent_commits.head(Git(config.root, config.git_dir)) if tool in SHELL_TOOLS else ""
        began(config.state_dir, payload, head, skill_changes.note(named_paths(tool, payload.get("tool_input"), cwd)))
        if tool in FILE_TOOLS | SHELL_TOOLS:  # the skills on disk: a removal during the call is of one of them
            skill_removals.note(marker(config.state_dir, payload), config.root)
    except OSError as exc:
        log.warning("hook pre-tool could not note the call's start: %s", exc)
    return {}


# Git commands that take what is pending in the worktree, put it away, or throw it away (`git clean -fd`, `git checkout
# -- .`): memory committed first is tracked and clean, so none of them takes or loses it.
SWEEPING = frozenset({"commit", "add", "stash", "clean", "checkout", "restore", "switch", "reset"})
OPERATIONS = (("rebase-merge", "rebase"), ("rebase-apply", "rebase"), ("MERGE_HEAD", "merge"),
              ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"))
MEMORY = ".agents"  # what a pending record lives under
WHOLE_TREE = frozenset({"-A", "--all", "-u", "--update", ".", "./", ":/", "*"})
Alias = gitline.Alias


def _arguments(words: list[str]) -> list[str]:
    command = running.subcommand(words)
    return words[words.index(command) + 1:] if command in words else []


def sweeps(text: str, alias: Alias, resolver: resets.Resolver) -> bool:
    """Whether the shell line `text` runs one of SWEEPING (`git add -A && git commit -m x`, `git -C . clean -fd`, `git reset
    --hard @`), and no `git reset` to another commit, which would take a memory commit made first away."""
    if resets.moves_branch(text, alias, resolver):
        return False
    for call in gitline.git_calls(text, alias, scripts=True):  # a script's git line too: an early commit costs nothing
        command = running.subcommand(list(call.words))
        tree = resets.reset_of(list(call.words), resolver) if command == "read-tree" else None
        if command in SWEEPING or tree is not None and tree.commit == resolver.head():  # `read-tree -u --reset HEAD`
            return True
    return False


def _whole_tree(words: list[str], at: str = "") -> bool:
    """Whether a git command run in the folder `at` (relative to the root) stages the whole tree: `git add -A` (`.`,
    `-u`…), `git commit -a` (`-qam x`); `git add .` in src/ stages src/ only."""
    command, args = running.subcommand(words), _arguments(words)
    if command == "add":  # `-A src/`, `-u file` stage those paths only; `.`, `:/` or .agents itself as a path do not
        cut = args.index("--") if "--" in args else len(args)
        flags, paths = [w for w in args[:cut] if w[:1] == "-"], [w for w in args[:cut] if w[:1] != "-"] + args[cut + 1:]
        if any(_covers_memory(_reached(at, w)) for w in paths):
            return True
        return not paths and any(w in WHOLE_TREE or w[1:2] != "-" and set(w[1:]) & set("Au") for w in flags)
    return command == "commit" and any(w in ("-a", "--all") or w[:1] == "-" and w[1:2] != "-" and
                                       "a" in re.split(r"[mFcCt]", w[1:])[0] for w in args)


def _reached(at: str, path: str) -> str:
    """A path or pattern as a git command run in `at` reads it, from the root (`..` from src/ is `.`, `:/x` is `x`)."""
    if path.startswith(":/"):
        return path[2:] or "."
    if path.startswith(":"):  # other pathspec magic (`:!x`): as written
        return path
    return os.path.normpath(os.path.join(at, path))


def _covers_memory(path: str) -> bool:
    """Whether a root-relative path or pattern takes in memory: the whole tree (`.`, `*`, above the root) or .agents."""
    return path in WHOLE_TREE or path == ".." or path.startswith("../") or _under_memory(path)


def _folder(config: Config, folder: Path | None) -> str | None:
    """Where a git command runs, relative to the root ('' at the root or where not known; None outside the repository:
    another repository's index and files are not this session's)."""
    if folder is None:
        return ""
    try:
        rel = folder.resolve().relative_to(config.root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return None
    return "" if rel == "." else rel


def held_add(config: Config, text: str, alias: Alias, cwd: Path | None = None) -> str:
    """Why the shell line `text` may not stage the whole tree now ('' when it may): a rebase, merge or cherry-pick is
    in progress, which holds memory commits up, and memory is pending, which the agent's commit would take."""
    operation = next((name for file, name in OPERATIONS if (config.git_dir / file).exists()), "")
    pending = bool(operation) and Journal(config.state_dir).size() > 0
    calls = gitline.git_calls(text, alias, cwd) if pending else iter(())
    commands = [(list(call.words), at) for call in calls if (at := _folder(config, call.folder)) is not None]
    if any(_discards_untracked(words, at) for words, at in commands):
        return (f"a {operation} is in progress, so repo-memory cannot commit the session's pending records (.agents/) "
                f"first, and this would delete them: keep them out (`git clean -fdx -e {MEMORY}`), or finish the "
                f"{operation} first; repo-memory commits its records once it ends")
    if not any(_whole_tree(words, at) for words, at in commands):
        return ""
    return (f"a {operation} is in progress, so repo-memory cannot commit the session's pending records (.agents/) before "
            "your commit, and staging the whole tree (`git add -A`, `.`, `-u`, `commit -a`) would put them into it: add "
            f"your own files by name (`git add path/to/file`); repo-memory commits its records once the {operation} ends")


def _under_memory(path: str) -> bool:
    """Whether a path or pattern as written (`.agents`, `./.agents/`, `/.agents/experience`) is memory or in it."""
    return path.removeprefix("./").lstrip("/").split("/")[0] == MEMORY


def _discards_untracked(words: list[str], at: str = "") -> bool:
    """Whether a git command run in `at` deletes untracked files, as pending records are: `git clean -f…` (not a dry run,
    not one keeping .agents out with `-e .agents`, not one of a folder memory is not in), `git stash -u`/`-a`."""
    command, args = running.subcommand(words), _arguments(words)
    short = "".join(w[1:] for w in args if w[:1] == "-" and w[1:2] != "-")
    valued = {b for a, b in zip(args, args[1:]) if a in ("-e", "--exclude")}
    paths = [_reached(at, w) for w in args if w[:1] != "-" and w not in valued]
    if command == "clean" and not any(_covers_memory(p) for p in paths or [at or "."]):
        return False  # `cd src && git clean -fdx` cleans src/ only
    if command == "clean":
        kept = any(_under_memory(w.removeprefix("--exclude=").removeprefix("-e"))
                   for w in [*args, *(f"-e{b}" for a, b in zip(args, args[1:]) if a in ("-e", "--exclude"))])
        return "n" not in short and "--dry-run" not in args and not kept
    return command == "stash" and (bool(set(short) & set("ua")) or bool({"--include-untracked", "--all"} & set(args)))


def commit_pending(config: Config) -> None:
    """Commit all memory pending in the repository of `config`, from a hook process (which has no Store open)."""
    if not Journal(config.state_dir).size():
        return  # nothing pending
    from repo_memory.core.store import Store  # only before a sweeping git command: every other call stays light

    store = Store(config)
    try:
        store.flush("all")
    finally:
        store.close(commit=False)


def asker(root: Path) -> Ask:
    """The guard's way to ask git (a line's pager, an alias of settings its variables name): what `git ARGS` prints in a
    folder (`root` when None) with variables added, '' when it fails."""
    def ask(folder: Path | None, args: list[str], env: dict[str, str]) -> str:
        try:
            return (run_at(folder or root, *args, env=env) or b"").decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return ask


def refusal(places: reserved.Places, tool: str, tool_input: Any, cwd: Path, alias: Alias | None = None) -> str:
    """Why `tool` may not run with `tool_input` ('' when it may); `alias` tells what a git alias stands for."""
    if tool in FILE_TOOLS:  # each path by the rules of the repository it is in: a harness may reach several
        for name in named_files(tool_input):
            if why := places.path(name, cwd):
                return f"{name}: {why}"
            if why := neighbours.file_refusal(places, name, cwd):
                return why
    if tool in SHELL_TOOLS:
        text, cwd = shell_text(tool_input), neighbours.shell_dir(tool_input, cwd)
        inside = places.path(".", cwd)  # a shell already standing in a reserved folder names it with every relative path
        if inside and text.strip():
            return f"the shell's working directory is reserved; {inside}"
        return places.command(text, cwd, alias) or neighbours.shell_refusal(places, text, cwd)
    return ""


SKILL_TOOLS = {"activate_skill"}  # Gemini CLI loads a skill of .agents/skills by itself, drafts among them


def unserved_skill(config: Config, tool: str, tool_input: Any) -> str:
    """Why the skill a harness's own skill tool activates may not be followed ('' when recall serves it, or it is none
    of ours): a draft, deprecated, invalid or quarantined skill reaches no model through recall."""
    name = tool_input.get("name") if isinstance(tool_input, dict) and tool in SKILL_TOOLS else None
    if not isinstance(name, str) or not name:
        return ""
    for source in (SKILLS_DIR, *(d for d in config.skill_dirs if d != SKILLS_DIR)):
        for folder in _named(config.root / source, name):  # every folder Gemini may take it from: one unserved is enough
            why = "a SKILL.md right in the skills folder, which repo-memory reads no skill from" if folder == "." else \
                offering.withheld(config.root, source, folder)
            if why:
                return (f"skill {name} is not served by repo-memory ({why}): it is not reviewed as it stands, so do not "
                        "follow it; recall serves the reviewed skills")
    return ""


def _named(base: Path, name: str) -> list[str]:
    """The folders under `base` whose SKILL.md Gemini CLI may know as `name` (`.` for a SKILL.md right in `base`, which
    Gemini loads too and repo-memory never reads). Gemini takes the YAML `name` when it and `description` are strings
    to its YAML reader, else the last `name:` line as written (quotes, indented keys and all), and makes `:\\/<>*?"|`
    "-"; our YAML reader is not Gemini's (a date is a string to one, a Date to the other), so both readings count."""
    try:
        folders = [base, *sorted(p for p in base.iterdir() if p.is_dir())]
    except OSError:
        return []
    return [folder.name if folder != base else "." for folder in folders
            if name in {re.sub(r'[:\\/<>*?"|]', "-", n) for n in _gemini_names(folder / "SKILL.md")}]


def _gemini_names(path: Path) -> set[str]:
    try:
        fm = frontmatter.split(path.read_text(encoding="utf-8"), "").frontmatter
    except (OSError, ValueError, RepoMemoryError):
        return set()
    lines = re.findall(r"^\s*name:\s*(.*)$", fm, re.MULTILINE)
    names = {lines[-1].strip()} if lines else set()
    try:
        meta = frontmatter.load(fm, "")
        if isinstance(meta.get("name"), str):
            names.add(meta["name"])
    except RepoMemoryError:
        pass
    return names


def shell_text(tool_input: Any) -> str:
    """The line a shell tool runs (Codex may give it as a list of words)."""
    command = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
    return " ".join(str(w) for w in command) if isinstance(command, list) else str(command or "")


def named_paths(tool: str, tool_input: Any, cwd: Path) -> list[Path]:
    """The paths (resolved) a file tool's call writes or a shell line names, in any repository."""
    if tool in FILE_TOOLS:
        return [p for name in named_files(tool_input) if (p := neighbours.resolved(name, cwd)) is not None]
    if tool in SHELL_TOOLS:
        return neighbours.path_words(shell_text(tool_input), neighbours.shell_dir(tool_input, cwd))
    return []


PATH_KEYS = ("file_path", "notebook_path", "path", "filename", "target_file", "file")


def named_files(tool_input: Any) -> list[str]:
    """The files a file tool's input names: its path arguments, and the files an apply_patch envelope adds, updates or
    moves (in any string argument: Codex sends the envelope as `command` or `input`). Other strings (an edit's old and
    new text) are content, even when they mention a path."""
    names: list[str] = []
    values = tool_input.values() if isinstance(tool_input, dict) else [tool_input]
    if isinstance(tool_input, dict):
        names += [str(tool_input[k]).strip() for k in PATH_KEYS if isinstance(tool_input.get(k), str) and tool_input[k].strip()]
    for value in values:
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                names += [n.strip() for n in PATCH_FILES.findall(text)]
    return names


def marker(state_dir: Path, payload: dict[str, Any]) -> Path:
    key = json.dumps([payload.get("session_id"), payload.get("tool_use_id")], default=str)
    return state_dir / CALLS_DIR / hashlib.sha256(key.encode()).hexdigest()[:32]


def began(state_dir: Path, payload: dict[str, Any], head: str = "", skills: dict[str, str] | None = None) -> None:
    """Note that this tool call starts now, a shell call's HEAD, and the fingerprints of the skill folders it names (read
    back by `started`, `committed` and `noted`)."""
    path = marker(state_dir, payload)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(time.time_ns() - SLACK_NS), encoding="utf-8")
    if head:
        path.with_suffix(".head").write_text(head, encoding="utf-8")
    if skills:
        path.with_suffix(".skills").write_text(json.dumps(skills), encoding="utf-8")


def noted(state_dir: Path, payload: dict[str, Any]) -> dict[str, str]:
    """The fingerprints of the skill folders the call of this PostToolUse payload named, as they were before it ran
    (skill folder -> core.skill_changes.fingerprint); forgets the note."""
    path = marker(state_dir, payload).with_suffix(".skills")
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def head_before(state_dir: Path, payload: dict[str, Any]) -> str:
    """The HEAD `began` noted before the shell call of this PostToolUse payload ('' when none), leaving the note."""
    try:
        return marker(state_dir, payload).with_suffix(".head").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def committed(config: Config, payload: dict[str, Any]) -> list[str]:
    """The commits the shell call of this PostToolUse payload made itself since the HEAD `began` noted, listed as the
    agent's (core/agent_commits.py); forgets the note."""
    path = marker(config.state_dir, payload).with_suffix(".head")
    try:
        head = path.read_text(encoding="utf-8").strip()
        path.unlink()
    except OSError:
        return []
    return agent_commits.note(Git(config.root, config.git_dir), config.state_dir, head)


def started(state_dir: Path, payload: dict[str, Any]) -> int | None:
    """When the tool call of this PostToolUse payload started (ns; its PreToolUse noted it), forgetting the note; None
    when no PreToolUse saw it (an older setup, a tool the matcher leaves out)."""
    path = marker(state_dir, payload)
    try:
        value = int(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        os.unlink(path)
    except OSError:
        pass
    return value
