"""A token bucket for agent writes: a runaway writer is told when to retry instead of flooding memory and git."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from repo_memory.errors import RateLimitError


class WriteLimiter:
    """`per_minute` writes, refilled evenly; a full bucket allows a burst of that many. 0 means no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self._clock = clock
        self._tokens = float(per_minute)
        self._at = self._clock()
        self._lock = threading.Lock()

    def take(self, what: str) -> None:
        """Spend one write, or raise RateLimitError saying how long until one is available."""
        if self.per_minute <= 0:
            return
        rate = self.per_minute / 60.0
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.per_minute), self._tokens + (now - self._at) * rate)
            self._at = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            wait = (1 - self._tokens) / rate
        raise RateLimitError(
            f"Too many memory writes: {what} refused, the limit is {self.per_minute} per minute (writes_per_minute in "
            f".agents/repo-memory.toml). Retry after {wait:.1f} s (retry_after_seconds={wait:.1f}). If you are writing in "
            "a loop, stop: batch notes into one remember, or checkpoint a summary.",
            retry_after=wait,
        )
