"""The Microsoft Teams adapter: a Microsoft 365 Agents SDK application over the platform-neutral core.

Teams posts activities to `POST /api/messages`; the SDK's aiohttp `CloudAdapter` authenticates them
(see bot/teams/auth.py) and routes them to the handlers below. A message to the bot (a mention in a
channel thread or group chat, a 1:1 chat, the `runbook` command) is acknowledged at once: the
answering happens in a tracked background task that re-enters the conversation through the SDK's
`continue_conversation_with_claims`, posts a "Searching runbooks…" card in the thread and updates it
into the answer card. Deliveries are de-duplicated by activity id in Postgres; a failure ends in a
short apology in the thread, never in silence. 👍 / 👎 buttons (`Action.Execute` invokes, or
`Action.Submit` messages on older clients) and 👍 reactions land in the same feedback table as Slack's.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import web
from microsoft_agents.activity import Activity, AdaptiveCardInvokeResponse
from microsoft_agents.hosting.aiohttp import CloudAdapter, jwt_authorization_decorator
from microsoft_agents.hosting.core import (
    AgentApplication, AgentAuthConfiguration, ApplicationOptions, ChannelServiceAdapter, ClaimsIdentity,
    MemoryStorage, OutboundHostValidator, RouteRank, TurnContext, TurnState,
)

from bot import messages
from bot.teams import auth as teams_auth
from bot.teams.config import TeamsConfig
from bot.chat.alerts import thread_question
from bot.answering import Answerer, EmptyQuestion
from bot.chat import corrections
from bot.chat.background import Tasks
from bot.chat.corrections import fix_target
from bot.context import IncidentContext
from bot.chat.ratelimit import RateLimiter
from bot.teams.cards import VERB_FIX, VERB_VOTE, answer_card, placeholder_card, text_card
from bot.teams.feedback import on_fix, on_fix_submit, on_reaction, on_vote, on_vote_submit
from bot.teams.reply import (
    PLATFORM, CardReply, Deps, apologise, apology, card_message, quietly, user_of,
)
from bot.teams.thread import Incoming, conversation_key, read_message, thread_root
from bot.records import events

log = logging.getLogger(__name__)
# The SDK keys aiohttp's app and request with plain strings ("agent_configuration", "claims_identity");
# aiohttp recommends typed keys and warns each time. Not ours to change.
warnings.filterwarnings("ignore", category=web.NotAppKeyWarning,
                        module=r"microsoft_agents\.hosting\.aiohttp\..*|bot\.teams")
HELP_WORDS = {"help", "?", "usage"}


# --- Messages: mentions, 1:1 chats, the runbook command ----------------------------------------------------------


async def on_message(deps: Deps, context: TurnContext, state: TurnState) -> None:
    """A message to the bot: read it now (cheap), answer in the background so the HTTP ack is immediate."""
    activity = context.activity
    if activity.from_property and activity.recipient and activity.from_property.id == activity.recipient.id:
        return
    incoming = read_message(activity.model_dump(by_alias=True, exclude_none=True, mode="json"),
                            activity.recipient.id if activity.recipient else None)
    adapter = cast(ChannelServiceAdapter, context.adapter)
    work = _continue(deps, adapter, context.identity or ClaimsIdentity(), activity.model_copy(deep=True), incoming)
    deps.tasks.spawn(work, name=f"teams:message:{activity.id}")


async def _continue(deps: Deps, adapter: ChannelServiceAdapter, identity: ClaimsIdentity, activity: Activity,
                    incoming: Incoming) -> None:
    """Re-enter the conversation (a new Connector client and token: the request's are closed by now)."""
    async def turn(context: TurnContext) -> None:
        await answer_message(deps, context, incoming)

    try:
        await adapter.continue_conversation_with_claims(identity, activity, turn)
    except Exception:
        log.exception("teams: could not reach conversation %s", activity.conversation.id)


async def _fix_in_thread(deps: Deps, activity: Any, conversation: str, target: str) -> str:
    """`fix <path or link>` in a thread: a correction of the latest answer in it."""
    answer_id = await events.latest_answer(deps.pool, PLATFORM, conversation, thread_root(activity.conversation.id))
    if answer_id is None:
        return messages.CORRECTION_NO_ANSWER
    name = activity.from_property.name if activity.from_property else None
    return await corrections.correct(deps.answerer, answer_id, target, platform=PLATFORM,
                                     user=user_of(activity) or "unknown", user_name=name)


async def answer_message(deps: Deps, context: TurnContext, incoming: Incoming) -> None:
    """Claim the delivery, then help, a refusal, or a placeholder updated into the answer, in the thread."""
    activity = context.activity
    conversation = conversation_key(activity.conversation.id)
    personal = activity.conversation.conversation_type == "personal"
    user, name = user_of(activity), activity.from_property.name if activity.from_property else None
    reply = CardReply(deps, context, conversation)
    event_id = f"{conversation}|{activity.id}"
    try:
        if not await events.claim_event(deps.pool, PLATFORM, event_id):
            log.info("teams: activity %s already handled; dropping this delivery", event_id)
            return
        try:
            if refusal := deps.refusal(user, None if personal else conversation):
                await reply.show(text_card(refusal))
                return
            if (target := fix_target(incoming.asked)) is not None:
                await reply.show(text_card(await _fix_in_thread(deps, activity, conversation, target)))
                return
            tq = thread_question(incoming.asked, incoming.earlier, asking=incoming.asking)
            if incoming.asked.lower() in HELP_WORDS or not tq.question.strip():
                await reply.show(text_card(messages.TEAMS_HELP))
                return
            await reply.placeholder(placeholder_card(tq.question, name))
            ctx = IncidentContext(thread=tq.thread, alert=tq.alert, filters=deps.filters(conversation, tq.alert),
                                  entry_point="teams", channel=conversation, user=user)
            await answer_into(deps, reply, tq.question, ctx, asked_by=name)
        finally:
            await quietly(events.finish_event(deps.pool, PLATFORM, event_id))
    except Exception as exc:
        await apologise(reply, exc)


async def answer_into(deps: Deps, reply: CardReply, question: str, ctx: IncidentContext, *,
                      asked_by: str | None = None) -> None:
    """Answer the question and show the card in the reply (help for an empty question)."""
    try:
        answer = await deps.answerer.answer(question, ctx)
    except EmptyQuestion:
        await reply.show(text_card(messages.TEAMS_HELP))
        return
    await reply.show(answer_card(answer, links=deps.links(answer), asked_by=asked_by), answer.answer_id)


async def on_conversation_update(deps: Deps, context: TurnContext, state: TurnState) -> None:
    """The bot added to a 1:1 chat: say what it does. Other membership and installation changes are ignored."""
    activity = context.activity
    bot = activity.recipient.id if activity.recipient else None
    added = [m for m in activity.members_added or [] if m.id == bot]
    if activity.type == "conversationUpdate" and added and activity.conversation.conversation_type == "personal":
        await quietly(context.send_activity(card_message(text_card(messages.TEAMS_HELP))))


async def on_turn_error(context: TurnContext, error: Exception) -> None:
    """The SDK's last resort: log with a reference and apologise (never the exception text)."""
    await quietly(context.send_activity(card_message(text_card(apology(error, "handling an activity")))))


# --- The app ---------------------------------------------------------------------------------------------------------


@dataclass
class TeamsBot:
    """The Agents SDK application and adapter with their background tasks, served on POST /api/messages."""

    app: AgentApplication[TurnState]
    adapter: CloudAdapter
    deps: Deps
    auth: AgentAuthConfiguration
    dev_mode: bool = False

    def __post_init__(self) -> None:
        self._authorized = jwt_authorization_decorator(self._process)

    @property
    def tasks(self) -> Tasks:
        """Background work started by handlers."""
        return self.deps.tasks

    async def _process(self, request: web.Request) -> web.Response:
        response = await self.adapter.process(request, self.app)
        return response if response is not None else web.Response(status=202)

    async def handle(self, request: web.Request) -> web.Response:
        """aiohttp handler of POST /api/messages: the SDK's JWT check (loopback check in development mode),
        then the SDK's dispatch to the handlers."""
        if not self.dev_mode:
            return cast(web.Response, await self._authorized(request))
        if not teams_auth.local_request(request):
            return web.json_response({"error": "development mode accepts local requests only"}, status=401)
        return await self._process(request)

    def mount(self, app: web.Application) -> None:
        """Add POST /api/messages, and the SDK's auth configuration where its JWT check looks for it."""
        app["agent_configuration"] = self.auth  # the key jwt_authorization_decorator reads
        app.router.add_post("/api/messages", self.handle)

    async def start(self) -> None:
        """Forget old delivery claims (best effort); say loudly when authentication is off."""
        if self.dev_mode:
            log.warning("teams: TEAMS_DEV_MODE is on: no authentication, loopback requests only")
        try:
            await events.prune_events(self.deps.pool)
        except Exception:
            log.warning("teams: could not prune old event claims", exc_info=True)

    async def close(self, timeout: float = 30.0) -> None:
        """Let answers in flight finish (up to `timeout`)."""
        try:
            await self.tasks.drain(timeout)
        except TimeoutError:
            log.warning("teams: %d answers still running at shutdown", len(self.tasks))


def build_teams_app(config: TeamsConfig, answerer: Answerer, *, provider: teams_auth.ProviderFactory | None = None,
                    service_urls: OutboundHostValidator | None = None, limiter: RateLimiter | None = None) -> TeamsBot:
    """The Teams application (TEAMS_APP_ID, TEAMS_APP_PASSWORD, ... as `config`). `provider` replaces MSAL
    as the token provider and `service_urls` the allowed reply hosts (tests: a local fake Connector)."""
    teams_auth.check_config(config)
    connections = teams_auth.connections(config, provider)
    adapter = CloudAdapter(connection_manager=connections,
                           host_validator=service_urls or teams_auth.service_urls(config))
    adapter.on_turn_error = on_turn_error
    app = AgentApplication[TurnState](ApplicationOptions(storage=MemoryStorage(), start_typing_timer=False),
                                      connection_manager=connections)
    deps = Deps(answerer=answerer, config=config, tasks=Tasks(),
                limiter=limiter or RateLimiter(config.user_rate_limit, config.channel_rate_limit))
    register(app, deps)
    return TeamsBot(app=app, adapter=adapter, deps=deps, auth=connections.get_default_connection_configuration(),
                    dev_mode=config.dev_mode)


def register(app: AgentApplication[TurnState], deps: Deps) -> None:
    """Attach the handlers with `deps`: card votes first, then reactions, then every other message; membership
    changes get the welcome, edits and deletions nothing (but a route, so the SDK does not warn)."""

    async def vote(context: TurnContext, state: TurnState, data: Any) -> AdaptiveCardInvokeResponse:
        return await on_vote(deps, context, state, data)

    async def vote_submit(context: TurnContext, state: TurnState, data: Any) -> None:
        await on_vote_submit(deps, context, state, data)

    async def reaction(context: TurnContext, state: TurnState) -> None:
        await on_reaction(deps, context, state)

    async def message(context: TurnContext, state: TurnState) -> None:
        await on_message(deps, context, state)

    async def membership(context: TurnContext, state: TurnState) -> None:
        await on_conversation_update(deps, context, state)

    async def fix(context: TurnContext, state: TurnState, data: Any) -> AdaptiveCardInvokeResponse:
        return await on_fix(deps, context, state, data)

    async def fix_submit(context: TurnContext, state: TurnState, data: Any) -> None:
        await on_fix_submit(deps, context, state, data)

    app.adaptive_card.action_execute(VERB_VOTE)(vote)
    app.adaptive_card.action_submit(VERB_VOTE)(vote_submit)
    app.adaptive_card.action_execute(VERB_FIX)(fix)
    app.adaptive_card.action_submit(VERB_FIX)(fix_submit)
    app.activity("messageReaction")(reaction)
    app.activity("message", rank=RouteRank.LAST)(message)
    app.activity(["conversationUpdate", "installationUpdate", "messageUpdate", "messageDelete"])(membership)
