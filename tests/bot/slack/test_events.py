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
from bot.slack.blocks import ACTION_FIX_NONE, ACTION_FIX_PICK
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
    assert [b["block_id"] for b in view["blocks"]] == ["correction", "correction_other", "comment"]
    assert view["blocks"][-1]["element"]["type"] == "plain_text_input"
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


def _options(blocks: list[dict[str, Any]]) -> list[str]:
    """The values of the select menus' options in some blocks."""
    out: list[str] = []
    for block in blocks:
        for element in [block.get("element") or {}, *(block.get("elements") or [])]:
            out += [o["value"] for o in element.get("options") or []]
    return out


async def test_thumbs_down_offers_runbooks_and_the_pick_leads_the_next_answer(slack: Harness, fake: FakeSlackAPI) -> None:
    answer_id, ts = await _posted_answer(slack, fake)
    await slack.click(ACTION_DOWN, answer_id, channel=CHANNEL, message_ts=ts)
    await slack.done()
    [opened] = fake.calls_to("views.open")
    offered = _options(opened.args["view"]["blocks"])
    assert offered[-1] == "none" and "disk-full.md" not in offered and len(offered) >= 3, offered
    picked = "oom-killed.md" if "oom-killed.md" in offered else offered[0]
    chosen = {"correction": {"choice": {"type": "static_select", "selected_option": {"value": picked}}}}
    assert (await slack.submit(FEEDBACK_VIEW, opened.args["view"]["private_metadata"], "", values=chosen)).status == 200
    await slack.done()
    [told] = fake.calls_to("chat.postEphemeral")
    assert told.args["user"] == "U0BOB0001" and f"now leads with `{picked}`" in told.args["text"]

    await slack.command("disk full on /var/lib/docker", user="U0CAROL01")
    await slack.done()
    again = texts(fake.calls_to("chat.update")[-1].args["blocks"])
    assert "This follows a correction: <@U0BOB0001> said on" in again, again
    assert again.index(picked) < again.index("disk-full.md") if "disk-full.md" in again else picked in again


async def test_a_thumbs_down_reaction_offers_the_choices_to_the_voter_only(slack: Harness, fake: FakeSlackAPI) -> None:
    answer_id, ts = await _posted_answer(slack, fake)
    await slack.event(reaction("reaction_added", "-1", ts, user="U0CAROL01"), event_id="Ev0FIX0001")
    await slack.done()
    [offer] = fake.calls_to("chat.postEphemeral")
    assert offer.args["user"] == "U0CAROL01" and offer.args["thread_ts"] == ts
    values = _options(offer.args["blocks"])
    assert values and all(v.startswith(f"{answer_id}|") for v in values)
    assert (await slack.pick(ACTION_FIX_PICK, values[0], channel=CHANNEL, message_ts=ts, user="U0CAROL01")).status == 200
    await slack.done()
    saved = [c for c in fake.calls_to("response_url") if "now leads with" in (c.args.get("text") or "")]
    assert saved and saved[-1].args["replace_original"] is True, "the choices are replaced by what was saved"
    assert (await slack.click(ACTION_FIX_NONE, answer_id, channel=CHANNEL, message_ts=ts)).status == 400, \
        "a button value that is not '<answer>|<runbook>' is malformed"


async def test_fix_corrects_the_latest_answer_in_the_channel_or_thread(slack: Harness, fake: FakeSlackAPI) -> None:
    await _posted_answer(slack, fake)
    reply = await slack.command("fix https://git.example.com/sre/runbooks/blob/main/oom-killed.md")
    assert reply.status == 200
    await slack.done()
    said = [c.args.get("text") or "" for c in fake.calls_to("response_url")]
    assert any("now leads with `oom-killed.md`" in s for s in said), said
    await slack.command("fix no/such/runbook.md")
    await slack.done()
    assert any("could not find a runbook" in (c.args.get("text") or "") for c in fake.calls_to("response_url"))


async def test_a_correction_under_an_alert_leads_the_next_firing_of_that_alert(slack: Harness, fake: FakeSlackAPI) -> None:
    """Even over the runbook the alert itself links to: the engineers said it was the wrong one."""
    alert_thread(fake)
    await slack.event(mention(f"<@{BOT_USER}> what do I do?"), event_id="Ev0ALERT01")
    await slack.done()
    first = fake.calls_to("chat.update")[-1]
    assert "k8s-pod-crashloop.md" in texts(first.args["blocks"]).split("Sources")[-1]
    await slack.event(reaction("reaction_added", "thumbsdown", first.args["ts"]), event_id="Ev0ALERT02")
    await slack.done()
    [offer] = fake.calls_to("chat.postEphemeral")
    picked = next(v for v in _options(offer.args["blocks"]) if v.endswith("|oom-killed.md"))
    await slack.pick(ACTION_FIX_PICK, picked, channel=CHANNEL, message_ts=first.args["ts"])
    await slack.done()

    again = copy.deepcopy(ALERTMANAGER)
    again["ts"] = "1759995000.000100"
    again["attachments"][0]["text"] = again["attachments"][0]["text"].replace("x2x7q", "q9z2m")
    alert_thread(fake, again)
    await slack.event(mention(f"<@{BOT_USER}> and now?", ts="1759995100.000100", thread_ts=again["ts"]),
                      event_id="Ev0ALERT03")
    await slack.done()
    shown = texts(fake.calls_to("chat.update")[-1].args["blocks"])
    sources = shown.split("Sources")[-1]
    assert sources.index("oom-killed.md") < sources.index("k8s-pod-crashloop.md") if "k8s-pod-crashloop.md" in sources \
        else "oom-killed.md" in sources, shown
    assert "This follows a correction: <@U0BOB0001>" in shown
