"""What the Teams handlers share: the configuration, rate limits, filters and links, and the reply card that
is posted as a placeholder and then updated into the answer (or an apology)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from microsoft_agents.activity import Activity, Attachment
from microsoft_agents.hosting.core import TurnContext

from bot import messages
from bot.chat import core as chat
from bot.teams.config import TeamsConfig
from bot.teams.cards import CONTENT_TYPE, Card, text_card
from bot.teams.thread import thread_root

log = logging.getLogger(__name__)
PLATFORM = "teams"


class Deps(chat.ChatDeps[TeamsConfig]):
    """What the handlers need."""

    def refusal(self, user: str | None, conversation: str | None) -> str | None:
        """Why a question may not go ahead now (rate limits), or None; `conversation` is None in 1:1 chats."""
        decision = self.limiter.check(user, conversation)
        if decision.allowed:
            return None
        scope = messages.TEAMS_SCOPE_USER if decision.scope == "user" else messages.TEAMS_SCOPE_CHANNEL
        return messages.TEAMS_RATE_LIMITED.format(scope=scope, seconds=max(1, round(decision.retry_after_s)))


def card_message(content: Card) -> Activity:
    """A message activity carrying one Adaptive Card."""
    return Activity(type="message", attachments=[Attachment(content_type=CONTENT_TYPE, content=content)])


class CardReply(chat.PlaceholderReply[Card]):
    """A card the bot posts in the conversation (in the thread) and then updates into the answer."""

    def __init__(self, deps: Deps, context: TurnContext, conversation: str) -> None:
        super().__init__(deps, PLATFORM, conversation, thread_root(context.activity.conversation.id))
        self.context = context

    async def placeholder(self, content: Card) -> None:
        """Post the "Searching runbooks…" card."""
        await self._placeholder(content)

    async def show(self, content: Card, answer_id: int | None = None) -> None:
        """Update the placeholder into `content` (or post it when there is none)."""
        await self._show(content, answer_id)

    async def _post(self, content: Card) -> str | None:
        return (await self.context.send_activity(card_message(content))).id or None

    async def _edit(self, message_id: str, content: Card) -> None:
        update = card_message(content)
        update.id = message_id
        await self.context.update_activity(update)


def apology(exc: BaseException, what: str = "answering") -> str:
    """The apology for a failure, which is logged with a reference the user can quote."""
    return chat.apology(exc, what, platform=PLATFORM, database_down=messages.TEAMS_DATABASE_DOWN,
                        unexpected=messages.TEAMS_APOLOGY)


async def apologise(reply: CardReply, exc: BaseException) -> None:
    """A short apology in place of the placeholder; if that fails, as a new message."""
    content = text_card(apology(exc))
    try:
        await reply.show(content)
        return
    except Exception:
        log.exception("teams: could not show the apology in place")
    if reply.message_id is not None:
        await quietly(reply.context.send_activity(card_message(content)))


async def quietly(work: Awaitable[Any]) -> None:
    """Await a best-effort step; a failure is logged, not raised."""
    await chat.quietly(work, PLATFORM)


def user_of(activity: Activity) -> str | None:
    """Who sent an activity: the Entra object id when Teams gives it, else the channel account id."""
    sender = activity.from_property
    return (sender.aad_object_id or sender.id) if sender else None
