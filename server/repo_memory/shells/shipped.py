"""Which start-up manifest the front (`shells/front.py`) may answer from: the one shipped beside this file or the one
this machine's cache keeps, whichever was generated with exactly the installed versions of repo-memory, the MCP SDK
and pydantic (`shells/manifest.py` generates both). Standard library only: it runs before the handshake is answered.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing alone costs more than the handshake's budget allows
if TYPE_CHECKING:
    from typing import Any

MANIFEST = os.path.join(os.path.dirname(__file__), "manifest.json")
DISTRIBUTIONS = ("mcp", "mcp_types", "pydantic", "pydantic_core")  # what shapes the answers besides our own code


def installed() -> dict[str, str]:
    """The installed versions of the distributions the manifest depends on, read from their dist-info folder names
    (importlib.metadata would cost more than the whole handshake)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name[: -len(".dist-info")].partition("-")
                dist = dist.lower().replace("-", "_").replace(".", "_")
                if dist in DISTRIBUTIONS and dist not in found:
                    found[dist] = version
    return found


def key() -> dict[str, str]:
    """What a manifest must have been generated with to be served: our version and the SDK's, pydantic's."""
    from repo_memory import __version__

    return {"repo_memory": __version__, **installed()}


def cache_path() -> str:
    """Where a manifest generated on this machine is kept when the shipped one was made with other versions."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "repo-memory", "manifest.json")


def load(wanted: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The manifest generated with exactly the installed versions: the shipped one, else this machine's cached one.

    None (every request waits for the SDK) when there is none, or when REPO_MEMORY_FRONT=off turns early answers off."""
    if os.environ.get("REPO_MEMORY_FRONT", "").lower() in ("0", "off", "false", "no"):
        return None
    wanted = key() if wanted is None else wanted
    for path in (MANIFEST, cache_path()):
        try:
            with open(path, encoding="utf-8") as file:
                manifest = json.load(file)
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("key") == wanted:
            return manifest
    return None
