"""Configuration: read once at the edge (flag > REPO_MEMORY_* env > .agents/repo-memory.toml > default)."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repo_memory.git import repo as gitrepo
from repo_memory.errors import ConfigError, Problem
from repo_memory.formats import nesting
from repo_memory.formats.schema import schema, validate
from repo_memory.guards import authorship

MEMORY_DIR = ".agents"
SKILLS_DIR = ".agents/skills"
CONFIG_FILE = ".agents/repo-memory.toml"
DEFAULT_SKILL_DIRS = (".claude/skills", ".codex/skills")
log = logging.getLogger("repo_memory")


@dataclass(frozen=True)
class Config:
    """Where the memory lives and how the server behaves; built by `Config.load`."""

    root: Path
    git_dir: Path  # this checkout's (a linked worktree's own): its HEAD and index
    common_dir: Path  # the repository's, shared by its worktrees: refs, config, info/ (the same as git_dir outside worktrees)
    review: str = "required"
    commit: str = "auto"
    recall_limit: int = 8
    skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS
    harness: str = "unknown"
    harness_chosen: bool = False  # REPO_MEMORY_HARNESS named it; else a client's own name (clientInfo) outranks the guess
    session: str | None = None
    inline_max: int = 64 * 1024
    tool_output_blobs: bool = True  # the whole output of a tool call a hook records, when its record cuts it (shells/tool_records.py)
    sign: str = "auto"
    author_name: str | None = None
    author_email: str | None = None
    author_fallback: bool = True  # `author` from the config file (no REPO_MEMORY_AUTHOR): only where git knows no one
    commit_window: float = 2.0
    writes_per_minute: int = 120
    write_bytes_per_minute: int = 8 * 1024 * 1024
    write_bytes_per_session: int = 64 * 1024 * 1024
    decay_half_life_days: float = 90.0
    mirror_limit: int = 40  # skills copied into .claude/skills at most (core/mirror.py)
    semantic: bool = True
    key_dir: Path | None = None  # where this user's per-clone keys live (guards/authorship.py); None: the default place
    extra: Mapping[str, Any] = field(default_factory=dict)
    problem: str = ""  # why the settings could not be read (`load(lenient=True)`), and what stands in for them

    @property
    def state_dir(self) -> Path:
        """This checkout's derived state (index, pending commits, locks); never committed."""
        return self.git_dir / "repo-memory"

    @property
    def clone_dir(self) -> Path:
        """What is one for every worktree of the clone: its id and key, where each session got to, accepted loops."""
        return self.common_dir / "repo-memory"

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.sqlite"

    @property
    def skills_dir(self) -> Path:
        return self.root / SKILLS_DIR

    @classmethod
    def load(
        cls,
        root: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        lenient: bool = False,
    ) -> Config:
        """Find the workspace and merge defaults, the config file, the environment and `overrides`. `lenient` (the hooks:
        a typo must not turn the guard off nor lose a record): settings that cannot be read give way to those HEAD
        commits, else the defaults, and `problem` says so, instead of a ConfigError."""
        env = os.environ if env is None else env
        start = Path(root or env.get("REPO_MEMORY_ROOT") or env.get("CLAUDE_PROJECT_DIR") or os.getcwd())
        top, git_dir, common_dir = gitrepo.discover(start)
        try:
            values, problem = _settings(top, env, overrides), ""
        except ConfigError as exc:
            if not lenient:
                raise
            values, problem = _fallback(top, env), f"{exc} Until then the settings HEAD commits (else the defaults) stand in."
            log.warning("%s", problem)
        known = {"review", "commit", "recall_limit", "skill_dirs", "inline_max_bytes", "sign", "author", "commit_window_seconds",
                 "writes_per_minute", "write_bytes_per_minute", "write_bytes_per_session", "decay_half_life_days", "semantic",
                 "mirror_limit", "tool_output_blobs"}
        author = values.get("author", {})
        return cls(
            root=top,
            git_dir=git_dir,
            common_dir=common_dir,
            review=values.get("review", "required"),
            commit=values.get("commit", "auto"),
            recall_limit=values.get("recall_limit", 8),
            skill_dirs=tuple(values.get("skill_dirs", DEFAULT_SKILL_DIRS)),
            harness=_harness(env),
            harness_chosen=bool(env.get("REPO_MEMORY_HARNESS")),
            # Claude Code gives its MCP servers the session id its hooks receive, so tools and hooks write one log.
            session=env.get("REPO_MEMORY_SESSION") or env.get("CLAUDE_CODE_SESSION_ID") or env.get("CLAUDE_SESSION_ID") or None,
            inline_max=values.get("inline_max_bytes", 64 * 1024),
            tool_output_blobs=bool(values.get("tool_output_blobs", True)),
            sign=values.get("sign", "auto"),
            author_name=author.get("name"),
            author_email=author.get("email"),
            author_fallback=not (env.get("REPO_MEMORY_AUTHOR", "").strip() or (overrides or {}).get("author")),
            commit_window=float(values.get("commit_window_seconds", 2.0)),
            writes_per_minute=values.get("writes_per_minute", 120),
            write_bytes_per_minute=values.get("write_bytes_per_minute", 8 * 1024 * 1024),
            write_bytes_per_session=values.get("write_bytes_per_session", 64 * 1024 * 1024),
            decay_half_life_days=float(values.get("decay_half_life_days", 90)),
            mirror_limit=int(values.get("mirror_limit", 40)),
            semantic=bool(values.get("semantic", True)),
            key_dir=authorship.key_dir(env),
            extra={k: v for k, v in values.items() if k not in known},
            problem=problem,
        )


def _settings(top: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The config file's settings, then the environment's, then `overrides`; a ConfigError when any cannot be read."""
    values: dict[str, Any] = dict(_read_file(top / CONFIG_FILE))
    if values.get("review") == "optional" and _committed(top).get("review") != "optional":
        # Loosening review lets an agent's next skill be active unseen, and an agent's file tools can write this
        # file: the looser setting counts once a person committed it (a tighter one counts at once).
        values["review"] = "required"
        log.warning("review = \"optional\" in %s is not committed, so skills agents write stay drafts; commit the file "
                    "to make it count", CONFIG_FILE)
    _personal_signing(top, values)
    values.update(_from_env(env))
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    problems = validate("config", values)
    if problems:
        raise ConfigError(
            f"{CONFIG_FILE} (or a REPO_MEMORY_* variable) is invalid: "
            + "; ".join(str(p) for p in problems)
            + ". See schemas/config.schema.json for the allowed keys."
        )
    return values


def _fallback(top: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """What stands in for settings that cannot be read: the config file as HEAD holds it when valid, with the
    REPO_MEMORY_* variables when they can be read."""
    values = _committed(top)
    values = {} if validate("config", values) else values
    _personal_signing(top, values)
    try:
        values.update(_from_env(env))
    except ConfigError:
        pass
    return values


def _personal_signing(top: Path, values: dict[str, Any]) -> None:
    """Drop a `sign = "never"` the file says: a file anyone who commits can write (an agent's file tools too) does not
    turn off the person's commit.gpgSign. They turn it off for memory themselves, with `git config repo-memory.sign
    never` (read at commit time, git/commit.py) or REPO_MEMORY_SIGN=never (read after the file). Said when it matters:
    this clone signs its commits and the person has not turned signing off for memory."""
    if values.get("sign") != "never":
        return
    del values["sign"]
    said = gitrepo.run_at(top, "config", "--get-regexp", r"^(commit\.gpgsign|repo-memory\.sign)$", ok=(0, 1)) or b""
    settings = dict(line.split(" ", 1) for line in said.decode(errors="replace").lower().splitlines() if " " in line)
    if settings.get("commit.gpgsign") == "true" and settings.get("repo-memory.sign") != "never":
        log.warning('sign = "never" in %s is not followed: memory commits are signed as your commit.gpgSign says. To commit '
                    "memory unsigned, say so for yourself: `git config repo-memory.sign never` (or REPO_MEMORY_SIGN=never)",
                    CONFIG_FILE)


def _read_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return nesting.toml(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # TOMLDecodeError, UnicodeDecodeError, TooDeep
        raise ConfigError(f"{CONFIG_FILE} is not valid TOML: {exc}. Fix the file or delete it to use defaults.") from exc


def _committed(top: Path) -> dict[str, Any]:
    """The config file as HEAD holds it ({} when it holds none, or none that is TOML)."""
    data = gitrepo.run_at(top, "show", f"HEAD:{CONFIG_FILE}")
    if data is None:
        return {}
    try:
        return nesting.toml(data.decode("utf-8", errors="replace"))
    except ValueError:  # TOMLDecodeError, TooDeep
        return {}


_BOOLS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """The REPO_MEMORY_<KEY> variables, one for each key of the file, read as that key's type (the schema checks the
    values after): a number, true/false, a comma-separated list (skill_dirs), a JSON object (author), or text."""
    out: dict[str, Any] = {}
    for key, spec in schema("config")["properties"].items():
        name = f"REPO_MEMORY_{key.upper()}"
        value = env.get(name, "").strip()
        if not value:
            continue
        kind = spec.get("type")
        try:
            if kind == "boolean":
                out[key] = _BOOLS[value.lower()]
            elif kind in ("integer", "number"):
                out[key] = int(value) if kind == "integer" else float(value)
            elif kind == "array":
                out[key] = [part.strip() for part in value.split(",") if part.strip()]
            elif kind == "object":
                out[key] = json.loads(value)
            else:
                out[key] = value
        except (KeyError, ValueError):
            want = {"boolean": "true or false", "integer": "a whole number", "number": "a number", "object": "a JSON object"}[str(kind)]
            raise ConfigError(f"{name} must be {want}, not {value[:40]!r}.") from None
        if problems := validate("config", {key: out[key]}):
            raise ConfigError(f"{name}={value[:40]!r} is invalid: " + "; ".join(str(p) for p in problems) + ".")
    return out


def _harness(env: Mapping[str, str]) -> str:
    """Name the harness that started us, from the variables each one sets."""
    if env.get("REPO_MEMORY_HARNESS"):
        return env["REPO_MEMORY_HARNESS"]
    if env.get("GEMINI_PROJECT_DIR") or env.get("GEMINI_SESSION_ID"):  # first: Gemini CLI sets Claude's too, "for compatibility"
        return "gemini-cli"
    if env.get("CLAUDECODE") or env.get("CLAUDE_PROJECT_DIR"):
        return "claude-code"
    if any(k.startswith("CODEX_") for k in env):
        return "codex"
    return "unknown"


# What MCP clients call themselves in `initialize` (clientInfo.name), as the harness names records use.
CLIENTS = {"claude-code": "claude-code", "codex-mcp-client": "codex", "cursor-vscode": "cursor", "visual-studio-code": "vscode",
           "gemini-cli-mcp-client": "gemini-cli", "windsurf-client": "windsurf", "github-copilot-developer": "copilot-cli"}


def client_harness(name: str) -> str:
    """The harness a client's own name (MCP clientInfo) stands for: a known product's short name, else the name as a
    lowercase slug ("My Agent/2" is my-agent-2), or "unknown" when nothing of it is usable. Records and commits said
    "unknown" for every client but Claude Code and Codex, which the environment names (`_harness`)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-.")[:40].strip("-.")
    return CLIENTS.get(slug, slug) or "unknown"


__all__ = ["CONFIG_FILE", "Config", "Problem"]
