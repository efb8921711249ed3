"""The Slack adapter: a Bolt (async) app over the platform-neutral core.

Listeners are plain functions whose arguments Bolt injects by name; each one acks at once (or
returns, for events) and hands the slow work to a tracked background task, so Slack sees the ack
within milliseconds and tests and shutdown can wait for the work (`SlackBot.tasks.drain()`).
Events API deliveries are de-duplicated by event_id in Postgres; a failure anywhere ends in a
short apology where the user asked, never in silence.

Entry points: `/runbook <question>`, a mention in a thread (the thread and its alert are read),
a direct message; 👍 / 👎 buttons, reactions and the 👎 comment modal record feedback. Those feedback
listeners (and sharing) live in bot/slack/feedback.py, what the listeners share in bot/slack/reply.py;
`register` below attaches them all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, async_default_handlers
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.answering import Answerer, EmptyQuestion
from bot.chat.background import Tasks
from bot.context import IncidentContext
from bot.chat.ratelimit import RateLimiter
from bot.slack.blocks import (
    ACTION_DOWN, ACTION_SHARE, ACTION_UP, FEEDBACK_VIEW, HELP_WORDS, Block, answer_blocks, fallback_text,
    placeholder_blocks, slack_question, text_blocks,
)
from bot.slack.config import SlackConfig
from bot.slack.feedback import on_comment, on_reaction, on_share, on_vote_button
from bot.slack.reply import (
    PLATFORM, Delivery, Deps, MessageReply, Reply, ResponseUrlReply, apologise, claimed, delivery_of,
    ephemeral_notice, quietly, tell,
)
from bot.records import events

log = logging.getLogger(__name__)


async def answer_into(deps: Deps, reply: Reply, question: str, ctx: IncidentContext, *,
                      asked_by: str | None = None, share: bool = False) -> None:
    """Answer the question and show it in the reply (help for an empty question)."""
    try:
        answer = await deps.answerer.answer(question, ctx)
    except EmptyQuestion:
        await reply.show(text_blocks(messages.SLACK_HELP), messages.SLACK_HELP)
        return
    blocks = answer_blocks(answer, links=deps.links(answer), asked_by=asked_by, share=share)
    await reply.show(blocks, fallback_text(answer), answer.answer_id)


# --- /runbook ------------------------------------------------------------------------------------------------------


async def on_runbook(ack: Any, command: dict[str, Any], context: AsyncBoltContext, respond: Any,
                     client: AsyncWebClient) -> None:
    """`/runbook <question>`: help when empty; else ack now and answer in the background."""
    deps: Deps = context["deps"]
    text, user, channel = command.get("text", "").strip(), command["user_id"], command["channel_id"]
    if text.lower() in HELP_WORDS:
        await ack(response_type="ephemeral", text=messages.SLACK_HELP, blocks=text_blocks(messages.SLACK_HELP))
        return
    if refusal := deps.refusal(user, channel):
        await ack(response_type="ephemeral", text=refusal)
        return
    ephemeral = deps.config.visibility == "ephemeral"
    if ephemeral:  # the ack itself is the placeholder
        await ack(response_type="ephemeral", text=messages.SLACK_SEARCHING, blocks=placeholder_blocks(text, user))
    else:
        await ack()
    ctx = IncidentContext(entry_point="slack", channel=channel, user=user, filters=deps.filters(channel, {}))
    deps.tasks.spawn(_slash_answer(deps, client, respond, text, ctx, ephemeral), name=f"slack:/runbook:{user}")


async def _slash_answer(deps: Deps, client: AsyncWebClient, respond: Any, text: str, ctx: IncidentContext,
                        ephemeral: bool) -> None:
    reply: Reply = (ResponseUrlReply(respond, ephemeral=True, shown=True) if ephemeral
                    else MessageReply(deps, client, ctx.channel or ""))
    try:
        if isinstance(reply, MessageReply):
            reply = await _placeholder_or_response_url(reply, respond, placeholder_blocks(text, ctx.user))
        await answer_into(deps, reply, text, ctx, asked_by=ctx.user, share=ephemeral)
    except Exception as exc:
        await apologise(reply, exc, ephemeral_notice(respond))


async def _placeholder_or_response_url(reply: MessageReply, respond: Any, blocks: list[Block]) -> Reply:
    """Post the placeholder as the bot; where it may not post (a private channel it is not in, someone
    else's DM), answer visibly through the command's response_url instead."""
    try:
        await reply.placeholder(blocks)
        return reply
    except SlackApiError as exc:
        log.info("slack: cannot post in %s (%s); using the response_url", reply.conversation,
                 exc.response.get("error"))
    fallback = ResponseUrlReply(respond, ephemeral=False)
    await fallback.placeholder(blocks)
    return fallback


# --- Mentions and direct messages ----------------------------------------------------------------------------------


async def on_mention(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                     client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """A mention (in a thread or not): answer in the thread, reading the thread and its alert."""
    deps: Deps = context["deps"]
    if _from_bot(event) and not deps.config.answer_bots:
        return
    delivery = delivery_of(body, request)
    deps.tasks.spawn(_thread_answer(deps, client, event, delivery, event.get("thread_ts") or event["ts"], context),
                     name=f"slack:mention:{event['channel']}:{event['ts']}")


async def on_message(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                     client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """A direct message to the bot (edits, deletions and other subtypes are ignored)."""
    deps: Deps = context["deps"]
    if event.get("channel_type") != "im" or event.get("subtype") not in (None, "file_share", "thread_broadcast"):
        return
    if _from_bot(event) and not deps.config.answer_bots:
        return
    deps.tasks.spawn(_thread_answer(deps, client, event, delivery_of(body, request), event.get("thread_ts"),
                                    context), name=f"slack:dm:{event['channel']}:{event['ts']}")


def _from_bot(event: Mapping[str, Any]) -> bool:
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


async def _thread_answer(deps: Deps, client: AsyncWebClient, event: dict[str, Any],
                         delivery: Delivery, thread_ts: str | None, bolt: AsyncBoltContext) -> None:
    channel, user = event["channel"], event.get("user") or event.get("bot_id")
    reply = MessageReply(deps, client, channel, thread_ts)
    try:
        if not await claimed(deps, delivery):
            return
        try:
            if refusal := deps.refusal(user, channel):
                await tell(client, channel, user, thread_ts, refusal)
                return
            await reply.placeholder(placeholder_blocks())
            tq = slack_question(event, await _read_thread(client, event), bolt.bot_user_id, bolt.bot_id)
            if tq is None:
                await reply.show(text_blocks(messages.SLACK_HELP), messages.SLACK_HELP)
                return
            ctx = IncidentContext(thread=tq.thread, alert=tq.alert, filters=deps.filters(channel, tq.alert),
                                  entry_point="slack", channel=channel, user=user)
            await answer_into(deps, reply, tq.question, ctx)
        finally:
            if delivery[0]:  # best effort: an unfinished claim only means a late retry may be taken over
                await quietly(events.finish_event(deps.pool, PLATFORM, delivery[0]))
    except Exception as exc:
        await apologise(reply, exc, lambda t: tell(client, channel, user, thread_ts, t))


async def _read_thread(client: AsyncWebClient, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The thread before the asking message (parent alert and replies, oldest first), as Slack sends it."""
    if not event.get("thread_ts"):
        return []
    resp = await client.conversations_replies(channel=event["channel"], ts=event["thread_ts"], limit=200)
    return [m for m in resp.get("messages", []) if float(m.get("ts", 0)) < float(event["ts"])]


# --- The app ---------------------------------------------------------------------------------------------------------


@dataclass
class SlackBot:
    """The Bolt app with its Web API client and background tasks; served over HTTP or Socket Mode."""

    app: AsyncApp
    client: AsyncWebClient
    deps: Deps

    @property
    def tasks(self) -> Tasks:
        """Background work started by listeners."""
        return self.deps.tasks

    async def handle(self, request: web.Request) -> web.Response:
        """aiohttp handler of POST /slack/events (events, commands and interactivity)."""
        return await to_aiohttp_response(await self.app.async_dispatch(await to_bolt_request(request)))

    async def start(self) -> None:
        """Forget event claims older than a day (best effort: a failure only leaves old rows)."""
        try:
            await events.prune_events(self.deps.pool)
        except Exception:
            log.warning("slack: could not prune old event claims", exc_info=True)

    def socket_mode(self, app_token: str) -> AsyncSocketModeHandler:
        """A Socket Mode connection for the same app (call connect_async() / close_async())."""
        return AsyncSocketModeHandler(self.app, app_token, web_client=self.client)

    async def close(self, timeout: float = 30.0) -> None:
        """Let answers in flight finish (up to `timeout`)."""
        try:
            await self.tasks.drain(timeout)
        except TimeoutError:
            log.warning("slack: %d answers still running at shutdown", len(self.tasks))


def web_client(token: str, *, base_url: str | None = None, retries: int = 3) -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) and retries dropped connections."""
    url = (base_url or "https://slack.com/api/").rstrip("/") + "/"
    handlers = async_default_handlers() + [AsyncRateLimitErrorRetryHandler(max_retry_count=retries)]
    return AsyncWebClient(token=token, base_url=url, retry_handlers=handlers)


def build_slack_app(config: SlackConfig, answerer: Answerer, *, client: AsyncWebClient | None = None,
                    limiter: RateLimiter | None = None) -> SlackBot:
    """The Bolt app with every listener (bot/app.py's slack_config reads SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, ...)."""
    if not config.bot_token:
        raise ValueError("SLACK_BOT_TOKEN is required for the Slack adapter")
    if not config.signing_secret and not config.app_token:
        raise ValueError("SLACK_SIGNING_SECRET is required to receive Slack events over HTTP")
    client = client or web_client(config.bot_token, base_url=config.api_url, retries=config.api_retries)
    deps = Deps(answerer=answerer, config=config, tasks=Tasks(),
                limiter=limiter or RateLimiter(config.user_rate_limit, config.channel_rate_limit))
    app = AsyncApp(client=client, signing_secret=config.signing_secret, process_before_response=True,
                   name="runbook-bot", request_verification_enabled=bool(config.signing_secret),
                   logger=logging.getLogger("bot.slack.bolt"))
    register(app, deps)
    return SlackBot(app=app, client=client, deps=deps)


def register(app: AsyncApp, deps: Deps) -> None:
    """Attach the listeners, and `deps` to every request's context."""

    async def attach_deps(context: AsyncBoltContext, next: Callable[[], Awaitable[None]]) -> None:
        context["deps"] = deps
        await next()

    app.use(attach_deps)
    app.command("/runbook")(on_runbook)
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event("reaction_added")(on_reaction)
    app.event("reaction_removed")(on_reaction)
    app.action(ACTION_UP)(on_vote_button)
    app.action(ACTION_DOWN)(on_vote_button)
    app.action(ACTION_SHARE)(on_share)
    app.view(FEEDBACK_VIEW)(on_comment)
