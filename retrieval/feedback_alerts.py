"""Votes as evidence about one alert: a 👎 on an answer given under an alert says "not this runbook
for this alert". For the same alert name, a runbook that enough more engineers voted down than up
(each engineer counted once, by their latest vote on it for that alert) goes below the other
candidates, unless a correction names it. Loading is SQL; choosing is pure."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

# How far one engineer's vote moves the odds that a runbook was wrong: votes are taken to be right
# 85% of the time (as the replay's engineers are). The odds start from the bot's confidence, capped
# at 0.99: answers above 0.95 were right 99% of the time on both eval sets, gitlab's between 0.5 and
# 0.9 about half the time. So one 👎 moves an unsure answer and it takes three for a sure one; a lone
# 👎 that counted whatever the confidence cost prometheus-operator recurrences 1.000 -> 0.940.
VOTE_RIGHT = 0.85
MOST_SURE = 0.99

# Each vote on an answer given under a named alert, with the runbook that answer led with.
_ALERT_VOTES = """
SELECT lower(a.alert->>'alertname'), a.answer->'sources'->0->>'path', f.user_id, f.vote, f.updated_at,
       a.confidence
FROM feedback f JOIN answers a ON a.id = f.answer_id
WHERE NOT a.abstained AND coalesce(a.alert->>'alertname', '') <> ''
  AND a.answer->'sources'->0->>'path' IS NOT NULL
ORDER BY f.updated_at, f.id
"""


@dataclass(frozen=True)
class AlertVote:
    """One engineer's 👍 or 👎 on an answer to an alert, and the runbook that answer led with."""

    alertname: str  # lower-cased
    path: str
    user: str
    vote: int  # +1 or -1
    at: datetime
    confidence: float  # how sure the bot was of the answer voted on


@dataclass(frozen=True)
class Demoted:
    """A runbook engineers marked wrong for an alert: how many said so, how many disagreed, and when."""

    path: str
    down: int  # engineers whose latest vote on it for this alert is 👎
    up: int  # engineers whose latest vote on it for this alert is 👍
    at: datetime  # the latest 👎


async def alert_votes(pool: AsyncConnectionPool) -> list[AlertVote]:
    """Every vote on an answer given under a named alert, oldest first."""
    async with pool.connection() as conn:
        rows = await (await conn.execute(_ALERT_VOTES)).fetchall()
    return [AlertVote(name, path, user, int(vote), at, float(conf)) for name, path, user, vote, at, conf in rows]


def demoted(votes: Sequence[AlertVote], alertname: str | None, *, kept: Collection[str] = ()) -> list[Demoted]:
    """The runbooks to put below the others for this alert: those engineers voted down more than up
    (each counted once, by their latest vote), by enough to outweigh how sure the bot was when it
    showed them (see `outvoted`), except those in `kept` (a correction names them); the most
    recently voted down first."""
    name = (alertname or "").strip().lower()
    if not name:
        return []
    latest: dict[tuple[str, str], AlertVote] = {}
    sure: dict[str, float] = {}
    for v in votes:
        if v.alertname != name:
            continue
        sure[v.path] = max(sure.get(v.path, 0.0), v.confidence)
        if (v.path, v.user) not in latest or v.at >= latest[(v.path, v.user)].at:
            latest[(v.path, v.user)] = v
    tally: dict[str, list[AlertVote]] = {}
    for v in latest.values():
        tally.setdefault(v.path, []).append(v)
    found = []
    for path, said in tally.items():
        down = [v for v in said if v.vote < 0]
        up = len(said) - len(down)
        if path not in kept and outvoted(len(down) - up, sure[path]):
            found.append(Demoted(path, len(down), up, max(v.at for v in down)))
    return sorted(found, key=lambda d: d.at, reverse=True)


def outvoted(net_down: int, confidence: float) -> bool:
    """Whether `net_down` more engineers said 👎 than 👍 on a runbook the bot showed with this
    confidence make it more likely wrong than right: one is enough when the bot was unsure (below
    0.85), two below 0.97, three above."""
    sure = min(max(confidence, 1 - MOST_SURE), MOST_SURE)
    return net_down > 0 and net_down * math.log(VOTE_RIGHT / (1 - VOTE_RIGHT)) > math.log(sure / (1 - sure))
