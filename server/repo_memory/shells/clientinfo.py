"""The name an MCP client gives itself: `clientInfo` in `initialize`, or in a modern request's envelope (its `_meta`).

The front reads every line before anything else is loaded, so it looks here for the name (standard library only, like
the front); the server hands it to the Store, which names the harness of its records and commits by it when the
environment did not (config.client_harness).
"""

from __future__ import annotations

import json
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

ENVELOPE_KEY = "io.modelcontextprotocol/clientInfo"


class ClientName:
    """The first name a client gave, and who to tell it to (`tell`), whichever comes first."""

    def __init__(self) -> None:
        self.name: str | None = None
        self._listener: Callable[[str], None] | None = None
        self._lock = threading.Lock()

    def see(self, raw: bytes, line: str) -> None:
        """Look at one line from the client for its name, until one is found (a cheap test of the bytes first)."""
        if self.name is not None or b"clientInfo" not in raw:
            return
        try:
            params = json.loads(line).get("params") or {}
            info = params.get("clientInfo") or (params.get("_meta") or {}).get(ENVELOPE_KEY) or {}
            name = info.get("name")
        except (ValueError, AttributeError, RecursionError):
            return  # not a message, or not the shape one has: the SDK answers it as it deserves
        if isinstance(name, str) and name.strip():
            with self._lock:
                self.name, listener = name, self._listener
            if listener is not None:
                listener(name)

    def tell(self, listener: Callable[[str], None]) -> None:
        """Call `listener` with the name: now if it is known, else when it comes."""
        with self._lock:
            self._listener, name = listener, self.name
        if name is not None:
            listener(name)
