"""Feedback from Teams: 👍 / 👎 card buttons (an `Action.Execute` invoke answered with a short message,
or an `Action.Submit` message from older clients) with the comment typed into the card, and 👍 / 👎
reactions on an answer card. Votes land in the same `feedback` table as Slack's (platform "teams",
channel = the conversation, message = the card's activity id, user = the Entra object id)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from microsoft_agents.activity import Activity, AdaptiveCardInvokeResponse
from microsoft_agents.hosting.core import TurnContext, TurnState

from bot import messages
from bot.chat import core as chat
from bot.chat.background import DB_ERRORS
from bot.observability import count_vote
from bot.chat import corrections
from bot.teams.cards import CHOICE_INPUT, COMMENT_INPUT, MORE_INPUT, OTHER_INPUT, correction_card
from bot.teams.reply import PLATFORM, Deps, apology, card_message, quietly, user_of
from bot.teams.thread import conversation_key
from bot.records import events, feedback

MESSAGE_RESPONSE = "application/vnd.microsoft.activity.message"


async def record_vote(deps: Deps, activity: Activity, data: Mapping[str, Any]) -> str:
    """Store the vote (and a comment typed into the card) on the card message; the text to show the user."""
    answer_id, vote = int(data["answer_id"]), 1 if int(data["vote"]) > 0 else -1
    conversation = conversation_key(activity.conversation.id)
    message_id = activity.reply_to_id or f"answer:{answer_id}"
    user = user_of(activity) or "unknown"
    row = feedback.Vote(PLATFORM, conversation, message_id, user, answer_id, vote, "button")
    if await feedback.record_vote(deps.pool, row) is None:
        return messages.TEAMS_FEEDBACK_GONE
    deps.answerer.feedback_changed()
    count_vote(vote)
    comment = str(data.get(COMMENT_INPUT) or "").strip()
    if comment and await feedback.add_comment(deps.pool, PLATFORM, conversation, message_id, user, comment):
        return messages.TEAMS_FEEDBACK_COMMENT_THANKS
    return messages.TEAMS_FEEDBACK_THANKS


async def on_vote(deps: Deps, context: TurnContext, state: TurnState, data: Any) -> AdaptiveCardInvokeResponse:
    """👍 / 👎 (Action.Execute invoke): record the vote now and answer the invoke with a short message;
    after a 👎, a card in the thread asks which runbook would have been right."""

    async def vote() -> str:
        shown = await record_vote(deps, context.activity, data or {})
        if int((data or {}).get("vote", 0)) < 0 and shown != messages.TEAMS_FEEDBACK_GONE:
            await ask_for_correction(deps, context, int(data["answer_id"]))
        return shown

    return _invoke_reply(await _shown("recording a vote", vote))


async def _shown(what: str, work: Callable[[], Awaitable[str]], *,
                 gone: tuple[type[BaseException], ...] = ()) -> str:
    """What an invoke answers: the work's own message, or why it failed (the answer is gone, the
    database is down, anything else: a reference to the logged error)."""
    try:
        return await work()
    except gone:
        return messages.CORRECTION_ANSWER_GONE
    except DB_ERRORS as exc:
        return apology(exc, what)
    except Exception as exc:
        return messages.TEAMS_FEEDBACK_FAILED.format(ref=chat.failure_reference(exc, what, PLATFORM))


def _invoke_reply(shown: str) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=200, type=MESSAGE_RESPONSE, value=shown)


async def ask_for_correction(deps: Deps, context: TurnContext, answer_id: int) -> None:
    """Post the "which runbook would have been right?" card (best effort: the vote is already in)."""
    found = await corrections.offer(deps.answerer, answer_id, platform=PLATFORM, user=user_of(context.activity))
    if found is not None:
        await quietly(context.send_activity(card_message(correction_card(found))))


async def on_fix(deps: Deps, context: TurnContext, state: TurnState, data: Any) -> AdaptiveCardInvokeResponse:
    """The correction card sent (Action.Execute): a chosen runbook or a typed link or path becomes a
    correction of the answer."""
    data = data or {}
    given = next((str(data.get(k) or "").strip() for k in (OTHER_INPUT, CHOICE_INPUT, MORE_INPUT)
                  if str(data.get(k) or "").strip()), "")
    activity = context.activity
    name = activity.from_property.name if activity.from_property else None

    async def correct() -> str:
        return await corrections.correct(deps.answerer, int(data["answer_id"]), given, platform=PLATFORM,
                                         user=user_of(activity) or "unknown", user_name=name)

    return _invoke_reply(await _shown("recording a correction", correct, gone=(KeyError, ValueError, TypeError)))


async def on_fix_submit(deps: Deps, context: TurnContext, state: TurnState, data: Any) -> None:
    """The correction card from a client without Universal Actions: save it, then say so in the thread."""
    response = await on_fix(deps, context, state, data)
    await quietly(context.send_activity(str(response.value)))


async def on_vote_submit(deps: Deps, context: TurnContext, state: TurnState, data: Any) -> None:
    """👍 / 👎 from a client without Universal Actions (Action.Submit): record it, then say so in the thread."""
    response = await on_vote(deps, context, state, data)
    await quietly(context.send_activity(str(response.value)))


def reaction_vote(kind: str | None) -> int | None:
    """+1 for Teams' 👍 ("like"), -1 for a 👎 emoji reaction, None for anything else."""
    kind = (kind or "").lower()
    if kind in ("like", "+1") or "thumbsup" in kind or kind.startswith("1f44d"):
        return 1
    if kind == "-1" or "thumbsdown" in kind or kind.startswith("1f44e"):
        return -1
    return None


async def on_reaction(deps: Deps, context: TurnContext, state: TurnState) -> None:
    """Reactions on an answer card vote; removing the reaction withdraws the vote (in the background)."""
    activity = context.activity
    seen = [(reaction_vote(r.type), True) for r in activity.reactions_added or []]
    seen += [(reaction_vote(r.type), False) for r in activity.reactions_removed or []]
    changes = [(vote, added) for vote, added in seen if vote is not None]
    if changes and activity.reply_to_id:
        deps.tasks.spawn(_record_reactions(deps, activity.model_copy(deep=True), changes), name="teams:reaction")


async def _record_reactions(deps: Deps, activity: Activity, changes: list[tuple[int, bool]]) -> None:
    conversation, message_id = conversation_key(activity.conversation.id), activity.reply_to_id or ""
    user = user_of(activity) or "unknown"
    try:
        answer_id = await events.answer_for_message(deps.pool, PLATFORM, conversation, message_id)
        if answer_id is None:
            return  # a reaction on some other message
        for vote, added in changes:
            if added:
                row = feedback.Vote(PLATFORM, conversation, message_id, user, answer_id, vote, "reaction")
                await feedback.record_vote(deps.pool, row)
                count_vote(vote)
            else:
                await feedback.undo_vote(deps.pool, PLATFORM, conversation, message_id, user, vote)
            deps.answerer.feedback_changed()
    except Exception as exc:
        apology(exc, "recording a reaction")  # logged; Teams has no private notice to show it in
