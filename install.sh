#!/usr/bin/env bash
# Install repo-memory into ./.venv and show it working; with --test, install the test tools and run the suite.
#
#   ./install.sh          install, run `repo-memory demo`, print how to attach it to Claude Code, Codex, Gemini CLI and others
#   ./install.sh --test   install with test extras, fetch the MCP Inspector CLI, lint, type-check, run pytest
#
# Safe to run again: it reuses .venv and only installs what is missing or changed.
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
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install.sh: repo-memory needs Python 3.11 or newer; set PYTHON=/path/to/python3.11 and run again." >&2
  exit 1
fi
command -v git >/dev/null || { echo "install.sh: git is required (repo-memory keeps memory in a git repository)." >&2; exit 1; }

extras=""
[ "$mode" = test ] && extras="[test]"

echo "==> Python environment in .venv"
if [ ! -x .venv/bin/python ]; then
  if command -v uv >/dev/null; then uv venv --quiet --python "$python" .venv; else "$python" -m venv .venv; fi
fi
if command -v uv >/dev/null; then
  uv pip install --quiet --python .venv/bin/python -e ".$extras"
else
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".$extras" 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import repo_memory" || { echo "install.sh: installing repo-memory failed; see the pip output above." >&2; exit 1; }
fi

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
    echo "==> Node.js 20+ not found (have: ${node_major}): the MCP Inspector, Claude Code, Codex and Gemini CLI tests will be skipped, each saying why"
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
  echo "==> Tests (pytest, one worker per core: pytest-xdist)"
  exec .venv/bin/pytest -n auto "${@:2}"
fi

echo "==> Demo: a throwaway repository driven through a real MCP client"
demo=$(mktemp -d "${TMPDIR:-/tmp}/repo-memory-demo-XXXXXXXX")
trap 'rm -rf "$demo"' EXIT  # one run, one throwaway repository, gone with the run (`repo-memory demo` builds one to keep)
.venv/bin/repo-memory demo --keep "$demo" --throwaway  # it says so, and names no folder that is gone
echo
installed="$(pwd)/.venv/bin/repo-memory"
echo "repo-memory is installed at $installed"
if ! command -v repo-memory >/dev/null; then
  # .mcp.json, the hooks and every command above call `repo-memory` by name
  echo "It is not on your PATH yet, so \`repo-memory\` says \"command not found\". Link just it (not all of .venv/bin):"
  echo "  mkdir -p ~/.local/bin && ln -s \"$installed\" ~/.local/bin/"
  case ":$PATH:" in
    *":$HOME/.local/bin:"*) ;;
    *) echo "and put ~/.local/bin on your PATH: add export PATH=\"\$HOME/.local/bin:\$PATH\" to your shell's profile, then open a new shell." ;;
  esac
fi
