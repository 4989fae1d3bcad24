#!/usr/bin/env bash
# Install repo-memory into ./.venv and show it working; with --test, install the test tools and run the suite.
#
#   ./install.sh          install, run `repo-memory demo`, print how to attach it to Claude Code, Codex, Gemini CLI and others
#   ./install.sh --test   install with test extras, fetch the MCP Inspector CLI, lint, type-check, run pytest
#
# Safe to run again: it reuses .venv and only installs what is missing or changed.
if [ -z "${BASH_VERSION:-}" ]; then  # `sh install.sh`: dash has no pipefail
  command -v bash >/dev/null && exec bash "$0" "$@"
  echo "install.sh: run it with bash (./install.sh or bash install.sh)." >&2; exit 2
fi
set -euo pipefail
cd "$(dirname "$0")"

mode=run
case "${1:-}" in
  --test) mode=test ;;
  "") ;;
  -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
  *) echo "install.sh: unknown option '$1' (use --test or nothing)" >&2; exit 2 ;;
esac

python=${PYTHON:-python3}
version() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null; }
new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
command -v git >/dev/null || { echo "install.sh: git is required (repo-memory keeps memory in a git repository)." >&2; exit 1; }

extras=""
[ "$mode" = test ] && extras="[test]"

echo "==> Python environment in .venv"
remake=""  # why the .venv an earlier run made cannot be used; it holds only what install.sh put there, so it is made anew
if [ -e .venv ] || [ -L .venv ]; then
  if ! .venv/bin/python -c '' 2>/dev/null; then
    remake="its python does not run (was the Python that made it uninstalled or upgraded?)"
  elif ! new_enough .venv/bin/python; then
    remake="its Python $(version .venv/bin/python) is older than 3.11"
  elif ! command -v uv >/dev/null && ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    remake="it has no pip (an earlier run stopped while making it?)"
  elif [ -n "${PYTHON:-}" ] && [ "$(version "$PYTHON")" != "$(version .venv/bin/python)" ]; then
    echo "    .venv keeps the Python it was made with, $(version .venv/bin/python), not PYTHON=$PYTHON ($(version "$PYTHON" || echo 'does not run'));"
    echo "    to switch: rm -rf .venv && PYTHON=$PYTHON ./install.sh"
  fi
fi
if [ -n "$remake" ] || [ ! -e .venv ]; then
  if ! new_enough "$python"; then
    [ -n "$remake" ] && echo "install.sh: .venv cannot be used: $remake." >&2
    echo "install.sh: repo-memory needs Python 3.11 or newer; set PYTHON=/path/to/python3.11 and run again." >&2
    exit 1
  fi
  [ -n "$remake" ] && echo "    .venv cannot be used: $remake; making a new .venv with $python ($(version "$python"))" && rm -rf .venv
  if command -v uv >/dev/null; then uv venv --quiet --python "$python" .venv; else "$python" -m venv .venv; fi \
    || { echo "install.sh: could not make .venv with $python (see above); fix that, then rm -rf .venv && ./install.sh" >&2; exit 1; }
fi
if command -v uv >/dev/null; then
  # uv reads UV_* settings only: a mirror set for pip (a company index) is passed on, unless one is set for uv
  [ -n "${PIP_INDEX_URL:-}" ] && [ -z "${UV_INDEX_URL:-}${UV_DEFAULT_INDEX:-}" ] && export UV_INDEX_URL=$PIP_INDEX_URL
  [ -n "${PIP_EXTRA_INDEX_URL:-}" ] && [ -z "${UV_EXTRA_INDEX_URL:-}${UV_INDEX:-}" ] && export UV_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL
  installer="uv pip install"
  installed_ok() { uv pip install --quiet --python .venv/bin/python -e ".$extras"; }
else
  installer="pip install"
  # under pipefail the pipeline fails when pip does; grep's own status (1: no line left) is not pip's
  installed_ok() { .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".$extras" 2>&1 \
                     | { grep -v "^WARNING: Location" || true; }; }
fi
echo "    installing repo-memory and its dependencies with $installer (about a minute the first time; quiet meanwhile)"
if ! installed_ok; then
  echo "install.sh: $installer could not install repo-memory into .venv; its output above says why (no network? a package" >&2
  echo "index of your own: set PIP_INDEX_URL). .venv may hold an older version still: fix that and run ./install.sh again." >&2
  exit 1
fi
# what the installed version requires, each present in a version it accepts: an old .venv cannot pass for a new install
if ! missing=$(.venv/bin/python - "${extras:+test}" <<'PY'
import importlib.metadata as md, re, sys
try:
    from packaging.requirements import Requirement
except ImportError:
    try:
        from pip._vendor.packaging.requirements import Requirement
    except ImportError:
        Requirement = None
extras, missing = {"", *sys.argv[1:]}, []
for line in md.requires("repo-memory") or []:
    if Requirement is None:  # no packaging to read markers and versions with (a uv .venv): names, and extras as spelt
        name, spec = re.match(r"[A-Za-z0-9._-]+", line).group(), None
        wanted = "extra ==" not in line or any(f'"{e}"' in line for e in extras if e)
    else:
        req = Requirement(line)
        name, spec = req.name, req.specifier
        wanted = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras)
    if not wanted:
        continue
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        missing.append(f"{name} (not installed)")
        continue
    if spec and not spec.contains(have, prereleases=True):
        missing.append(f"{name} {have} (needs {spec})")
import repo_memory  # noqa: F401,E402
print(", ".join(missing))
sys.exit(bool(missing))
PY
); then
  echo "install.sh: .venv lacks what this version of repo-memory needs: ${missing:-repo-memory itself (see above)}." >&2
  echo "Run ./install.sh again with the package index reachable, or start afresh: rm -rf .venv && ./install.sh" >&2
  exit 1
fi

# Every module's bytecode now: an editable install leaves it to the first import, and where Python may not write it
# (PYTHONDONTWRITEBYTECODE, a read-only checkout) each hook and command compiled the package again (~0.4 s a process).
.venv/bin/python -c 'import compileall, os, sys, repo_memory; sys.exit(not compileall.compile_dir(os.path.dirname(repo_memory.__file__), quiet=2, workers=0))' \
  >/dev/null 2>&1 || echo "    (could not write repo-memory's bytecode; every command compiles it as it starts, a little slower)"

if [ "$mode" = test ]; then
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if command -v npx >/dev/null && [ "$node_major" -ge 20 ]; then
    echo "==> MCP Inspector CLI and the latest Claude Code, Codex and Gemini CLIs (npm, into .tools/), used by the real-client tests"
    [ "$node_major" -lt 22 ] && echo "    (Node.js $node_major: Claude Code asks for 22 and runs on 20; the tests run it as users of Node $node_major would)"
    npx -y @modelcontextprotocol/inspector --cli --help >/dev/null 2>&1 || echo "    (could not fetch the Inspector; its test will say why)"
    # @latest each time: a package.json left in .tools/ by an earlier run would otherwise pin the version it found then
    npm install --prefix .tools --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@latest @openai/codex@latest \
      @google/gemini-cli@latest >/dev/null 2>&1 || echo "    (could not install the claude/codex/gemini CLIs; their tests will say why)"
    echo "    $(.tools/node_modules/.bin/claude --version 2>/dev/null || echo 'claude: not installed'); $(.tools/node_modules/.bin/codex --version 2>/dev/null || echo 'codex: not installed'); gemini $(.tools/node_modules/.bin/gemini --version 2>/dev/null || echo 'not installed')"
  else
    echo "==> Node.js 20+ not found ($([ "$node_major" = 0 ] && echo 'no node on PATH' || echo "node $node_major")): the MCP Inspector, Claude Code, Codex and Gemini CLI"
    echo "    tests will be skipped, each saying why. To run them, install Node.js 20+ (https://nodejs.org, or \`nvm install 22\`) and run ./install.sh --test again"
  fi
  if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "==> Chromium (Debian package), used to render the HTML report in its test"
    { apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }; } \
      || echo "    (could not install chromium; the report test will say why)"
  fi
  if ! command -v rsync >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "==> rsync (Debian package), one of the shell commands the skill-review tests run"
    { apt-get install -y -q rsync >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q rsync >/dev/null 2>&1; }; } \
      || echo "    (could not install rsync; its test case will say why)"
  fi
  echo "==> Lint (ruff: undefined names, unused imports, syntax) and type check (mypy)"
  .venv/bin/ruff check --select F,E9 server tests bench
  .venv/bin/mypy
  # Two workers a core: a quarter of a test's time is spent waiting (on git, on a server's start, on a harness CLI, on
  # a timeout it checks), so one a core left the CPU idle a quarter of the time. Their repositories go on a tmpfs when
  # there is one with room and TMPDIR does not say where temporary files go: memory commits, logs and the index fsync
  # every write, and on a disk each sync waits.
  cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
  workers=$(( cores * 2 > 16 ? 16 : cores * 2 ))
  scratch=""
  free_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }' || true)
  if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && [ "${free_kb:-0}" -gt 4000000 ]; then
    scratch=$(mktemp -d /dev/shm/suite-XXXXXXXX) && export TMPDIR=$scratch
  fi
  echo "==> Tests (pytest-xdist: $workers workers on $cores cores${scratch:+; test repositories in $scratch, a tmpfs})"
  status=0
  .venv/bin/pytest -n "$workers" "${@:2}" || status=$?
  if [ -n "$scratch" ]; then
    if [ "$status" = 0 ]; then rm -rf "$scratch"
    else echo "    the failed tests' repositories are kept in $scratch (memory: rm -rf it when done)"; fi
  fi
  exit "$status"
fi

echo "==> Demo: a throwaway repository driven through a real MCP client"
demo=$(mktemp -d "${TMPDIR:-/tmp}/repo-memory-demo-XXXXXXXX")
trap 'rm -rf "$demo"' EXIT  # one run, one throwaway repository, gone with the run (`repo-memory demo` builds one to keep)
.venv/bin/repo-memory demo --keep "$demo" --throwaway  # it says so, and names no folder that is gone
echo
installed="$(pwd)/.venv/bin/repo-memory"
echo "repo-memory is installed at $installed"
real() { .venv/bin/python -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' "$1"; }
found=$(command -v repo-memory || true)  # .mcp.json, the hooks and every command above call `repo-memory` by name
link="$HOME/.local/bin/repo-memory"
if [ -n "$found" ] && [ "$(real "$found")" = "$(real "$installed")" ]; then
  :
elif [ -n "$found" ]; then
  echo "But the \`repo-memory\` on your PATH is another one: $found$([ -L "$found" ] && echo " -> $(real "$found")")."
  if [ -L "$found" ]; then
    echo "The hooks and servers would run that one. Point it at this one:"
    echo "  ln -sf \"$installed\" \"$found\""
  else
    echo "The hooks and servers would run that one. Remove it (pipx uninstall repo-memory, or pip uninstall repo-memory, as"
    echo "it came), or link this one into a folder earlier on your PATH than $(dirname "$found"):"
    echo "  mkdir -p ~/.local/bin && ln -sf \"$installed\" ~/.local/bin/"
  fi
else
  if [ -L "$link" ] || [ -e "$link" ]; then
    echo "~/.local/bin/repo-memory is left from another install ($([ -L "$link" ] && echo "a link to $(readlink "$link"), which does not run" || echo "it does not run")),"
    echo "so \`repo-memory\` does not run this one. Replace it with a link to just this one (not all of .venv/bin):"
  else
    echo "It is not on your PATH yet, so \`repo-memory\` says \"command not found\". Link just it (not all of .venv/bin):"
  fi
  echo "  mkdir -p ~/.local/bin && ln -sf \"$installed\" ~/.local/bin/"
  case ":$PATH:" in
    *":$HOME/.local/bin:"*) ;;
    *) echo "and put ~/.local/bin on your PATH: add export PATH=\"\$HOME/.local/bin:\$PATH\" to your shell's profile, then open a new shell." ;;
  esac
fi
