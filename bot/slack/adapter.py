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

A request that is not Slack's gets a 401; one signed with our secret that is still unusable (a body
that does not parse, a timestamp that is not a number, a payload without what its listener reads) gets
a 400, or an empty ack for an Events API delivery, which Slack would otherwise retry; each with a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, async_default_handlers
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.answering import Answerer, EmptyQuestion
from bot.chat.background import Tasks
from bot.chat.corrections import SHOWN_FIRST, fix_target
from bot.context import IncidentContext
from bot.chat.ratelimit import RateLimiter
from bot.slack.blocks import (
    ACTION_DOWN, ACTION_FIX_BUTTON, ACTION_FIX_NONE, ACTION_FIX_PICK, ACTION_SHARE, ACTION_UP, FEEDBACK_VIEW,
    HELP_WORDS, Block, answer_blocks, fallback_text, placeholder_blocks, slack_question, text_blocks,
)
from bot.slack.config import SlackConfig
from bot.slack.feedback import corrected, on_comment, on_fix_choice, on_reaction, on_share, on_vote_button
from bot.slack.reply import (
    PLATFORM, Delivery, Deps, Malformed, MessageReply, Reply, ResponseUrlReply, apologise, apology, claimed, delivery_of,
    check_response_url, ephemeral_notice, field, message_of, quietly, tell,
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
    user, channel = field(command, "user_id"), field(command, "channel_id")
    check_response_url(command)
    text = str(command.get("text") or "").strip()
    if text.lower() in HELP_WORDS:
        await ack(response_type="ephemeral", text=messages.SLACK_HELP, blocks=text_blocks(messages.SLACK_HELP))
        return
    if refusal := deps.refusal(user, channel):
        await ack(response_type="ephemeral", text=refusal)
        return
    if (target := fix_target(text)) is not None:  # `/runbook fix <path>`: the channel's latest answer
        await ack(response_type="ephemeral", text=messages.SLACK_SEARCHING)
        deps.tasks.spawn(_fix(deps, ephemeral_notice(respond), channel, None, user, target), name="slack:fix")
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
    channel, ts = message_of(event)
    if _from_bot(event) and not deps.config.answer_bots:
        return
    delivery = delivery_of(body, request)
    deps.tasks.spawn(_thread_answer(deps, client, event, delivery, event.get("thread_ts") or ts, context),
                     name=f"slack:mention:{channel}:{ts}")


async def on_message(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                     client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """A direct message to the bot (edits, deletions and other subtypes are ignored)."""
    deps: Deps = context["deps"]
    if event.get("channel_type") != "im" or event.get("subtype") not in (None, "file_share", "thread_broadcast"):
        return
    channel, ts = message_of(event)
    if _from_bot(event) and not deps.config.answer_bots:
        return
    deps.tasks.spawn(_thread_answer(deps, client, event, delivery_of(body, request), event.get("thread_ts"),
                                    context), name=f"slack:dm:{channel}:{ts}")


def _without_mentions(text: Any) -> str:
    return re.sub(r"<@[A-Z0-9]+(?:\|[^>]*)?>", " ", text if isinstance(text, str) else "").strip()


async def _fix(deps: Deps, say: Any, channel: str, thread: str | None, user: str, target: str) -> None:
    """`fix <path or link>`: a correction of the latest answer in the thread (or the channel)."""
    try:
        answer_id = await events.latest_answer(deps.pool, PLATFORM, channel, thread)
    except Exception as exc:
        await quietly(say(apology(exc, "finding the answer to correct")))
        return
    await quietly(say(messages.CORRECTION_NO_ANSWER if answer_id is None
                      else await corrected(deps, answer_id, target, user)))


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
            if (target := fix_target(_without_mentions(event.get("text")))) is not None:
                await _fix(deps, lambda said: tell(client, channel, user, thread_ts, said), channel, thread_ts,
                           user, target)
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
        """aiohttp handler of POST /slack/events (events, commands and interactivity): a 401 for a request
        Slack did not sign, a 400 for a signed one that cannot be read; Bolt handles the rest."""
        raw = await request.read()
        secret = self.deps.config.signing_secret
        if secret and (refused := _refusal(secret, raw, request.headers, time.time())):
            return web.json_response({"error": refused[1]}, status=refused[0])
        try:
            bolt_request = _bolt_request(raw, request)
        except (ValueError, TypeError, AttributeError, LookupError) as exc:  # broken JSON or form payload, UTF-8
            log.warning("slack: malformed request refused: its body cannot be read (%s: %s)",
                        type(exc).__name__, str(exc)[:200])
            return web.json_response({"error": messages.SLACK_MALFORMED}, status=400)
        return await to_aiohttp_response(await self.app.async_dispatch(bolt_request))

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


_MAX_AGE_S = 300  # as Bolt: a signed request older than five minutes may be a replay


def _refusal(secret: str, raw: bytes, headers: Mapping[str, str], now: float) -> tuple[int, str] | None:
    """Why a request is refused before Bolt reads it, as (status, error), or None when Slack signed it in
    the last five minutes. Checked on the raw bytes: Bolt's own check fails with an exception on a body
    that is not UTF-8 or a timestamp that is not a number."""
    timestamp, signature = headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
    base = b"v0:" + timestamp.encode(errors="surrogateescape") + b":" + raw
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode(errors="surrogateescape")):
        log.info("slack: request refused: not signed with the signing secret")
        return 401, "invalid request"
    if not (timestamp.isascii() and timestamp.isdigit()):
        log.warning("slack: malformed request refused: signed, but its timestamp %r is not a number", timestamp[:40])
        return 400, messages.SLACK_MALFORMED
    if abs(now - int(timestamp)) > _MAX_AGE_S:
        log.info("slack: request refused: signed %d s ago", now - int(timestamp))
        return 401, "invalid request"
    return None


def _bolt_request(raw: bytes, request: web.Request) -> AsyncBoltRequest:
    """Bolt's request for a body (Bolt parses it here); ValueError for one that Bolt's middleware and
    argument injection would fail on (they read an event, a view, actions and the ids the Web API client sends
    without checking their types)."""
    bolt_request = AsyncBoltRequest(body=raw.decode(), query=request.query_string,
                                    headers=request.headers)  # type: ignore[arg-type]
    body = bolt_request.body
    for key in ("event", "view"):
        if not isinstance(body.get(key, {}), dict):
            raise ValueError(f"its {key} is not an object")
    actions = body.get("actions", [{}])
    if not (isinstance(actions, list) and actions and all(isinstance(a, dict) for a in actions)):
        raise ValueError("its actions are not a list of objects")
    ids = {key: bolt_request.context.get(key) for key in ("enterprise_id", "team_id", "user_id", "channel_id")}
    if any(value is not None and not isinstance(value, str) for value in ids.values()):
        raise ValueError(f"an id in it is not text: {ids}")
    return bolt_request


async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
    """Bolt's error handler: a malformed request (`Malformed`) gets a 400, an Events API delivery an
    empty ack (Slack retries anything else), with a log line; any other error is a bug, logged with its
    traceback, and Bolt answers 500."""
    kind = body.get("type") or ("command" if body.get("command") else "request")
    if isinstance(error, Malformed):
        log.warning("slack: malformed %s refused: %s", kind, error)
        if kind == "event_callback":
            return BoltResponse(status=200, body="")
        return BoltResponse(status=400, body=json.dumps({"error": messages.SLACK_MALFORMED}),
                            headers={"content-type": "application/json"})
    log.error("slack: a request (%s) failed", kind, exc_info=error)
    return None


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

    app.error(on_error)
    app.use(attach_deps)
    app.command("/runbook")(on_runbook)
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event("reaction_added")(on_reaction)
    app.event("reaction_removed")(on_reaction)
    app.action(ACTION_UP)(on_vote_button)
    app.action(ACTION_DOWN)(on_vote_button)
    app.action(ACTION_SHARE)(on_share)
    app.action(ACTION_FIX_PICK)(on_fix_choice)
    for n in range(1, SHOWN_FIRST + 1):  # by name, not a pattern: a malformed action id must not reach a regex
        app.action(f"{ACTION_FIX_BUTTON}{n}")(on_fix_choice)
    app.action(ACTION_FIX_NONE)(on_fix_choice)
    app.view(FEEDBACK_VIEW)(on_comment)
