"""The memory layout in a user's repository, created idempotently by `repo-memory init`."""

from __future__ import annotations

from pathlib import Path

from repo_memory.git.repo import Git
from repo_memory.guards import disk

FOLDERS = (".agents/skills", ".agents/loops", ".agents/experience")
UNION_LINE = ".agents/experience/** merge=union"
DIFF_LINE = ".agents/experience/**/*.jsonl diff=repo-memory"
README = """\
# .agents — this repository's memory (repo-memory)

- `skills/<name>/SKILL.md` — reusable procedures (Agent Skills format). Edit them like any file.
- `loops/<name>.md` — loop specifications the server can run.
- `experience/` — append-only session logs; summaries cite records by id.

Inspect every change with `git log -p .agents/`. Search with `repo-memory search "..."`.
"""


def init(root: Path, textconv: list[str] | None = None) -> list[str]:
    """Create missing folders, the union-merge and diff rules and a short README; return what changed.

    With `textconv` (the command that renders a log), the local git config gets the diff driver too.
    """
    changes: list[str] = []
    for folder in FOLDERS:
        path = root / folder
        if not path.is_dir():
            path.mkdir(parents=True)
            keep = path / ".gitkeep"
            keep.touch()
            changes.append(f"created {folder}/")
    readme = root / ".agents" / "README.md"
    if not readme.exists():
        disk.write_atomic(readme, README.encode())
        changes.append("created .agents/README.md")
    attributes = root / ".gitattributes"
    current = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    missing = [line for line in (UNION_LINE, DIFF_LINE) if line not in current.splitlines()]
    if missing:
        prefix = current if not current or current.endswith("\n") else current + "\n"
        disk.write_atomic(attributes, (prefix + "".join(f"{line}\n" for line in missing)).encode())
        changes += [f"added '{line}' to .gitattributes" for line in missing]
    if textconv:
        command = " ".join(textconv)
        git = Git(root, root / ".git")
        if git.config("diff.repo-memory.textconv") != command:
            git.set_config("diff.repo-memory.textconv", command)
            changes.append(f"set git config diff.repo-memory.textconv = {command} (git diff/log -p/show render experience records)")
    return changes


def initialised(root: Path) -> bool:
    """True when init has run here (the union-merge rule is in place)."""
    attributes = root / ".gitattributes"
    return attributes.exists() and UNION_LINE in attributes.read_text(encoding="utf-8").splitlines()
