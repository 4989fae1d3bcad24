"""Budgets for agent writes: a runaway writer is told when to retry instead of flooding memory and git.

Two token buckets refilled evenly — calls per minute and bytes per minute — and a byte total per server (one harness
session). Counting calls alone let 40 calls of 7.8 MB each add 496 MB in 25 seconds; counting bytes bounds that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from repo_memory.errors import RateLimitError

SETTINGS = ".agents/repo-memory.toml"


class WriteLimiter:
    """`per_minute` writes and `bytes_per_minute` bytes, refilled evenly (a full bucket allows a burst of that much), and
    at most `bytes_per_session` bytes in all. 0 turns a budget off."""

    def __init__(self, per_minute: int, bytes_per_minute: int = 0, bytes_per_session: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        self.per_minute, self.bytes_per_minute, self.bytes_per_session = per_minute, bytes_per_minute, bytes_per_session
        self._clock = clock
        self._calls, self._bytes, self._spent = float(per_minute), float(bytes_per_minute), 0
        self._at = self._clock()
        self._lock = threading.Lock()

    def take(self, what: str, size: int = 0) -> None:
        """Spend one write of `size` bytes, or raise RateLimitError saying how long until it fits (nothing is spent)."""
        with self._lock:
            now = self._clock()
            elapsed, self._at = now - self._at, now
            self._calls = min(float(self.per_minute), self._calls + elapsed * self.per_minute / 60.0)
            self._bytes = min(float(self.bytes_per_minute), self._bytes + elapsed * self.bytes_per_minute / 60.0)
            if self.bytes_per_session and self._spent + size > self.bytes_per_session:
                raise RateLimitError(
                    f"Too much written: {what} refused, this session already wrote {_size(self._spent)} and the limit is "
                    f"{_size(self.bytes_per_session)} (write_bytes_per_session in {SETTINGS}). Write less: keep large "
                    "output in files of the repository and remember where it is, or checkpoint a summary.", retry_after=None)
            if self.bytes_per_minute and size > self.bytes_per_minute:
                raise RateLimitError(
                    f"Too large: {what} refused, it sends {_size(size)} and one minute allows {_size(self.bytes_per_minute)} "
                    f"(write_bytes_per_minute in {SETTINGS}). Split it, or keep it in a file and remember where it is.",
                    retry_after=None)
            waits = []
            if self.per_minute and self._calls < 1:
                waits.append(((1 - self._calls) * 60.0 / self.per_minute, f"{self.per_minute} writes per minute (writes_per_minute"))
            if self.bytes_per_minute and self._bytes < size:
                waits.append(((size - self._bytes) * 60.0 / self.bytes_per_minute,
                              f"{_size(self.bytes_per_minute)} per minute (write_bytes_per_minute"))
            if not waits:
                self._calls -= 1 if self.per_minute else 0
                self._bytes -= size if self.bytes_per_minute else 0
                self._spent += size
                return
            wait, limit = max(waits)
        raise RateLimitError(
            f"Too many memory writes: {what} refused, the limit is {limit} in {SETTINGS}). Retry after {wait:.1f} s "
            f"(retry_after_seconds={wait:.1f}). If you are writing in a loop, stop: batch notes into one remember, or "
            "checkpoint a summary.", retry_after=wait)


def _size(n: float) -> str:
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n / 1024:.0f} KiB" if n >= 1024 else f"{int(n)} bytes"
