"""The Slack adapter: a Bolt (async) app over the platform-neutral core.

Listeners are plain functions whose arguments Bolt injects by name; each one acks at once (or
returns, for events) and hands the slow work to a tracked background task, so Slack sees the ack
within milliseconds and tests and shutdown can wait for the work (`SlackBot.tasks.drain()`).
Events API deliveries are de-duplicated by event_id in Postgres; a failure anywhere ends in a
short apology where the user asked, never in silence.

Entry points: `/runbook <question>`, a mention in a thread (the thread and its alert are read),
a direct message; 👍 / 👎 buttons, reactions and the 👎 comment modal record feedback.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from psycopg_pool import AsyncConnectionPool
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, async_default_handlers
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.alerts import ThreadMessage, search_filters, thread_question
from bot.answer import Answer
from bot.answering import Answerer, EmptyQuestion
from bot.background import DB_ERRORS, Tasks
from bot.context import IncidentContext
from bot.observability import STAGE_SECONDS, count_vote
from bot.ratelimit import RateLimiter
from bot.settings import Settings
from bot.slack_blocks import (
    ACTION_DOWN, ACTION_SHARE, ACTION_UP, FEEDBACK_VIEW, Block, answer_blocks, comment_modal, fallback_text,
    placeholder_blocks, text_blocks, thread_message,
)
from guardrails.inputs import normalise_question
from retrieval import events, feedback
from retrieval.search import SearchFilters, document_link

log = logging.getLogger(__name__)
PLATFORM = "slack"
_VOTES = {"+1": 1, "thumbsup": 1, "-1": -1, "thumbsdown": -1}
Notify = Callable[[str], Awaitable[Any]]
HELP_WORDS = {"", "help", "?", "usage"}


@dataclass(frozen=True)
class SlackConfig:
    """The adapter's knobs (from Settings)."""

    visibility: str = "channel"  # /runbook answers: "channel" or "ephemeral" (with a share button)
    allowed_channels: frozenset[str] = frozenset()  # empty: every channel; DMs are always allowed
    channel_sources: Mapping[str, Sequence[str]] = field(default_factory=dict)  # channel -> sources; "*" default
    source_links: Mapping[str, str] = field(default_factory=dict)  # source -> base URL of its links
    alert_filters: tuple[str, ...] = ()  # alert labels used as strict filters (service, environment)
    answer_bots: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> SlackConfig:
        """The Slack block of the settings."""
        return cls(visibility=settings.slack_answer_visibility,
                   allowed_channels=frozenset(settings.slack_allowed_channels),
                   channel_sources=dict(settings.slack_channel_sources),
                   source_links=dict(settings.slack_source_links),
                   alert_filters=tuple(settings.slack_alert_filters), answer_bots=settings.slack_answer_bots)


@dataclass
class Deps:
    """What the listeners need; Bolt hands it to them through `context["deps"]`."""

    answerer: Answerer
    config: SlackConfig
    limiter: RateLimiter
    tasks: Tasks

    @property
    def pool(self) -> AsyncConnectionPool:
        """The database pool (events, answer messages, feedback)."""
        return self.answerer.pool

    def refusal(self, user: str | None, channel: str) -> str | None:
        """Why a question may not go ahead here and now (allow-list, rate limits), or None."""
        if not _is_dm(channel) and self.config.allowed_channels and channel not in self.config.allowed_channels:
            return messages.SLACK_CHANNEL_NOT_ALLOWED
        decision = self.limiter.check(user, None if _is_dm(channel) else channel)
        if not decision.allowed:
            scope = messages.SLACK_SCOPE_USER if decision.scope == "user" else messages.SLACK_SCOPE_CHANNEL
            return messages.SLACK_RATE_LIMITED.format(scope=scope, seconds=max(1, round(decision.retry_after_s)))
        return None

    def filters(self, channel: str, alert: Mapping[str, str]) -> SearchFilters | None:
        """The channel's runbook sources and, when configured, the alert's labels as filters."""
        sources = self.config.channel_sources.get(channel) or self.config.channel_sources.get("*") or ()
        return search_filters(list(sources), dict(alert), self.config.alert_filters)

    async def links(self, answer: Answer) -> dict[int, str]:
        """Source links built from the per-source base URLs of the configuration."""
        if not self.config.source_links or not answer.sources:
            return {}
        names = await events.chunk_sources(self.pool, [s.chunk_id for s in answer.sources])
        out: dict[int, str] = {}
        for s in answer.sources:
            base = self.config.source_links.get(names.get(s.chunk_id, ""))
            if base and (link := document_link(base, s.path, s.heading_path)):
                out[s.id] = link
        return out


def _is_dm(channel: str) -> bool:
    return channel.startswith("D")


# --- Replies: a placeholder first, then the answer in its place --------------------------------------------------


class MessageReply:
    """A message the bot posts (in a thread, a channel or a DM) and then edits into the answer."""

    def __init__(self, deps: Deps, client: AsyncWebClient, channel: str, thread_ts: str | None = None) -> None:
        self.deps, self.client, self.channel, self.thread_ts = deps, client, channel, thread_ts
        self.ts: str | None = None  # the placeholder's, once posted

    async def placeholder(self, blocks: list[Block]) -> None:
        """Post the "Searching runbooks..." message."""
        with STAGE_SECONDS.labels("slack_post").time():
            resp = await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, blocks=blocks,
                                                      text=messages.SLACK_SEARCHING)
        self.ts = resp["ts"]

    async def show(self, blocks: list[Block], text: str, answer_id: int | None = None) -> None:
        """Replace the placeholder with `blocks` (or post them when there is none); remember which
        answer the message shows before it shows it, so an early reaction finds it."""
        if self.ts is None:
            resp = await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts,
                                                      blocks=blocks, text=text)
            self.ts = resp["ts"]
            await self._remember(answer_id)
            return
        await self._remember(answer_id)
        with STAGE_SECONDS.labels("slack_post").time():
            await self.client.chat_update(channel=self.channel, ts=self.ts, blocks=blocks, text=text)

    async def _remember(self, answer_id: int | None) -> None:
        """Best effort: without the mapping, reactions on the message are not votes (buttons still are)."""
        if answer_id is None or self.ts is None:
            return
        try:
            await events.remember_message(self.deps.pool, PLATFORM, self.channel, self.ts, answer_id,
                                          self.thread_ts)
        except Exception:
            log.warning("slack: could not record message %s as answer %s", self.ts, answer_id, exc_info=True)


class ResponseUrlReply:
    """A reply through the slash command's response_url: ephemeral, or visible where the bot is no member."""

    def __init__(self, respond: Callable[..., Awaitable[Any]], *, ephemeral: bool, shown: bool = False) -> None:
        self.respond = respond
        self.response_type = "ephemeral" if ephemeral else "in_channel"
        self.shown = shown  # a placeholder is showing (the ack itself can be one)

    async def placeholder(self, blocks: list[Block]) -> None:
        """Show the placeholder."""
        await self.respond(blocks=blocks, text=messages.SLACK_SEARCHING, response_type=self.response_type)
        self.shown = True

    async def show(self, blocks: list[Block], text: str, answer_id: int | None = None) -> None:
        """Replace the placeholder with the answer."""
        await self.respond(blocks=blocks, text=text, response_type=self.response_type, replace_original=self.shown)
        self.shown = True


Reply = MessageReply | ResponseUrlReply


def apology(exc: BaseException, what: str = "answering") -> str:
    """The apology for a failure, which is logged with a reference the user can quote."""
    if isinstance(exc, DB_ERRORS):
        log.error("slack: %s failed, database unavailable: %s", what, exc)
        return messages.SLACK_DATABASE_DOWN
    ref = uuid.uuid4().hex[:8]
    log.error("slack: %s failed (ref %s)", what, ref, exc_info=exc)
    return messages.SLACK_APOLOGY.format(ref=ref)


async def apologise(reply: Reply, exc: BaseException, fallback: Notify | None = None) -> None:
    """A short apology in place of the placeholder; if even that fails, through `fallback`."""
    text = apology(exc)
    try:
        await reply.show(text_blocks(text), text)
        return
    except Exception:
        log.exception("slack: could not post the apology where the question was asked")
    if fallback is not None:
        await _quietly(fallback(text))


async def answer_into(deps: Deps, reply: Reply, question: str, ctx: IncidentContext, *,
                      asked_by: str | None = None, share: bool = False) -> None:
    """Answer the question and show it in the reply (help for an empty question)."""
    try:
        answer = await deps.answerer.answer(question, ctx)
    except EmptyQuestion:
        await reply.show(text_blocks(messages.SLACK_HELP), messages.SLACK_HELP)
        return
    blocks = answer_blocks(answer, links=await deps.links(answer), asked_by=asked_by, share=share)
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
        await apologise(reply, exc, _ephemeral(respond))


async def _placeholder_or_response_url(reply: MessageReply, respond: Any, blocks: list[Block]) -> Reply:
    """Post the placeholder as the bot; where it may not post (a private channel it is not in, someone
    else's DM), answer visibly through the command's response_url instead."""
    try:
        await reply.placeholder(blocks)
        return reply
    except SlackApiError as exc:
        log.info("slack: cannot post in %s (%s); using the response_url", reply.channel, exc.response.get("error"))
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
    delivery = _delivery(body, request)
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
    deps.tasks.spawn(_thread_answer(deps, client, event, _delivery(body, request), event.get("thread_ts"),
                                    context), name=f"slack:dm:{event['channel']}:{event['ts']}")


def _from_bot(event: Mapping[str, Any]) -> bool:
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


def _delivery(body: Mapping[str, Any], request: AsyncBoltRequest) -> tuple[str | None, str]:
    """The event id and the retry number of this delivery (X-Slack-Retry-Num, "0" for the first)."""
    retry = (request.headers.get("x-slack-retry-num") or ["0"])[0]
    return body.get("event_id"), retry


async def _claimed(deps: Deps, delivery: tuple[str | None, str]) -> bool:
    """True if this delivery is the one to handle (a retry of a claimed event is not)."""
    event_id, retry = delivery
    if event_id and not await events.claim_event(deps.pool, PLATFORM, event_id):
        log.info("slack: event %s already handled; dropping delivery (retry %s)", event_id, retry)
        return False
    return True


async def _thread_answer(deps: Deps, client: AsyncWebClient, event: dict[str, Any],
                         delivery: tuple[str | None, str], thread_ts: str | None, bolt: AsyncBoltContext) -> None:
    channel, user = event["channel"], event.get("user") or event.get("bot_id")
    reply = MessageReply(deps, client, channel, thread_ts)
    try:
        if not await _claimed(deps, delivery):
            return
        try:
            if refusal := deps.refusal(user, channel):
                await _tell(client, channel, user, thread_ts, refusal)
                return
            await reply.placeholder(placeholder_blocks())
            earlier, asking = await _read_thread(client, event, bolt)
            asked = normalise_question(event.get("text", ""), bot_user_id=bolt.bot_user_id).text
            if asked and asked.lower() in HELP_WORDS:
                await reply.show(text_blocks(messages.SLACK_HELP), messages.SLACK_HELP)
                return
            tq = thread_question(asked, earlier, asking=asking)
            ctx = IncidentContext(thread=tq.thread, alert=tq.alert, filters=deps.filters(channel, tq.alert),
                                  entry_point="slack", channel=channel, user=user)
            await answer_into(deps, reply, tq.question, ctx)
        finally:
            if delivery[0]:  # best effort: an unfinished claim only means a late retry may be taken over
                await _quietly(events.finish_event(deps.pool, PLATFORM, delivery[0]))
    except Exception as exc:
        await apologise(reply, exc, lambda t: _tell(client, channel, user, thread_ts, t))


async def _tell(client: AsyncWebClient, channel: str, user: str | None, thread_ts: str | None, text: str) -> None:
    """A short notice only the user sees (a normal message in a DM)."""
    if _is_dm(channel) or not user:
        await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)
    else:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)


async def _read_thread(client: AsyncWebClient, event: dict[str, Any],
                       bolt: AsyncBoltContext) -> tuple[list[ThreadMessage], ThreadMessage]:
    """The thread before the asking message (parent alert and replies, oldest first), and that message."""
    asking = thread_message(event, bolt.bot_user_id, bolt.bot_id)
    if not event.get("thread_ts"):
        return [], asking
    resp = await client.conversations_replies(channel=event["channel"], ts=event["thread_ts"], limit=200)
    earlier = [m for m in resp.get("messages", []) if float(m.get("ts", 0)) < float(event["ts"])]
    return [thread_message(m, bolt.bot_user_id, bolt.bot_id) for m in earlier], asking


# --- Feedback: buttons, reactions, the comment modal, sharing --------------------------------------------------------


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
        await _quietly(_ephemeral(respond)(apology(exc, "recording a vote")))


def _ephemeral(respond: Any) -> Notify:
    return lambda text: respond(text=text, response_type="ephemeral", replace_original=False)


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
        await _quietly(_tell(client, channel, user, None, apology(exc, "storing a comment")))


async def on_reaction(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                      client: AsyncWebClient, request: AsyncBoltRequest) -> None:
    """👍 / 👎 reactions on an answer vote; removing the reaction withdraws the vote."""
    deps: Deps = context["deps"]
    vote = _VOTES.get(event.get("reaction", "").split("::")[0])
    item = event.get("item") or {}
    if vote is None or item.get("type") != "message" or event.get("user") == context.bot_user_id:
        return
    deps.tasks.spawn(_record_reaction(deps, client, event, vote, _delivery(body, request)), name="slack:reaction")


async def _record_reaction(deps: Deps, client: AsyncWebClient, event: dict[str, Any], vote: int,
                           delivery: tuple[str | None, str]) -> None:
    channel, ts, user = event["item"]["channel"], event["item"]["ts"], event["user"]
    try:
        if not await _claimed(deps, delivery):
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
        await _quietly(_tell(client, channel, user, None, apology(exc, "recording a reaction")))


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
            await _ephemeral(respond)(messages.SLACK_ANSWER_GONE)
            return
        data, asked_by = stored
        answer = Answer.model_validate({**data, "answer_id": answer_id})
        blocks = answer_blocks(answer, links=await deps.links(answer), asked_by=asked_by, shared_by=user)
        try:
            resp = await client.chat_postMessage(channel=channel, blocks=blocks, text=fallback_text(answer))
        except SlackApiError as exc:
            await _ephemeral(respond)(messages.SLACK_SHARE_FAILED.format(error=exc.response.get("error", "error")))
            return
        await events.remember_message(deps.pool, PLATFORM, channel, resp["ts"], answer_id)
        await respond(delete_original=True)
    except Exception as exc:
        await _quietly(_ephemeral(respond)(apology(exc, "sharing an answer")))


def _answer_id(action: Mapping[str, Any]) -> int:
    return int(json.loads(action["value"])["answer_id"])


def _channel_of(body: Mapping[str, Any]) -> str:
    return (body.get("channel") or {}).get("id") or body["container"]["channel_id"]


async def _quietly(work: Awaitable[Any]) -> None:
    """Await a best-effort step (a notice, a bookkeeping write); a failure is logged, not raised."""
    try:
        await work
    except Exception:
        log.exception("slack: a best-effort step failed")


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


def build_slack_app(settings: Settings, answerer: Answerer, *, client: AsyncWebClient | None = None,
                    limiter: RateLimiter | None = None) -> SlackBot:
    """The Bolt app with every listener, from settings (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, ...)."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    if not token:
        raise ValueError("SLACK_BOT_TOKEN is required for the Slack adapter")
    if not secret and not settings.slack_app_token:
        raise ValueError("SLACK_SIGNING_SECRET is required to receive Slack events over HTTP")
    client = client or web_client(token, base_url=settings.slack_api_url, retries=settings.slack_api_retries)
    deps = Deps(answerer=answerer, config=SlackConfig.from_settings(settings), tasks=Tasks(),
                limiter=limiter or RateLimiter(settings.slack_user_rate_limit, settings.slack_channel_rate_limit))
    app = AsyncApp(client=client, signing_secret=secret, process_before_response=True, name="runbook-bot",
                   request_verification_enabled=bool(secret), logger=logging.getLogger("bot.slack.bolt"))
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
