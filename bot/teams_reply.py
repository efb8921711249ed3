"""What the Teams handlers share: settings, rate limits, filters and links, and the reply card that
is posted as a placeholder and then updated into the answer (or an apology)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from microsoft_agents.activity import Activity, Attachment
from microsoft_agents.hosting.core import TurnContext
from psycopg_pool import AsyncConnectionPool

from bot import messages
from bot.alerts import search_filters
from bot.answer import Answer
from bot.answering import Answerer
from bot.observability import STAGE_SECONDS
from bot.ratelimit import RateLimiter
from bot.settings import Settings
from bot.background import DB_ERRORS, Tasks
from bot.teams_cards import CONTENT_TYPE, Card, text_card
from bot.teams_thread import thread_root
from retrieval import events
from retrieval.search import SearchFilters, document_link

log = logging.getLogger(__name__)
PLATFORM = "teams"


@dataclass(frozen=True)
class TeamsConfig:
    """The adapter's knobs (from Settings)."""

    channel_sources: Mapping[str, Sequence[str]] = field(default_factory=dict)  # conversation -> sources; "*"
    source_links: Mapping[str, str] = field(default_factory=dict)  # source -> base URL of its links
    alert_filters: tuple[str, ...] = ()  # alert labels used as strict filters (service, environment)

    @classmethod
    def from_settings(cls, settings: Settings) -> TeamsConfig:
        """The Teams block of the settings (link bases default to Slack's)."""
        return cls(channel_sources=dict(settings.teams_channel_sources),
                   source_links=dict(settings.teams_source_links or settings.slack_source_links),
                   alert_filters=tuple(p.strip() for p in settings.teams_alert_filters.split(",") if p.strip()))


@dataclass
class Deps:
    """What the handlers need."""

    answerer: Answerer
    config: TeamsConfig
    limiter: RateLimiter
    tasks: Tasks

    @property
    def pool(self) -> AsyncConnectionPool:
        """The database pool (events, answer messages, feedback)."""
        return self.answerer.pool

    def refusal(self, user: str | None, conversation: str | None) -> str | None:
        """Why a question may not go ahead now (rate limits), or None; `conversation` is None in 1:1 chats."""
        decision = self.limiter.check(user, conversation)
        if decision.allowed:
            return None
        scope = messages.TEAMS_SCOPE_USER if decision.scope == "user" else messages.TEAMS_SCOPE_CHANNEL
        return messages.TEAMS_RATE_LIMITED.format(scope=scope, seconds=max(1, round(decision.retry_after_s)))

    def filters(self, conversation: str, alert: Mapping[str, str]) -> SearchFilters | None:
        """The conversation's runbook sources and, when configured, the alert's labels as filters."""
        sources = self.config.channel_sources.get(conversation) or self.config.channel_sources.get("*") or ()
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


def card_message(content: Card) -> Activity:
    """A message activity carrying one Adaptive Card."""
    return Activity(type="message", attachments=[Attachment(content_type=CONTENT_TYPE, content=content)])


class CardReply:
    """A card the bot posts in the conversation (in the thread) and then updates into the answer."""

    def __init__(self, deps: Deps, context: TurnContext, conversation: str) -> None:
        self.deps, self.context, self.conversation = deps, context, conversation
        self.id: str | None = None  # the posted card's activity id

    async def placeholder(self, content: Card) -> None:
        """Post the "Searching runbooks…" card."""
        with STAGE_SECONDS.labels("teams_post").time():
            self.id = (await self.context.send_activity(card_message(content))).id or None

    async def show(self, content: Card, answer_id: int | None = None) -> None:
        """Update the placeholder into `content` (or post it when there is none); remember which answer
        the message shows before it shows it, so an early reaction finds it."""
        if self.id is None:
            self.id = (await self.context.send_activity(card_message(content))).id or None
            await self._remember(answer_id)
            return
        await self._remember(answer_id)
        update = card_message(content)
        update.id = self.id
        with STAGE_SECONDS.labels("teams_post").time():
            await self.context.update_activity(update)

    async def _remember(self, answer_id: int | None) -> None:
        """Best effort: without the mapping, reactions on the card are not votes (buttons still are)."""
        if answer_id is None or self.id is None:
            return
        root = thread_root(self.context.activity.conversation.id)
        try:
            await events.remember_message(self.deps.pool, PLATFORM, self.conversation, self.id, answer_id, root)
        except Exception:
            log.warning("teams: could not record message %s as answer %s", self.id, answer_id, exc_info=True)


def apology(exc: BaseException, what: str = "answering") -> str:
    """The apology for a failure, which is logged with a reference the user can quote."""
    if isinstance(exc, DB_ERRORS):
        log.error("teams: %s failed, database unavailable: %s", what, exc)
        return messages.TEAMS_DATABASE_DOWN
    ref = uuid.uuid4().hex[:8]
    log.error("teams: %s failed (ref %s)", what, ref, exc_info=exc)
    return messages.TEAMS_APOLOGY.format(ref=ref)


async def apologise(reply: CardReply, exc: BaseException) -> None:
    """A short apology in place of the placeholder; if that fails, as a new message."""
    content = text_card(apology(exc))
    try:
        await reply.show(content)
        return
    except Exception:
        log.exception("teams: could not show the apology in place")
    if reply.id is not None:
        await quietly(reply.context.send_activity(card_message(content)))


async def quietly(work: Awaitable[Any]) -> None:
    """Await a best-effort step; a failure is logged, not raised."""
    try:
        await work
    except Exception:
        log.exception("teams: a best-effort step failed")


def user_of(activity: Activity) -> str | None:
    """Who sent an activity: the Entra object id when Teams gives it, else the channel account id."""
    sender = activity.from_property
    return (sender.aad_object_id or sender.id) if sender else None
