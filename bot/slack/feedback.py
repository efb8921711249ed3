"""What people do with a Slack answer: 👍 / 👎 buttons and reactions (removing the reaction withdraws the
vote), the 👎 comment modal, and "Share to channel" under an ephemeral answer. Each listener reads what it
needs from the payload (`Malformed` when something is missing), acks at once and records in a tracked
background task; bot/slack/adapter.py registers them."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.answer import Answer
from bot.chat import corrections
from bot.observability import count_vote
from bot.slack.blocks import ACTION_UP, answer_blocks, comment_modal, correction_blocks, fallback_text
from bot.slack.reply import (
    PLATFORM, Delivery, Deps, Malformed, apology, check_response_url, claimed, delivery_of, ephemeral_notice, field,
    quietly, tell, value_at,
)
from bot.records import events, feedback

log = logging.getLogger(__name__)
CHOICES_TIMEOUT_S = 2.0  # the trigger of a 👎 opens the modal only within 3 s
_VOTES = {"+1": 1, "thumbsup": 1, "-1": -1, "thumbsdown": -1}


async def on_vote_button(ack: Any, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient, respond: Any) -> None:
    """👍 / 👎 under an answer: record the vote; 👎 also opens the comment modal."""
    vote = feedback.Vote(platform=PLATFORM, channel=_channel_of(body),
                         message_ts=field(body, "container", "message_ts"), user_id=field(body, "user", "id"),
                         answer_id=_answer_id(action), vote=1 if action["action_id"] == ACTION_UP else -1)
    check_response_url(body)
    await ack()
    deps: Deps = context["deps"]
    deps.tasks.spawn(_record_button(deps, client, respond, vote, body.get("trigger_id")),
                     name=f"slack:vote:{vote.user_id}")


async def _record_button(deps: Deps, client: AsyncWebClient, respond: Any, vote: feedback.Vote,
                         trigger_id: str | None) -> None:
    try:
        if vote.vote < 0 and trigger_id:  # the trigger expires in 3 s: open the modal first
            meta = json.dumps({"answer_id": vote.answer_id, "channel": vote.channel, "ts": vote.message_ts})
            choices = await _choices(deps, vote.answer_id, vote.user_id)
            await client.views_open(trigger_id=trigger_id, view=comment_modal(meta, choices))
        await feedback.record_vote(deps.pool, vote)
        deps.answerer.feedback_changed()
        count_vote(vote.vote)
        if vote.vote > 0:
            await respond(text=messages.SLACK_FEEDBACK_THANKS, response_type="ephemeral", replace_original=False)
    except Exception as exc:
        await quietly(ephemeral_notice(respond)(apology(exc, "recording a vote")))


async def _choices(deps: Deps, answer_id: int, user: str) -> list[tuple[str, str]]:
    """The runbooks a 👎 offers; none when finding them takes too long (the modal must open within 3 s)."""
    try:
        found = await asyncio.wait_for(corrections.offer(deps.answerer, answer_id, platform=PLATFORM, user=user),
                                       CHOICES_TIMEOUT_S)
    except Exception:
        log.warning("slack: no runbooks to offer after a 👎 on answer %s", answer_id, exc_info=True)
        return []
    return found.choices if found is not None else []


async def on_comment(ack: Any, body: dict[str, Any], view: dict[str, Any], context: AsyncBoltContext,
                     client: AsyncWebClient) -> None:
    """The 👎 modal submitted: a chosen or typed runbook becomes a correction; the text is stored on the vote."""
    answer_id, channel, ts = _voted_answer(view)
    user = field(body, "user", "id")
    await ack()
    deps: Deps = context["deps"]
    value = value_at(view, "state", "values", "comment", "text", "value")
    typed = value_at(view, "state", "values", "correction_other", "text", "value")
    chosen = value_at(view, "state", "values", "correction", "choice", "selected_option", "value")
    more = value_at(view, "state", "values", "correction_more", "choice", "selected_option", "value")
    given = next((v.strip() for v in (typed, chosen, more) if isinstance(v, str) and v.strip()), None)
    if given is not None:
        deps.tasks.spawn(_correct(deps, client, answer_id, given, (channel, user, None)), name="slack:correction")
    if isinstance(value, str) and value.strip():
        deps.tasks.spawn(_store_comment(deps, client, answer_id, channel, ts, user, value), name="slack:comment")


async def _correct(deps: Deps, client: AsyncWebClient, answer_id: int, given: str,
                   where: tuple[str, str, str | None]) -> None:
    """Make the runbook a correction of the answer and tell the engineer what it changes."""
    channel, user, thread = where
    await quietly(tell(client, channel, user, thread, await corrected(deps, answer_id, given, user)))


async def corrected(deps: Deps, answer_id: int, given: str, user: str) -> str:
    """Make `given` a correction of the answer by a Slack user; what to tell them (an apology on failure)."""
    try:
        return await corrections.correct(deps.answerer, answer_id, given, platform=PLATFORM, user=user,
                                         user_name=f"<@{user}>")
    except Exception as exc:
        return apology(exc, "recording a correction")


async def on_fix_choice(ack: Any, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                        client: AsyncWebClient, respond: Any) -> None:
    """A runbook picked (a button, the menu, or "none of these") in the choices offered after a 👎 reaction."""
    value = value_at(action, "selected_option", "value") or value_at(action, "value")
    answer, _, given = str(value or "").partition("|")
    if not answer.isdigit() or not given:
        raise Malformed("a correction choice without an answer and a runbook")
    user = field(body, "user", "id")
    check_response_url(body)
    await ack()
    deps: Deps = context["deps"]
    deps.tasks.spawn(_pick(deps, respond, int(answer), given, user), name="slack:correction")


async def _pick(deps: Deps, respond: Any, answer_id: int, given: str, user: str) -> None:
    said = await corrected(deps, answer_id, given, user)
    await quietly(respond(text=said, response_type="ephemeral", replace_original=True))


def _voted_answer(view: Mapping[str, Any]) -> tuple[int, str, str]:
    """The answer id, channel and message ts the comment modal was opened for (its private_metadata)."""
    try:
        meta = json.loads(field(view, "private_metadata"))
        return int(meta["answer_id"]), field(meta, "channel"), field(meta, "ts")
    except (ValueError, KeyError, TypeError) as exc:  # Malformed is a ValueError too
        raise Malformed(f"no answer in the comment modal's metadata ({exc})") from exc


async def _store_comment(deps: Deps, client: AsyncWebClient, answer_id: int, channel: str, ts: str, user: str,
                         text: str) -> None:
    try:
        if not await feedback.add_comment(deps.pool, PLATFORM, channel, ts, user, text):  # the vote was lost
            lost = feedback.Vote(PLATFORM, channel, ts, user, answer_id, -1)
            await feedback.record_vote(deps.pool, lost)
            deps.answerer.feedback_changed()
            count_vote(lost.vote)
            await feedback.add_comment(deps.pool, PLATFORM, channel, ts, user, text)
    except Exception as exc:
        await quietly(tell(client, channel, user, None, apology(exc, "storing a comment")))


async def on_reaction(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                      client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """👍 / 👎 reactions on an answer vote; removing the reaction withdraws the vote."""
    deps: Deps = context["deps"]
    vote = _VOTES.get(str(event.get("reaction") or "").split("::")[0])
    item = event.get("item") or {}
    if vote is None or not isinstance(item, Mapping) or item.get("type") != "message":
        return
    user, channel, ts = field(event, "user"), field(item, "channel"), field(item, "ts")
    if user == context.bot_user_id:
        return
    deps.tasks.spawn(_record_reaction(deps, client, event["type"], (channel, ts, user), vote,
                                      delivery_of(body, request)), name="slack:reaction")


async def _record_reaction(deps: Deps, client: AsyncWebClient, kind: str, where: tuple[str, str, str], vote: int,
                           delivery: Delivery) -> None:
    channel, ts, user = where
    try:
        if not await claimed(deps, delivery):
            return
        answer_id = await events.answer_for_message(deps.pool, PLATFORM, channel, ts)
        if answer_id is None:
            pass  # a reaction on some other message
        elif kind == "reaction_added":
            vote_row = feedback.Vote(PLATFORM, channel, ts, user, answer_id, vote, "reaction")
            await feedback.record_vote(deps.pool, vote_row)
            deps.answerer.feedback_changed()
            count_vote(vote_row.vote)
            if vote < 0:
                await _offer_after_reaction(deps, client, answer_id, (channel, ts, user))
        elif await feedback.undo_vote(deps.pool, PLATFORM, channel, ts, user, vote):
            deps.answerer.feedback_changed()
        if delivery[0]:
            await events.finish_event(deps.pool, PLATFORM, delivery[0])
    except Exception as exc:
        await quietly(tell(client, channel, user, None, apology(exc, "recording a reaction")))


async def _offer_after_reaction(deps: Deps, client: AsyncWebClient, answer_id: int,
                                where: tuple[str, str, str]) -> None:
    """After a 👎 reaction, the runbooks that might have been right, to the voter only (best effort)."""
    channel, ts, user = where
    found = await corrections.offer(deps.answerer, answer_id, platform=PLATFORM, user=user)
    if found is None:
        return
    blocks = correction_blocks(answer_id, found.choices)
    await quietly(client.chat_postEphemeral(channel=channel, user=user, thread_ts=ts, text=messages.CORRECTION_ASK,
                                            blocks=blocks))


async def on_share(ack: Any, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                   client: AsyncWebClient, respond: Any) -> None:
    """"Share to channel" under an ephemeral answer: post it visibly, then remove the ephemeral one."""
    answer_id, channel, user = _answer_id(action), _channel_of(body), field(body, "user", "id")
    check_response_url(body)
    await ack()
    deps: Deps = context["deps"]
    deps.tasks.spawn(_share(deps, client, respond, answer_id, channel, user), name="slack:share")


async def _share(deps: Deps, client: AsyncWebClient, respond: Any, answer_id: int, channel: str, user: str) -> None:
    try:
        stored = await events.load_answer(deps.pool, answer_id)
        if stored is None:
            await ephemeral_notice(respond)(messages.SLACK_ANSWER_GONE)
            return
        data, asked_by = stored
        answer = Answer.model_validate({**data, "answer_id": answer_id})
        blocks = answer_blocks(answer, links=deps.links(answer), asked_by=asked_by, shared_by=user)
        try:
            resp = await client.chat_postMessage(channel=channel, blocks=blocks, text=fallback_text(answer))
        except SlackApiError as exc:
            failed = messages.SLACK_SHARE_FAILED.format(error=exc.response.get("error", "error"))
            await ephemeral_notice(respond)(failed)
            return
        await events.remember_message(deps.pool, PLATFORM, channel, resp["ts"], answer_id)
        await respond(delete_original=True)
    except Exception as exc:
        await quietly(ephemeral_notice(respond)(apology(exc, "sharing an answer")))


def _answer_id(action: Mapping[str, Any]) -> int:
    try:
        return int(json.loads(field(action, "value"))["answer_id"])
    except (ValueError, KeyError, TypeError) as exc:  # Malformed is a ValueError too
        raise Malformed(f"no answer id in the button's value ({exc})") from exc


def _channel_of(body: Mapping[str, Any]) -> str:
    try:
        return field(body, "channel", "id")
    except Malformed:
        return field(body, "container", "channel_id")
