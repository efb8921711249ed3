"""What people do with a Slack answer: 👍 / 👎 buttons and reactions (removing the reaction withdraws the
vote), the 👎 comment modal, and "Share to channel" under an ephemeral answer. Each listener acks at once
and records in a tracked background task; bot/slack/adapter.py registers them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.answer import Answer
from bot.observability import count_vote
from bot.slack.blocks import ACTION_UP, answer_blocks, comment_modal, fallback_text
from bot.slack.reply import PLATFORM, Delivery, Deps, apology, claimed, delivery_of, ephemeral_notice, quietly, tell
from bot.records import events, feedback

_VOTES = {"+1": 1, "thumbsup": 1, "-1": -1, "thumbsdown": -1}


async def on_vote_button(ack: Any, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient, respond: Any) -> None:
    """👍 / 👎 under an answer: record the vote; 👎 also opens the comment modal."""
    await ack()
    deps: Deps = context["deps"]
    vote = feedback.Vote(platform=PLATFORM, channel=_channel_of(body), message_ts=body["container"]["message_ts"],
                         user_id=body["user"]["id"], answer_id=_answer_id(action),
                         vote=1 if action["action_id"] == ACTION_UP else -1)
    deps.tasks.spawn(_record_button(deps, client, respond, vote, body.get("trigger_id")),
                     name=f"slack:vote:{vote.user_id}")


async def _record_button(deps: Deps, client: AsyncWebClient, respond: Any, vote: feedback.Vote,
                         trigger_id: str | None) -> None:
    try:
        if vote.vote < 0 and trigger_id:  # the trigger expires in 3 s: open the modal first
            meta = json.dumps({"answer_id": vote.answer_id, "channel": vote.channel, "ts": vote.message_ts})
            await client.views_open(trigger_id=trigger_id, view=comment_modal(meta))
        await feedback.record_vote(deps.pool, vote)
        count_vote(vote.vote)
        if vote.vote > 0:
            await respond(text=messages.SLACK_FEEDBACK_THANKS, response_type="ephemeral", replace_original=False)
    except Exception as exc:
        await quietly(ephemeral_notice(respond)(apology(exc, "recording a vote")))


async def on_comment(ack: Any, body: dict[str, Any], view: dict[str, Any], context: AsyncBoltContext,
                     client: AsyncWebClient) -> None:
    """The 👎 modal submitted: store the text on the user's vote."""
    await ack()
    deps: Deps = context["deps"]
    meta = json.loads(view.get("private_metadata") or "{}")
    value = ((view.get("state", {}).get("values", {}).get("comment") or {}).get("text") or {}).get("value") or ""
    if value.strip() and meta.get("answer_id"):
        deps.tasks.spawn(_store_comment(deps, client, meta, body["user"]["id"], value), name="slack:comment")


async def _store_comment(deps: Deps, client: AsyncWebClient, meta: Mapping[str, Any], user: str, text: str) -> None:
    channel, ts = meta["channel"], meta["ts"]
    try:
        if not await feedback.add_comment(deps.pool, PLATFORM, channel, ts, user, text):  # the vote was lost
            lost = feedback.Vote(PLATFORM, channel, ts, user, int(meta["answer_id"]), -1)
            await feedback.record_vote(deps.pool, lost)
            count_vote(lost.vote)
            await feedback.add_comment(deps.pool, PLATFORM, channel, ts, user, text)
    except Exception as exc:
        await quietly(tell(client, channel, user, None, apology(exc, "storing a comment")))


async def on_reaction(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                      client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """👍 / 👎 reactions on an answer vote; removing the reaction withdraws the vote."""
    deps: Deps = context["deps"]
    vote = _VOTES.get(event.get("reaction", "").split("::")[0])
    item = event.get("item") or {}
    if vote is None or item.get("type") != "message" or event.get("user") == context.bot_user_id:
        return
    deps.tasks.spawn(_record_reaction(deps, client, event, vote, delivery_of(body, request)), name="slack:reaction")


async def _record_reaction(deps: Deps, client: AsyncWebClient, event: dict[str, Any], vote: int,
                           delivery: Delivery) -> None:
    channel, ts, user = event["item"]["channel"], event["item"]["ts"], event["user"]
    try:
        if not await claimed(deps, delivery):
            return
        answer_id = await events.answer_for_message(deps.pool, PLATFORM, channel, ts)
        if answer_id is None:
            pass  # a reaction on some other message
        elif event["type"] == "reaction_added":
            vote_row = feedback.Vote(PLATFORM, channel, ts, user, answer_id, vote, "reaction")
            await feedback.record_vote(deps.pool, vote_row)
            count_vote(vote_row.vote)
        else:
            await feedback.undo_vote(deps.pool, PLATFORM, channel, ts, user, vote)
        if delivery[0]:
            await events.finish_event(deps.pool, PLATFORM, delivery[0])
    except Exception as exc:
        await quietly(tell(client, channel, user, None, apology(exc, "recording a reaction")))


async def on_share(ack: Any, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                   client: AsyncWebClient, respond: Any) -> None:
    """"Share to channel" under an ephemeral answer: post it visibly, then remove the ephemeral one."""
    await ack()
    deps: Deps = context["deps"]
    deps.tasks.spawn(_share(deps, client, respond, _answer_id(action), _channel_of(body), body["user"]["id"]),
                     name="slack:share")


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
    return int(json.loads(action["value"])["answer_id"])


def _channel_of(body: Mapping[str, Any]) -> str:
    return (body.get("channel") or {}).get("id") or body["container"]["channel_id"]
