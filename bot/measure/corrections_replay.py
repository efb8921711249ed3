"""Offline proof that corrections teach: alerts fire again. Round 1: each alert of half the eval set
is answered (through the real answerer, with the alert's name as its label) and simulated engineers
vote (stored as the chat adapters store votes, so a 👎 counts against that runbook for that alert);
on a 👎, each picks the right runbook from the offered choices (as many as the chat UIs offer) half
of the time, when it is among them (a correction through the real `Answerer.correct`). Round 2: the
same alerts recur with the other wording of the eval set, with their name (the alert fired again)
and without it (the question asked again in other words); the other half's alerts are the
unrelated queries, which must not get worse.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from bot.answering import Answerer
from bot.chat.corrections import CHOICES
from bot.context import IncidentContext
from bot.measure.evaluate import Query
from bot.measure.replay import alert_group, split
from bot.records.feedback import Vote, record_vote


@dataclass(frozen=True)
class CorrectionOptions:
    """How the simulated engineers behave."""

    seed: int = 7
    voters: int = 3
    vote_probability: float = 0.7
    wrong_vote_rate: float = 0.15  # a 👍 where 👎 was due, or the reverse
    pick_rate: float = 0.5  # a 👎 picks the right runbook when offered, this often
    choices: int = CHOICES  # runbooks a 👎 offers: as many as the chat UIs show


def alert_name(query_id: str) -> str:
    """The alert's name: the group without its number (`KubePodCrashLooping-3` -> KubePodCrashLooping)."""
    return re.sub(r"-\d+$", "", alert_group(query_id))


def _pairs(queries: list[Query]) -> list[tuple[Query, Query]]:
    """(first firing, recurrence) per alert with both wordings: the alert text, then the description."""
    by_group: dict[str, dict[str, Query]] = defaultdict(dict)
    for q in queries:
        by_group[alert_group(q.id)][q.variant or ""] = q
    return [(v["alert"], v["desc"]) for v in by_group.values() if "alert" in v and "desc" in v]


def _context(q: Query, *, named: bool, channel: str) -> IncidentContext:
    alert = {"alertname": alert_name(q.id)} if named else {}
    return IncidentContext(alert=alert, entry_point="replay", channel=channel, user="replay")


async def _right(answerer: Answerer, q: Query, context: IncidentContext) -> bool:
    answer = await answerer.answer(q.text, context)
    return bool(answer.sources) and not answer.abstained and answer.sources[0].path in q.relevant


async def _recall(answerer: Answerer, asked: list[tuple[Query, IncidentContext]]) -> float:
    hits = [await _right(answerer, q, c) for q, c in asked]
    return round(sum(hits) / max(len(hits), 1), 4)


async def _first_round(answerer: Answerer, firsts: list[Query], options: CorrectionOptions) -> dict[str, int]:
    """Answer each first firing; engineers vote and, on a 👎, may pick the right runbook."""
    rng = random.Random(options.seed)
    counts = {"answers": 0, "upvotes": 0, "downvotes": 0, "offered": 0, "corrections": 0}
    for q in firsts:
        context = _context(q, named=True, channel="C0ROUND1")
        answer = await answerer.answer(q.text, context)
        counts["answers"] += 1
        shown = answer.sources[0].path if answer.sources and not answer.abstained else None
        right = shown in q.relevant
        offered = [p for p, _ in await answerer.alternatives(q.text, context, shown=shown, n=options.choices)]
        wanted = next((p for p in offered if p in q.relevant), None)
        counts["offered"] += wanted is not None
        for voter in range(options.voters):
            if rng.random() > options.vote_probability:
                continue
            down = (not right) != (rng.random() < options.wrong_vote_rate)
            await _vote(answerer, answer.answer_id, f"engineer-{voter}", -1 if down else 1)
            counts["downvotes" if down else "upvotes"] += 1
            if not down:
                continue
            if wanted is not None and rng.random() < options.pick_rate:
                await answerer.correct(wanted, q.text, context, platform="replay", user_id=f"engineer-{voter}",
                                       answer_id=answer.answer_id)
                counts["corrections"] += 1
    return counts


async def _vote(answerer: Answerer, answer_id: int | None, user: str, vote: int) -> None:
    """The vote, stored as a chat adapter stores it (so that it counts for the alert)."""
    if answer_id is None:
        return
    await record_vote(answerer.pool, Vote(platform="replay", channel="C0ROUND1", message_ts=str(answer_id),
                                          user_id=user, answer_id=answer_id, vote=vote))
    answerer.feedback_changed()


async def replay_corrections(answerer: Answerer, queries: list[Query],
                             options: CorrectionOptions | None = None) -> dict[str, Any]:
    """Recall@1 of whole answers on recurrences (with and without the alert's name) and on unrelated
    alerts, before and after one round of votes and corrections."""
    options = options or CorrectionOptions()
    train, held_out = split(queries)
    pairs = _pairs(train)
    named = [(again, _context(again, named=True, channel="C0ROUND2")) for _, again in pairs]
    worded = [(again, _context(again, named=False, channel="C0ROUND2")) for _, again in pairs]
    unrelated = [(q, _context(q, named=q.variant == "alert", channel="C0OTHER")) for q in held_out]
    before = {"recurrences": await _recall(answerer, named), "reworded": await _recall(answerer, worded),
              "unrelated": await _recall(answerer, unrelated)}
    counts = await _first_round(answerer, [first for first, _ in pairs], options)
    after = {"recurrences": await _recall(answerer, named), "reworded": await _recall(answerer, worded),
             "unrelated": await _recall(answerer, unrelated)}
    return {"before": before, "after": after, "alerts": len(pairs), "unrelated_queries": len(unrelated),
            "round1": counts, "options": vars(options)}


def averaged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One replay's figures as they are, or several replays' means (with the runs themselves)."""
    if len(runs) == 1:
        return runs[0]

    def mean(key: str) -> dict[str, float]:
        return {name: round(sum(r[key][name] for r in runs) / len(runs), 4) for name in runs[0][key]}

    return {**runs[0], "before": mean("before"), "after": mean("after"), "round1": mean("round1"), "runs": runs}
