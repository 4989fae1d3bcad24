"""What doctor says of attribute lines that give repo-memory's drivers to files that are no memory.

`repo-memory init` registers a diff driver and a merge driver in the clone's .git/config, for the files its own
.gitattributes rules name. Any other line can name the same drivers for any file: a committed `* diff=repo-memory` had
`git show` print the renderer's notes instead of a build script. The renderer now passes such files through, but the
line is no rule of repo-memory's: someone wrote it, and doctor names it with the file it is in.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from repo_memory import layout
from repo_memory.git import attributes as attrs, skill_merge

# attribute -> (repo-memory's value, the driver in words, what its own rule gives it to, that rule)
DRIVERS = {"diff": ("repo-memory", "diff driver (`diff=repo-memory`)", "experience log", layout.DIFF_LINE),
           "merge": (skill_merge.NAME, f"skill merge driver (`merge={skill_merge.NAME}`)", "skill's SKILL.md",
                     skill_merge.LINE)}
DOES = {"diff": "git shows what repo-memory's renderer prints for them in `git diff`, `log -p` and `show` (a file "
                "that holds no record passes through unchanged)",
        "merge": "git merges them with repo-memory's skill merge (git's own merge, then a check meant for SKILL.md "
                 "files)"}
SAMPLED = 200  # files asked which line decides: one per folder and file type, which is where patterns differ


def foreign(root: Path, git_dir: Path) -> list[tuple[str, str, str]]:
    """(file, what is wrong, what to do) for each attributes line that gives repo-memory's diff or merge driver to files
    its own rules do not give it to, found among the files git tracks by what git applies (macros and all)."""
    applied = attrs.tracked(root, list(DRIVERS))
    wrong = [(path, name) for path, given in applied.items() for name, (value, *_) in DRIVERS.items()
             if given.get(name) == value]
    if not wrong:
        return []
    ours = attrs.ruled([rule for *_, rule in DRIVERS.values()], sorted({path for path, _ in wrong}))
    wrong = [(path, name) for path, name in wrong if ours.get(path, {}).get(name) != DRIVERS[name][0]]
    sample: dict[tuple[str, str, str], tuple[str, str]] = {}
    for path, name in wrong:
        if len(sample) < SAMPLED:
            sample.setdefault((name, str(PurePosixPath(path).parent), PurePosixPath(path).suffix), (path, name))
    paths = sorted({path for path, _ in sample.values()})
    files = _ranked(root, git_dir, paths)
    decided = attrs.deciding(root, git_dir, [(folder, lines) for _, folder, lines in files], paths, list(DRIVERS))
    found: dict[tuple[str, int, str, str], list[str]] = {}
    for path, name in sample.values():
        at = next(((shown, n + 1, lines[n]) for (shown, _, lines), d in zip(files, decided)
                   if (n := d.get(path, {}).get(name, -1)) >= 0), ("", 0, ""))
        found.setdefault((*at, name), []).append(path)
    counts = {name: sum(1 for _, n in wrong if n == name) for name in DRIVERS}
    return [_said(file, line, text, name, listed, counts[name]) for (file, line, text, name), listed in found.items()]


def _said(file: str, line: int, text: str, name: str, paths: list[str], total: int) -> tuple[str, str, str]:
    _, driver, what, rule = DRIVERS[name]
    paths = sorted(paths, key=lambda p: (p.startswith(".agents/"), p))  # code first: it is what the line hides
    such = ", ".join(paths[:5]) + (" …" if len(paths) > 5 else "")
    if not line:
        return (".gitattributes", f"git gives repo-memory's {driver} to {total} file(s) that are no {what} "
                f"({such}), and no line of .git/info/attributes or of a .gitattributes says so: a global attributes "
                f"file or a macro does; {DOES[name]}", f"Find the line (`git check-attr -a -- {paths[0]}`, `git config "
                f"core.attributesFile`) and take it out: repo-memory's own rule is `{rule}`.")
    here = "this clone's own: nothing to commit" if file.endswith("info/attributes") else "and commit that"
    meanwhile = (" Until then `git log -p --no-textconv` shows every file's bytes whatever the line says."
                 if name == "diff" else "")
    return (file, f"line {line} of {file}, `{text}`, gives repo-memory's {driver} to files that are no {what}, such "
            f"as {such} ({total:,} tracked file(s) in all get this driver from lines not repo-memory's): no rule of "
            f"repo-memory's does (someone wrote it); {DOES[name]}",
            f"Take that line out of {file}, or narrow its pattern to what repo-memory's own rule `{rule}` covers "
            f"({here}).{meanwhile}")


def _ranked(root: Path, git_dir: Path, paths: list[str]) -> list[tuple[str, str, dict[int, str]]]:
    """The attributes files that apply to `paths`, as git ranks them, highest first: .git/info/attributes, then each
    folder's .gitattributes, deepest first; each as shown, the folder its patterns are relative to, and its lines."""
    folders = {"/".join(path.split("/")[:k]) for path in paths for k in range(path.count("/") + 1)}
    files = [(git_dir / "info" / "attributes", "")] + [(root / folder / ".gitattributes", folder) for folder in
                                                       sorted(folders, key=lambda f: (-f.count("/") - bool(f), f))]
    return [(_shown(root, file), folder, dict(enumerate(file.read_text(encoding="utf-8", errors="replace")
                                                        .splitlines()))) for file, folder in files if file.is_file()]


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
