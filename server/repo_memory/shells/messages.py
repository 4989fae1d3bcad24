"""What the front (`shells/front.py`) tells of a JSON-RPC message before the MCP SDK has loaded: whether it can be
processed at all, its id as a key, whether an `initialize` has the shape the SDK accepts, whether a request's answer
depends on its params. Standard library only, as the front."""

from __future__ import annotations

import json
import re  # json imports it already

TYPE_CHECKING = False  # typing alone costs more than the handshake's budget allows
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 64  # levels of nesting in a message: far more than any tool argument needs, far less than parsers allow
_SURROGATE = re.compile("[\ud800-\udfff]")


def unusable(value: Any, depth: int = 0) -> str:
    """Why a parsed message cannot be processed ('' when it can): too deep, or a string holding a lone surrogate. The
    front leaves such a line to the SDK's path, whose wire (shells/wire.py) refuses it with this reason."""
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, str):
        bad = _SURROGATE.search(value)  # json.loads joins surrogate pairs, so any left is alone
        return f"a string holds a lone surrogate (\\u{ord(bad.group()):04x}); send valid Unicode" if bad else ""
    if isinstance(value, dict):
        return next((why for k, v in value.items() if (why := unusable(k, depth + 1) or unusable(v, depth + 1))), "")
    if isinstance(value, list):
        return next((why for v in value if (why := unusable(v, depth + 1))), "")
    return ""


def ident_of(message: dict[str, Any]) -> str | None:
    """A request id as a dictionary key ('1' and 1 are different ids)."""
    ident = message.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        return None
    return json.dumps(ident)


def initialize_params(params: dict[str, Any]) -> bool:
    """Whether `initialize` params have the shape the SDK accepts (anything else gets the SDK's own error)."""
    info, capabilities = params.get("clientInfo"), params.get("capabilities")
    if not isinstance(capabilities, dict):
        return False
    known = ("experimental", "sampling", "elicitation", "roots", "extensions", "tasks")  # ClientCapabilities: objects or null
    if any(capabilities.get(k) is not None and not isinstance(capabilities[k], dict) for k in known):
        return False
    if any(not isinstance(v, dict) for k in ("experimental", "extensions") for v in (capabilities.get(k) or {}).values()):
        return False  # objects of objects
    return (isinstance(params.get("protocolVersion"), str)
            and isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str))


def plain(method: str, params: dict[str, Any]) -> bool:
    """A request whose answer does not depend on its params: no cursor for a list, nothing at all otherwise."""
    return not (set(params) - {"_meta"})
