"""The Teams adapter end to end: activity JSON posted to /api/messages through the Agents SDK's aiohttp
hosting and JWT check, answers from the example runbooks in a real Postgres, the Bot Connector, Entra
ID's token endpoint and the Bot Framework signing keys played by a local fake."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from bot import messages
from tests.chatfake import BrokenAnswerer, GatedAnswerer, answer_failures
from tests.teamsfake import (
    ALICE, APP_ID, APP_PASSWORD, BOT, CHANNEL, PERSONAL, ROOT, TENANT, Call, FakeConnector, Issuer, LocalJwks,
    TeamsHarness, message,
)

pytestmark = pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")
DISK = "disk full on /var/lib/docker"
THREAD = f"{CHANNEL};messageid={ROOT}"
BOTFRAMEWORK_KEYS = "https://login.botframework.com/v1/.well-known/keys"
QUOTED_ALERT = (
    '<blockquote itemscope="" itemtype="http://schema.skype.com/Reply" itemid="1759990000000">'
    '<strong itemprop="mri" itemid="28:alertmanager-workflow">Alertmanager</strong>'
    '<span itemprop="time" itemid="1759990000000"></span>'
    '<p itemprop="preview">[FIRING:1] KubePodCrashLooping (cluster=prod-eu-1 namespace=payments severity=critical)'
    "<br>Alert: Pod payments/checkout-api-7d9f8b6c4-x2x7q is crash looping - critical"
    "<br>Description: Pod payments/checkout-api-7d9f8b6c4-x2x7q (api) is in waiting state "
    "(reason: &quot;CrashLoopBackOff&quot;) for more than 15 minutes."
    '<br>Runbook: <a href="https://runbooks.example.com/kubernetes/k8s-pod-crashloop">k8s-pod-crashloop</a></p>'
    "</blockquote>"
)


@pytest.fixture
def fake(connector: FakeConnector) -> FakeConnector:
    return connector


def walk(element: Any) -> list[dict[str, Any]]:
    """Every object in a card, depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(element, dict):
        found.append(element)
        for value in element.values():
            found += walk(value)
    elif isinstance(element, list):
        for item in element:
            found += walk(item)
    return found


def texts(card: dict[str, Any]) -> str:
    """Every TextBlock of a card (not the fallbacks), one per line."""
    blocks = [e["text"] for e in walk(card.get("body", [])) if e.get("type") == "TextBlock"]
    return "\n".join(blocks)


def only_card(call: Call) -> dict[str, Any]:
    [card] = call.cards()
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    return card


def votes(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in card.get("actions", []) if a["type"] == "Action.Execute"]


async def answered(teams: TeamsHarness) -> list[tuple[Any, ...]]:
    return await teams.rows("SELECT id, question, channel, user_id, entry_point FROM answers ORDER BY id")


# --- Mentions, chats and the runbook command -------------------------------------------------------------------------


async def test_channel_mention_acks_then_updates_a_placeholder_with_the_answer_card(
        teams: TeamsHarness, fake: FakeConnector, jwks: LocalJwks) -> None:
    reply = await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    assert reply.status == 202 and reply.body == "", "an empty ack: the answer comes as a message"
    await teams.done()
    [placeholder] = fake.calls_to("reply")
    assert placeholder.conversation == THREAD and placeholder.activity_id == "1759990100000", "threaded reply"
    assert placeholder.path.startswith("/amer/v3/conversations/"), "sent to the activity's serviceUrl"
    shown = texts(only_card(placeholder))
    assert messages.TEAMS_SEARCHING in shown and f"Alice Example asked: {DISK}" in shown
    [update] = fake.calls_to("update")
    assert update.conversation == THREAD and update.activity_id == "1760000000001", "the placeholder, updated"
    card = only_card(update)
    shown = texts(card)
    assert "**1.**" in shown and "Disk full" in shown and "<at>" not in shown
    commands = [e for e in walk(card["body"]) if e.get("type") == "CodeBlock"]
    assert any(c["codeSnippet"].startswith("df -hT") for c in commands), "commands as code"
    assert all(c["fallback"]["fontType"] == "Monospace" for c in commands), "monospace where CodeBlock is unknown"
    assert messages.TEAMS_SOURCES in shown and re.search(r"\*\*\[1\]\*\* Disk full.+ · relevance \d\.\d\d", shown)
    [(answer_id, question, channel, user, entry)] = await answered(teams)
    assert (question, channel, user, entry) == (DISK, CHANNEL, ALICE["aadObjectId"], "teams")
    assert [a["data"] for a in votes(card)] == [{"answer_id": answer_id, "vote": v} for v in (1, -1)]
    assert [e["id"] for e in walk(card["body"]) if e.get("type") == "Input.Text"] == ["comment"]
    assert await teams.rows("SELECT channel, ts, answer_id, thread_ts FROM answer_messages") == [
        (CHANNEL, "1760000000001", answer_id, ROOT)]


async def test_outgoing_calls_carry_a_token_from_the_local_token_endpoint(
        teams: TeamsHarness, fake: FakeConnector, jwks: LocalJwks) -> None:
    await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    await teams.done()
    [token] = fake.calls_to("token")
    assert token.path == f"/{TENANT}/oauth2/v2.0/token"
    assert token.body == {"client_id": APP_ID, "client_secret": APP_PASSWORD, "grant_type": "client_credentials",
                          "scope": "https://api.botframework.com/.default"}
    sent = fake.connector_calls()
    assert sent and {c.token for c in sent} == {"fake-connector-token-1"}, "every Connector call authenticated"
    assert jwks.asked == [BOTFRAMEWORK_KEYS], "the SDK looked for Bot Framework's keys (served locally)"


async def test_personal_chat_with_the_runbook_command(teams: TeamsHarness, fake: FakeConnector) -> None:
    await teams.post(message(f"runbook {DISK}", personal=True, service_url=fake.service_url))
    await teams.done()
    [placeholder] = fake.calls_to("reply")
    [update] = fake.calls_to("update")
    assert placeholder.conversation == update.conversation == PERSONAL
    assert any(e.get("codeSnippet", "").startswith("df -hT") for e in walk(only_card(update)))
    [(_, question, channel, _, _)] = await answered(teams)
    assert (question, channel) == (DISK, PERSONAL), "the command word is not part of the question"


@pytest.mark.parametrize(("text", "personal"), [
    ("<at>runbook-bot</at>", False), ("<at>runbook-bot</at> help", False), ("runbook", True), ("?", True)])
async def test_nothing_to_answer_gets_help(teams: TeamsHarness, fake: FakeConnector, text: str, personal: bool) -> None:
    await teams.post(message(text, personal=personal, service_url=fake.service_url))
    await teams.done()
    [reply] = fake.connector_calls()
    assert reply.op == "reply" and messages.TEAMS_HELP in texts(only_card(reply))
    assert not await answered(teams)


async def test_a_quoted_alert_is_the_question(teams: TeamsHarness, fake: FakeConnector) -> None:
    html = QUOTED_ALERT + '<p><at id="0">runbook-bot</at>&nbsp;</p>'
    await teams.post(message("<at>runbook-bot</at>", html=html, service_url=fake.service_url))
    await teams.done()
    [update] = fake.calls_to("update")
    shown = texts(only_card(update))
    assert "Alice Example asked: KubePodCrashLooping: Pod payments/checkout-api" in shown
    assert "k8s-pod-crashloop.md" in shown or "CrashLoopBackOff" in shown
    [(_, question, *_)] = await answered(teams)
    assert question.startswith("KubePodCrashLooping: Pod payments/checkout-api")


async def test_a_question_with_a_quoted_alert_has_the_alert_as_context(
        fake: FakeConnector, issuer: Issuer, jwks: LocalJwks, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    from tests.fakes import ScriptedLLM, final

    seen: list[str] = []

    def reply(conversation, tools):  # type: ignore[no-untyped-def]
        seen.append(conversation[1].content)
        return final("Look at the previous container's logs.", [])

    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, llm=ScriptedLLM([reply]))
    try:
        html = QUOTED_ALERT + '<p><at id="0">runbook-bot</at> what should I check first?</p>'
        await teams.post(message("<at>runbook-bot</at> what should I check first?", html=html,
                                 service_url=fake.service_url))
        await teams.done()
        prompt = seen[0]
        assert "what should I check first?" in prompt and "<at>" not in prompt and "runbook-bot" not in prompt
        assert "alert alertname: KubePodCrashLooping" in prompt and "alert severity: critical" in prompt
        assert "alert namespace: payments" in prompt and "k8s-pod-crashloop" in prompt
        [(_, question, *_)] = await answered(teams)
        assert question == "what should I check first?"
    finally:
        await teams.close()


async def test_redeliveries_of_one_activity_are_answered_once(teams: TeamsHarness, fake: FakeConnector) -> None:
    activity = message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url)
    first, second = await teams.post(activity), await teams.post(activity)
    await teams.done()
    assert first.status == second.status == 202
    assert len(fake.calls_to("reply")) == 1 and len(await answered(teams)) == 1


async def test_the_ack_comes_before_the_answer(teams: TeamsHarness, fake: FakeConnector) -> None:
    gate = asyncio.Event()
    teams.bot.deps.answerer = GatedAnswerer(teams.bot.deps.answerer, gate)  # type: ignore[assignment]
    reply = await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    assert reply.status == 202 and len(teams.bot.tasks) == 1
    async with asyncio.timeout(10):
        while not fake.calls_to("reply"):
            await asyncio.sleep(0.02)
    assert not fake.calls_to("update"), "placeholder only"
    gate.set()
    await teams.done()
    assert len(fake.calls_to("update")) == 1


# --- Failures ----------------------------------------------------------------------------------------------------


@answer_failures("something went wrong on my side")
async def test_a_failure_becomes_an_apology_in_place_of_the_placeholder(
        teams: TeamsHarness, fake: FakeConnector, exc: Exception, expected: str) -> None:
    teams.bot.deps.answerer = BrokenAnswerer(exc, teams.pool)  # type: ignore[assignment]
    await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    await teams.done()
    [update] = fake.calls_to("update")
    shown = texts(only_card(update))
    assert expected in shown and "boom" not in shown, "no internals shown"


async def test_a_connector_failure_on_update_still_ends_in_an_apology(teams: TeamsHarness, fake: FakeConnector) -> None:
    fake.fail("update", status=502)
    await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    await teams.done()
    failed, apology = fake.calls_to("update")
    assert votes(only_card(failed)) and "something went wrong on my side" in texts(only_card(apology))


async def test_rate_limits_per_user(fake: FakeConnector, issuer: Issuer, jwks: LocalJwks,
                                    examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, teams_user_rate_limit=1)
    try:
        for n in range(2):
            await teams.post(message(f"<at>runbook-bot</at> {DISK}", id=f"17599901000{n}0",
                                     service_url=fake.service_url))
            await teams.done()
        first, refused = fake.calls_to("reply")
        assert "Too many questions from you" in texts(only_card(refused))
        assert len(fake.calls_to("update")) == 1 and len(await answered(teams)) == 1
    finally:
        await teams.close()


async def test_source_links_and_sources_per_conversation(fake: FakeConnector, issuer: Issuer, jwks: LocalJwks,
                                                         examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    base = "https://git.example.com/sre/runbooks/blob/main"
    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, slack_source_links={"examples": base},
                                     teams_channel_sources={PERSONAL: ["team-b-runbooks"], "*": ["examples"]})
    try:
        await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
        await teams.post(message(DISK, personal=True, service_url=fake.service_url))
        await teams.done()
        by_conversation = {c.conversation: texts(only_card(c)) for c in fake.calls_to("update")}
        assert f"]({base}/disk-full.md#" in by_conversation[THREAD], "links from the Slack link bases by default"
        assert "🔍" in by_conversation[PERSONAL], "the chat only searches a source without this runbook"
    finally:
        await teams.close()


async def test_the_bot_says_what_it_does_when_added_to_a_chat(teams: TeamsHarness, fake: FakeConnector) -> None:
    def added(conversation_type: str, member: dict[str, Any]) -> dict[str, Any]:
        return {"type": "conversationUpdate", "id": f"cu-{conversation_type}-{member['id']}", "channelId": "msteams",
                "serviceUrl": fake.service_url, "from": ALICE, "recipient": BOT, "membersAdded": [member],
                "conversation": {"id": PERSONAL if conversation_type == "personal" else THREAD,
                                 "conversationType": conversation_type, "tenantId": TENANT}}

    replies = [await teams.post(added("personal", BOT)), await teams.post(added("channel", BOT)),
               await teams.post(added("personal", ALICE))]
    await teams.done()
    assert [r.status for r in replies] == [202, 202, 202]
    [welcome] = fake.connector_calls()
    assert welcome.conversation == PERSONAL and messages.TEAMS_HELP in texts(only_card(welcome))
    assert not await answered(teams)
