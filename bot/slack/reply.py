"""What the Slack listeners share: the adapter's configuration, allow-list and rate limits, filters and links,
the fields they read from a payload (`Malformed` when one is missing), the replies (a message posted as a
placeholder and then edited into the answer, or the slash command's response_url), apologies and notices,
and the de-duplication of Events API deliveries."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.chat import core as chat
from bot.slack.blocks import Block, text_blocks
from bot.slack.config import SlackConfig
from bot.records import events

log = logging.getLogger(__name__)
PLATFORM = "slack"
Notify = Callable[[str], Awaitable[Any]]
Delivery = tuple[str | None, str]  # the Events API event id (None outside events) and the retry number


class Deps(chat.ChatDeps[SlackConfig]):
    """What the listeners need; Bolt hands it to them through `context["deps"]`."""

    def refusal(self, user: str | None, channel: str) -> str | None:
        """Why a question may not go ahead here and now (allow-list, rate limits), or None."""
        if not is_dm(channel) and self.config.allowed_channels and channel not in self.config.allowed_channels:
            return messages.SLACK_CHANNEL_NOT_ALLOWED
        decision = self.limiter.check(user, None if is_dm(channel) else channel)
        if not decision.allowed:
            scope = messages.SLACK_SCOPE_USER if decision.scope == "user" else messages.SLACK_SCOPE_CHANNEL
            return messages.SLACK_RATE_LIMITED.format(scope=scope, seconds=max(1, round(decision.retry_after_s)))
        return None


def is_dm(channel: str) -> bool:
    """True for a direct message channel."""
    return channel.startswith("D")


# --- Reading payloads ----------------------------------------------------------------------------------------------


class Malformed(ValueError):
    """A signed Slack request without what its listener needs: a field missing, empty or of the wrong type.
    The adapter's error handler answers it with a 400 (an Events API delivery with an ack) and a log line."""


_TS = re.compile(r"\d{1,12}(\.\d{1,9})?")


def value_at(data: Any, *path: str) -> Any:
    """What is at `path` in a Slack payload, e.g. value_at(view, "state", "values"); None when it is not there."""
    for key in path:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def field(data: Any, *path: str) -> str:
    """The non-empty text at `path` in a Slack payload, e.g. field(body, "user", "id")."""
    value = value_at(data, *path)
    if not isinstance(value, str) or not value:
        raise Malformed(f"no {'.'.join(path)}")
    return value


def message_of(event: Mapping[str, Any]) -> tuple[str, str]:
    """The channel and ts of a message event (a mention, a DM), with the fields answering reads checked."""
    channel, ts = field(event, "channel"), field(event, "ts")
    for key in ("ts", "thread_ts"):
        if event.get(key) is not None and not (isinstance(event[key], str) and _TS.fullmatch(event[key])):
            raise Malformed(f"{key} is not a message timestamp")
    for key in ("text", "user", "bot_id", "subtype"):
        if event.get(key) is not None and not isinstance(event[key], str):
            raise Malformed(f"{key} is not text")
    return channel, ts


def check_response_url(payload: Mapping[str, Any]) -> None:
    """Raise Malformed unless the payload has the response_url its replies go to."""
    if not field(payload, "response_url").startswith(("https://", "http://")):
        raise Malformed("response_url is not a URL")


# --- Replies: a placeholder first, then the answer in its place --------------------------------------------------


class MessageReply(chat.PlaceholderReply[tuple[list[Block], str]]):
    """A message the bot posts (in a thread, a channel or a DM) and then edits into the answer."""

    def __init__(self, deps: Deps, client: AsyncWebClient, channel: str, thread_ts: str | None = None) -> None:
        super().__init__(deps, PLATFORM, channel, thread_ts)
        self.client = client

    async def placeholder(self, blocks: list[Block]) -> None:
        """Post the "Searching runbooks..." message."""
        await self._placeholder((blocks, messages.SLACK_SEARCHING))

    async def show(self, blocks: list[Block], text: str, answer_id: int | None = None) -> None:
        """Replace the placeholder with `blocks` (or post them when there is none)."""
        await self._show((blocks, text), answer_id)

    async def _post(self, content: tuple[list[Block], str]) -> str | None:
        blocks, text = content
        resp = await self.client.chat_postMessage(channel=self.conversation, thread_ts=self.thread, blocks=blocks,
                                                  text=text)
        return resp["ts"]

    async def _edit(self, message_id: str, content: tuple[list[Block], str]) -> None:
        blocks, text = content
        await self.client.chat_update(channel=self.conversation, ts=message_id, blocks=blocks, text=text)


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


# --- Apologies and notices -----------------------------------------------------------------------------------------


def apology(exc: BaseException, what: str = "answering") -> str:
    """The apology for a failure, which is logged with a reference the user can quote."""
    return chat.apology(exc, what, platform=PLATFORM, database_down=messages.SLACK_DATABASE_DOWN,
                        unexpected=messages.SLACK_APOLOGY)


async def apologise(reply: Reply, exc: BaseException, fallback: Notify | None = None) -> None:
    """A short apology in place of the placeholder; if even that fails, through `fallback`."""
    text = apology(exc)
    try:
        await reply.show(text_blocks(text), text)
        return
    except Exception:
        log.exception("slack: could not post the apology where the question was asked")
    if fallback is not None:
        await quietly(fallback(text))


async def quietly(work: Awaitable[Any]) -> None:
    """Await a best-effort step (a notice, a bookkeeping write); a failure is logged, not raised."""
    await chat.quietly(work, PLATFORM)


async def tell(client: AsyncWebClient, channel: str, user: str | None, thread_ts: str | None, text: str) -> None:
    """A short notice only the user sees (a normal message in a DM)."""
    if is_dm(channel) or not user:
        await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)
    else:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)


def ephemeral_notice(respond: Any) -> Notify:
    """A notice through an interaction's response_url that only the user sees, leaving the message as it is."""
    return lambda text: respond(text=text, response_type="ephemeral", replace_original=False)


# --- Events API deliveries -----------------------------------------------------------------------------------------


def delivery_of(body: Mapping[str, Any], request: AsyncBoltRequest) -> Delivery:
    """The event id and the retry number of this delivery (X-Slack-Retry-Num, "0" for the first)."""
    retry = (request.headers.get("x-slack-retry-num") or ["0"])[0]
    return body.get("event_id"), retry


async def claimed(deps: Deps, delivery: Delivery) -> bool:
    """True if this delivery is the one to handle (a retry of a claimed event is not)."""
    event_id, retry = delivery
    if event_id and not await events.claim_event(deps.pool, PLATFORM, event_id):
        log.info("slack: event %s already handled; dropping delivery (retry %s)", event_id, retry)
        return False
    return True
