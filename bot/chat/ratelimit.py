"""Per-user and per-channel rate limits for chat entry points (platform-neutral, in memory).

Sliding windows: at most `per_user` questions per user and `per_channel` per channel within
`window_s` seconds. Limits are per replica; they protect the model budget and the channel, not
a security boundary.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Decision:
    """Whether a question may go ahead; if not, which limit and when to retry."""

    allowed: bool
    scope: str | None = None  # "user" or "channel" when refused
    retry_after_s: float = 0.0


@dataclass
class RateLimiter:
    """Sliding-window counters keyed by user and by channel (0 disables a limit)."""

    per_user: int = 10
    per_channel: int = 30
    window_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _seen: dict[tuple[str, str], deque[float]] = field(default_factory=dict, repr=False)

    def check(self, user: str | None, channel: str | None) -> Decision:
        """Count the question against both limits if both allow it; otherwise refuse it uncounted."""
        now = self.clock()
        keys = [(scope, key, limit) for scope, key, limit in
                (("user", user, self.per_user), ("channel", channel, self.per_channel)) if key and limit > 0]
        for scope, key, limit in keys:
            window = self._window((scope, key), now)
            if len(window) >= limit:
                return Decision(False, scope, round(window[0] + self.window_s - now, 1))
        for scope, key, _ in keys:
            self._seen.setdefault((scope, key), deque()).append(now)
        return Decision(True)

    def _window(self, key: tuple[str, str], now: float) -> deque[float]:
        window = self._seen.get(key)
        if window is None:
            return deque()
        while window and window[0] <= now - self.window_s:
            window.popleft()
        if not window:
            del self._seen[key]  # keep the map small: idle keys go away
        return window
