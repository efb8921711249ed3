"""Corrections from a chat, whatever the platform: after a 👎, the runbooks to offer as choices; a
choice, a typed link or path, or `fix <path or link>` in the thread, made into a correction on the
answer (with the question and alert it was given under). No chat SDK is imported here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot import messages
from bot.answering import Answerer
from bot.context import IncidentContext
from bot.records.answers import AnsweredIn, answered_in

NONE_OF_THESE = "none"
CHOICES = 15  # runbooks a 👎 offers: the first few shown at once, the rest in a menu
SHOWN_FIRST = 5  # as buttons (Slack, after a reaction), options (the Slack modal) or a list (Teams)
_FIX = re.compile(r"^\s*fix\s+(?P<target>\S.*)$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Offer:
    """The runbooks a 👎 on an answer offers, as (path, title), the one it led with left out."""

    answer_id: int
    choices: list[tuple[str, str]]

    @property
    def first(self) -> list[tuple[str, str]]:
        """The closest ones, shown at once."""
        return self.choices[:SHOWN_FIRST]

    @property
    def more(self) -> list[tuple[str, str]]:
        """The next ones, in a menu."""
        return self.choices[SHOWN_FIRST:]


def fix_target(text: str) -> str | None:
    """The path or link of a `fix <path or link>` message or command, else None."""
    found = _FIX.match(text or "")
    return found["target"].strip().strip("<>").split("|", 1)[0] if found else None


async def offer(answerer: Answerer, answer_id: int, *, platform: str, user: str | None,
                n: int = CHOICES) -> Offer | None:
    """The choices to offer after a 👎 on a stored answer (None when the answer is gone)."""
    asked = await answered_in(answerer.pool, answer_id)
    if asked is None:
        return None
    context = _context(asked, platform, user)
    return Offer(answer_id, await answerer.alternatives(asked.question, context, shown=asked.shown, n=n))


def _context(asked: AnsweredIn, platform: str, user: str | None) -> IncidentContext:
    """The stored answer's alert and channel, as the engineer acting on it now sees them."""
    return IncidentContext(alert=asked.alert, entry_point=platform, channel=asked.channel, user=user)


async def correct(answerer: Answerer, answer_id: int, given: str, *, platform: str, user: str,
                  user_name: str | None = None) -> str:
    """Make `given` (a chosen path, a typed link or path, or "none") a correction of the answer; what
    to tell the engineer."""
    given = (given or "").strip()
    if not given or given == NONE_OF_THESE:
        return messages.CORRECTION_NONE
    asked = await answered_in(answerer.pool, answer_id)
    if asked is None:
        return messages.CORRECTION_ANSWER_GONE
    path = await answerer.correct(given, asked.question, _context(asked, platform, user), platform=platform, user_id=user,
                                  user_name=user_name, answer_id=answer_id)
    if path is None:
        return messages.CORRECTION_UNKNOWN.format(given=given[:200])
    where = f"alert {asked.alert['alertname']}" if asked.alert.get("alertname") else "this question"
    return messages.CORRECTION_SAVED.format(path=path, where=where)
