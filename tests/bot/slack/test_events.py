"""Events API through the real Bolt app: mentions in alert threads, DMs, retries and replicas,
the bot's own and other bots' messages, and feedback from reactions, buttons and the comment modal."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from bot.slack.blocks import ACTION_DOWN, ACTION_UP, FEEDBACK_VIEW
from bot.records.feedback import feedback_rows
from tests.bot.chat.test_alerts import ALERTMANAGER, GRAFANA, HUMAN
from tests.bot.slack.test_adapter import button_values, texts
from tests.slackfake import BOT_ID, BOT_USER, FakeSlackAPI, Harness

CHANNEL = "C0INCIDENT"
PARENT = ALERTMANAGER["ts"]


@pytest.fixture
def fake(slack_api: FakeSlackAPI) -> FakeSlackAPI:
    return slack_api


def mention(text: str, *, ts: str = "1759990100.000100", thread_ts: str | None = PARENT, user: str = "U0ALICE01",
            channel: str = CHANNEL, **extra: Any) -> dict[str, Any]:
    event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel,
             "event_ts": ts, **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def alert_thread(fake: FakeSlackAPI, parent: dict[str, Any] = ALERTMANAGER, *replies: dict[str, Any]) -> None:
    fake.threads[(CHANNEL, parent["ts"])] = [copy.deepcopy(parent), *[
        {**copy.deepcopy(r), "thread_ts": parent["ts"]} for r in replies]]


def dm(text: str, *, ts: str = "1759990200.000100", user: str = "U0ALICE01", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "channel_type": "im", "channel": "D0ALICE01", "user": user, "text": text,
            "ts": ts, "event_ts": ts, **extra}


async def answered(slack: Harness) -> list[tuple[Any, ...]]:
    return await slack.rows("SELECT id, question, channel, user_id, entry_point FROM answers ORDER BY id")


# --- Mentions in threads ---------------------------------------------------------------------------------------------


async def test_mention_in_an_alert_thread_answers_from_the_alert(slack: Harness, fake: FakeSlackAPI) -> None:
    alert_thread(fake, ALERTMANAGER, HUMAN)
    reply = await slack.event(mention(f"<@{BOT_USER}>"), event_id="Ev0MENTION1")
    assert reply.status == 200
    await slack.done()
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder.args["thread_ts"] == PARENT and "Searching runbooks" in texts(placeholder.args["blocks"])
    [replies] = fake.calls_to("conversations.replies")
    assert replies.args["ts"] == PARENT and replies.args["channel"] == CHANNEL
    assert replies.at > placeholder.at, "the placeholder goes out before the thread is read"
    [update] = fake.calls_to("chat.update")
    shown = texts(update.args["blocks"])
    assert "Question: KubePodCrashLooping: Pod payments/checkout-api" in shown
    assert "k8s-pod-crashloop.md" in shown and "```kubectl" in shown
    [(answer_id, question, channel, user, entry)] = await answered(slack)
    assert question.startswith("KubePodCrashLooping: Pod payments/checkout-api") and (channel, user, entry) == (
        CHANNEL, "U0ALICE01", "slack")
    assert update.args["ts"] == "1760000000.000001", "the placeholder's ts"
    assert await slack.rows("SELECT ts, thread_ts, answer_id FROM answer_messages") == [
        ("1760000000.000001", PARENT, answer_id)]


async def test_mention_with_a_question_asks_it_with_the_alert_as_context(
        fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    from tests.fakes import ScriptedLLM, final

    seen: list[str] = []

    def reply(conversation, tools):  # type: ignore[no-untyped-def]
        seen.append(conversation[1].content)
        return final("Look at the previous container's logs.", [])

    slack = await Harness.start(fake, examples_pool, embedder, llm=ScriptedLLM([reply]))
    try:
        alert_thread(fake, GRAFANA, HUMAN)
        await slack.event(mention(f"<@{BOT_USER}> what should I check first?", thread_ts=GRAFANA["ts"]),
                          event_id="Ev0MENTION2")
        await slack.done()
        prompt = seen[0]
        assert "what should I check first?" in prompt and f"<@{BOT_USER}>" not in prompt
        assert "alert alertname: DiskSpaceLow" in prompt and "alert severity: warning" in prompt
        assert "restarted it twice" in prompt, "the thread's replies are context"
        [(_, question, *_)] = await answered(slack)
        assert question == "what should I check first?"
    finally:
        await slack.close()


async def test_top_level_mention_answers_in_a_new_thread_under_it(slack: Harness, fake: FakeSlackAPI) -> None:
    await slack.event(mention(f"<@{BOT_USER}> disk full on /var/lib/docker", thread_ts=None, ts="1759990300.000100"),
                      event_id="Ev0MENTION3")
    await slack.done()
    assert not fake.calls_to("conversations.replies")
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder.args["thread_ts"] == "1759990300.000100"
    assert "```df -hT" in texts(fake.calls_to("chat.update")[0].args["blocks"])


@pytest.mark.parametrize("text", [f"<@{BOT_USER}>", f"<@{BOT_USER}> help"])
async def test_empty_mention_without_an_alert_gets_help(slack: Harness, fake: FakeSlackAPI, text: str) -> None:
    await slack.event(mention(text, thread_ts=None), event_id="Ev0MENTION4")
    await slack.done()
    [update] = fake.calls_to("chat.update")
    assert "Ask me about an incident" in update.args["text"] and not await answered(slack)


async def test_thread_read_failure_still_ends_in_an_apology(slack: Harness, fake: FakeSlackAPI) -> None:
    fake.fail("conversations.replies", error="missing_scope")
    await slack.event(mention(f"<@{BOT_USER}>"), event_id="Ev0MENTION5")
    await slack.done()
    [update] = fake.calls_to("chat.update")
    assert "Sorry, I couldn't answer that" in update.args["text"] and "reference `" in update.args["text"]


async def test_mention_outside_the_allow_list_is_refused_to_the_user_only(
        fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    slack = await Harness.start(fake, examples_pool, embedder, slack_allowed_channels=["C0ELSEWHERE"])
    try:
        await slack.event(mention(f"<@{BOT_USER}> disk full"), event_id="Ev0MENTION6")
        await slack.done()
        [notice] = fake.calls_to("chat.postEphemeral")
        assert notice.args["user"] == "U0ALICE01" and "not enabled in this channel" in notice.args["text"]
        assert not fake.calls_to("chat.postMessage") and not await answered(slack)
    finally:
        await slack.close()


# --- Retries, replicas, restarts -------------------------------------------------------------------------------------


async def test_retries_of_one_event_are_answered_once(slack: Harness, fake: FakeSlackAPI) -> None:
    alert_thread(fake)
    event = mention(f"<@{BOT_USER}>")
    first = await slack.event(event, event_id="Ev0RETRY01")
    retries = await asyncio.gather(*[slack.event(event, event_id="Ev0RETRY01", retry=n) for n in (1, 2, 3)])
    assert {r.status for r in [first, *retries]} == {200}
    await slack.done()
    assert len(fake.calls_to("chat.postMessage")) == 1 and len(fake.calls_to("chat.update")) == 1
    assert len(await answered(slack)) == 1
    [(attempts, done)] = await slack.rows(
        "SELECT attempts, done_at IS NOT NULL FROM chat_events WHERE platform = 'slack' AND event_id = 'Ev0RETRY01'")
    assert (attempts, done) == (1, True)


async def test_a_second_replica_or_a_restart_does_not_answer_again(
        slack: Harness, fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    alert_thread(fake)
    await slack.event(mention(f"<@{BOT_USER}>"), event_id="Ev0REPLICA1")
    await slack.done()
    other = await Harness.start(fake, examples_pool, embedder)  # a fresh process on the same database
    try:
        await other.event(mention(f"<@{BOT_USER}>"), event_id="Ev0REPLICA1", retry=1)
        await other.done()
    finally:
        await other.close()
    assert len(fake.calls_to("chat.postMessage")) == 1 and len(await answered(slack)) == 1
    await slack.event(mention(f"<@{BOT_USER}>", ts="1759990100.000200"), event_id="Ev0REPLICA2")
    await slack.done()
    assert len(await answered(slack)) == 2, "a different event is answered"


# --- Direct messages, own and other bots -----------------------------------------------------------------------------


async def test_direct_message_is_answered_in_the_dm(slack: Harness, fake: FakeSlackAPI) -> None:
    await slack.event(dm("disk full on /var/lib/docker"), event_id="Ev0DM00001")
    await slack.done()
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder.args["channel"] == "D0ALICE01" and "thread_ts" not in placeholder.args
    assert "```df -hT" in texts(fake.calls_to("chat.update")[0].args["blocks"])
    [(_, question, channel, user, entry)] = await answered(slack)
    assert (question, channel, user, entry) == ("disk full on /var/lib/docker", "D0ALICE01", "U0ALICE01", "slack")


@pytest.mark.parametrize("event", [
    dm("disk full", user=BOT_USER, bot_id=BOT_ID),  # the bot's own message
    dm("disk full", user="U0OTHERBOT", bot_id="B0OTHERBOT"),  # another bot
    dm("disk full", subtype="message_changed"),  # an edit
    {"type": "message", "channel_type": "channel", "channel": CHANNEL, "user": "U0ALICE01", "text": "disk full",
     "ts": "1759990400.000100"},  # not a DM
])
async def test_own_and_other_bots_messages_and_edits_are_ignored(
        slack: Harness, fake: FakeSlackAPI, event: dict[str, Any]) -> None:
    reply = await slack.event(event, event_id="Ev0IGNORE01")
    await slack.done()
    assert reply.status == 200
    assert [c.method for c in fake.calls if c.method != "auth.test"] == [] and not await answered(slack)


async def test_other_bots_are_answered_when_configured(fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    slack = await Harness.start(fake, examples_pool, embedder, slack_answer_bots=True)
    try:
        await slack.event(mention(f"<@{BOT_USER}> disk full on /var/lib/docker", thread_ts=None,
                                  user="U0ALERTBOT", bot_id="B0ALERTBOT"), event_id="Ev0BOTS0001")
        await slack.event(dm("disk full", user=BOT_USER, bot_id=BOT_ID), event_id="Ev0BOTS0002")
        await slack.done()
        assert len(await answered(slack)) == 1, "other bots yes, itself never"
    finally:
        await slack.close()


# --- Feedback --------------------------------------------------------------------------------------------------------


async def _posted_answer(slack: Harness, fake: FakeSlackAPI) -> tuple[int, str]:
    await slack.command("disk full on /var/lib/docker")
    await slack.done()
    update = fake.calls_to("chat.update")[-1]
    return button_values(update.args["blocks"])[ACTION_UP]["answer_id"], update.args["ts"]


def reaction(kind: str, name: str, ts: str, *, user: str = "U0BOB0001", channel: str = CHANNEL) -> dict[str, Any]:
    return {"type": kind, "user": user, "reaction": name, "item_user": BOT_USER,
            "item": {"type": "message", "channel": channel, "ts": ts}, "event_ts": "1759990500.000100"}


async def test_reactions_vote_and_removing_them_undoes_the_vote(slack: Harness, fake: FakeSlackAPI) -> None:
    answer_id, ts = await _posted_answer(slack, fake)
    await slack.event(reaction("reaction_added", "+1::skin-tone-3", ts), event_id="Ev0REACT001")
    await slack.event(reaction("reaction_added", "thumbsup", ts), event_id="Ev0REACT001", retry=1)
    await slack.event(reaction("reaction_added", "tada", ts), event_id="Ev0REACT002")
    await slack.event(reaction("reaction_added", "-1", "1759990000.777777"), event_id="Ev0REACT003")  # not an answer
    await slack.done()
    [row] = await feedback_rows(slack.pool)
    assert (row["answer_id"], row["vote"], row["via"], row["user_id"], row["channel"], row["message_ts"]) == (
        answer_id, 1, "reaction", "U0BOB0001", CHANNEL, ts)
    [(question, cited, retrieved)] = await slack.rows(
        "SELECT question, cited_chunk_ids, retrieved_chunk_ids FROM answers WHERE id = %s", answer_id)
    assert row["question"] == question == "disk full on /var/lib/docker"
    assert row["cited_chunk_ids"] == cited and cited
    assert set(row["uncited_chunk_ids"]) == set(retrieved) - set(cited)

    await slack.event(reaction("reaction_removed", "-1", ts), event_id="Ev0REACT004")  # not the vote cast
    await slack.done()
    assert len(await feedback_rows(slack.pool)) == 1
    await slack.event(reaction("reaction_removed", "+1", ts), event_id="Ev0REACT005")
    await slack.done()
    assert await feedback_rows(slack.pool) == []


async def test_buttons_vote_once_per_user_and_thumbs_down_asks_why(slack: Harness, fake: FakeSlackAPI) -> None:
    answer_id, ts = await _posted_answer(slack, fake)
    assert (await slack.click(ACTION_UP, answer_id, channel=CHANNEL, message_ts=ts)).status == 200
    await slack.done()
    [thanks] = [c for c in fake.calls_to("response_url") if c.args.get("text")]
    assert "Thanks" in thanks.args["text"] and thanks.args["replace_original"] is False
    await slack.click(ACTION_UP, answer_id, channel=CHANNEL, message_ts=ts)
    await slack.click(ACTION_UP, answer_id, channel=CHANNEL, message_ts=ts, user="U0CAROL01")
    await slack.done()
    assert sorted((r["user_id"], r["vote"]) for r in await feedback_rows(slack.pool)) == [
        ("U0BOB0001", 1), ("U0CAROL01", 1)]

    await slack.click(ACTION_DOWN, answer_id, channel=CHANNEL, message_ts=ts)
    await slack.done()
    [opened] = fake.calls_to("views.open")
    view = opened.args["view"]
    assert opened.args["trigger_id"] == "trigger-" + ACTION_DOWN and view["callback_id"] == FEEDBACK_VIEW
    assert view["blocks"][0]["element"]["type"] == "plain_text_input"
    bob = [r for r in await feedback_rows(slack.pool) if r["user_id"] == "U0BOB0001"]
    assert [(r["vote"], r["via"]) for r in bob] == [(-1, "button")], "the same row, updated"

    submitted = await slack.submit(FEEDBACK_VIEW, view["private_metadata"], "  The runbook step 3 is outdated. ")
    assert submitted.status == 200 and submitted.body == ""
    await slack.done()
    bob = [r for r in await feedback_rows(slack.pool) if r["user_id"] == "U0BOB0001"]
    assert bob[0]["comment"] == "The runbook step 3 is outdated." and bob[0]["vote"] == -1
    assert json.loads(view["private_metadata"]) == {"answer_id": answer_id, "channel": CHANNEL, "ts": ts}


async def test_feedback_failure_is_not_silent(slack: Harness, fake: FakeSlackAPI) -> None:
    answer_id, ts = await _posted_answer(slack, fake)
    await slack.click(ACTION_UP, answer_id + 999, channel=CHANNEL, message_ts=ts)  # unknown answer: no row, no error
    await slack.done()
    assert await feedback_rows(slack.pool) == []
    fake.fail("views.open", error="expired_trigger_id")
    await slack.click(ACTION_DOWN, answer_id, channel=CHANNEL, message_ts=ts)
    await slack.done()
    assert any("Sorry" in (c.args.get("text") or "") for c in fake.calls_to("response_url"))
