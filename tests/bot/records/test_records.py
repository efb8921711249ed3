"""Feedback capture and the chat bookkeeping tables against a real Postgres."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from bot.records import events
from bot.records.feedback import Vote, add_comment, feedback_rows, record_vote, undo_vote
from bot.answer import answer_citing
from bot.records.answers import record_answer


async def _answer(pool, cited=(3, 1), retrieved=(1, 2, 3, 4)) -> int:  # type: ignore[no-untyped-def]
    answer = answer_citing("disk full on /var", cited, retrieved=retrieved, summary="...", confidence=0.7)
    return await record_answer(pool, answer, entry_point="slack", channel="C1", user_id="U1")


async def test_a_vote_copies_the_question_and_cited_and_uncited_chunks(pool) -> None:  # type: ignore[no-untyped-def]
    answer_id = await _answer(pool)
    row_id = await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, 1))
    [row] = await feedback_rows(pool)
    assert row["id"] == row_id and row["question"] == "disk full on /var"
    assert row["cited_chunk_ids"] == [3, 1] and row["uncited_chunk_ids"] == [2, 4]
    assert (row["vote"], row["via"], row["user_id"], row["comment"]) == (1, "button", "U2", None)


async def test_one_row_per_user_and_message(pool) -> None:  # type: ignore[no-untyped-def]
    answer_id = await _answer(pool)
    first = await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, 1))
    again = await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, 1, "reaction"))
    await asyncio.gather(*[record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, -1)) for _ in range(5)])
    other_message = await record_vote(pool, Vote("slack", "C1", "333.444", "U2", answer_id, 1))
    rows = await feedback_rows(pool, answer_id)
    assert first == again and other_message != first and len(rows) == 2
    assert [r["vote"] for r in rows] == [-1, 1]
    with pytest.raises(psycopg.errors.UniqueViolation):
        async with pool.connection() as conn:
            await conn.execute(
                "INSERT INTO feedback (platform, channel, message_ts, user_id, answer_id, question, vote, via)"
                " VALUES ('slack', 'C1', '111.222', 'U2', %s, 'q', 1, 'button')", (answer_id,))


async def test_comments_attach_to_the_vote_and_go_with_a_changed_vote(pool) -> None:  # type: ignore[no-untyped-def]
    answer_id = await _answer(pool)
    assert not await add_comment(pool, "slack", "C1", "111.222", "U2", "no vote yet")
    await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, -1))
    assert await add_comment(pool, "slack", "C1", "111.222", "U2", "  step 2 is wrong  ")
    await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, -1, "reaction"))
    assert (await feedback_rows(pool))[0]["comment"] == "step 2 is wrong", "the same vote keeps its comment"
    await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, 1))
    assert (await feedback_rows(pool))[0]["comment"] is None


async def test_undo_withdraws_only_the_same_vote(pool) -> None:  # type: ignore[no-untyped-def]
    answer_id = await _answer(pool)
    await record_vote(pool, Vote("slack", "C1", "111.222", "U2", answer_id, 1, "reaction"))
    assert not await undo_vote(pool, "slack", "C1", "111.222", "U2", -1)
    assert not await undo_vote(pool, "slack", "C1", "111.222", "U3", 1)
    assert await undo_vote(pool, "slack", "C1", "111.222", "U2", 1)
    assert await feedback_rows(pool) == []


async def test_unknown_answers_and_bad_votes(pool) -> None:  # type: ignore[no-untyped-def]
    assert await record_vote(pool, Vote("slack", "C1", "1.2", "U2", 999_999, 1)) is None
    with pytest.raises(ValueError):
        await record_vote(pool, Vote("slack", "C1", "1.2", "U2", 1, 2))


async def test_events_are_claimed_once_and_stale_unfinished_claims_can_be_taken_over(pool) -> None:  # type: ignore[no-untyped-def]
    claims = await asyncio.gather(*[events.claim_event(pool, "slack", "Ev1") for _ in range(8)])
    assert sorted(claims) == [False] * 7 + [True]
    assert await events.claim_event(pool, "teams", "Ev1"), "per platform"
    assert await events.claim_event(pool, "slack", "Ev1", stale_s=0), "the holder died: taken over"
    await events.finish_event(pool, "slack", "Ev1")
    assert not await events.claim_event(pool, "slack", "Ev1", stale_s=0), "finished events never again"
    assert await events.prune_events(pool, older_than_s=0) == 2


async def test_answer_messages_map_a_posted_message_to_its_answer(pool) -> None:  # type: ignore[no-untyped-def]
    answer_id = await _answer(pool)
    await events.remember_message(pool, "slack", "C1", "111.222", answer_id, thread_ts="100.000")
    assert await events.answer_for_message(pool, "slack", "C1", "111.222") == answer_id
    assert await events.answer_for_message(pool, "slack", "C1", "999.999") is None
    stored = await events.load_answer(pool, answer_id)
    assert stored is not None and stored[1] == "U1"
    assert (stored[0]["question"], stored[0]["answer"], "trace" in stored[0]) == ("disk full on /var", "...", False)
