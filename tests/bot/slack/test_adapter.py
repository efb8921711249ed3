"""The Slack adapter end to end: signed HTTP requests into the real server and Bolt app, the
answers from the example runbooks in a real Postgres, the Web API played by a local fake."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import pytest

from bot import messages
from bot.settings import Settings
from bot.slack.blocks import ACTION_DOWN, ACTION_SHARE, ACTION_UP
from tests.chatfake import BrokenAnswerer, GatedAnswerer, answer_failures
from tests.slackfake import FORM, FakeSlackAPI, Harness, command_body, sign

DISK = "disk full on /var/lib/docker"


@pytest.fixture
def fake(slack_api: FakeSlackAPI) -> FakeSlackAPI:
    return slack_api


def texts(blocks: list[dict[str, Any]]) -> str:
    """Every mrkdwn / plain text in the blocks, one per line."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block.get("text"), dict):
            out.append(block["text"]["text"])
        out += [e.get("text", "") if isinstance(e.get("text"), str) else e.get("text", {}).get("text", "")
                for e in block.get("elements", [])]
    return "\n".join(out)


def button_values(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """action_id -> decoded value of every button."""
    return {e["action_id"]: json.loads(e["value"]) for b in blocks if b["type"] == "actions" for e in b["elements"]}


# --- /runbook --------------------------------------------------------------------------------------------------------


async def test_slash_command_acks_then_updates_a_placeholder_with_the_answer(slack: Harness, fake: FakeSlackAPI) -> None:
    reply = await slack.command(DISK)
    assert reply.status == 200 and reply.body == "", "an empty ack: the answer comes as a message"
    await slack.done()
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder.args["channel"] == "C0INCIDENT" and "Searching runbooks" in texts(placeholder.args["blocks"])
    [update] = fake.calls_to("chat.update")
    assert update.args["ts"] == "1760000000.000001" and update.args["channel"] == "C0INCIDENT"
    blocks = update.args["blocks"]
    shown = texts(blocks)
    assert "<@U0ALICE01> asked: disk full on /var/lib/docker" in shown
    assert "*1.*" in shown and "```df -hT" in shown, "numbered steps, commands in code blocks"
    assert "disk-full.md" in shown or "Disk full on a Linux host" in shown
    assert re.search(r"\*\[1\]\* .+ · relevance \d\.\d\d", shown) and ":books: *Sources*" in shown
    assert len(blocks) <= 50 and all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    values = button_values(blocks)
    assert set(values) == {ACTION_UP, ACTION_DOWN}, "feedback buttons, no share button in a visible answer"
    [(answer_id, entry, user, channel)] = await slack.rows("SELECT id, entry_point, user_id, channel FROM answers")
    assert (entry, user, channel) == ("slack", "U0ALICE01", "C0INCIDENT") and values[ACTION_UP]["answer_id"] == answer_id
    assert await slack.rows("SELECT channel, ts, answer_id FROM answer_messages") == [
        ("C0INCIDENT", "1760000000.000001", answer_id)]
    assert placeholder.token == "xoxb-fake-token"


@pytest.mark.parametrize("text", ["", "   ", "help"])
async def test_empty_slash_command_gets_help_in_the_ack(slack: Harness, fake: FakeSlackAPI, text: str) -> None:
    reply = await slack.command(text)
    await slack.done()
    body = reply.json()
    assert reply.status == 200 and body["response_type"] == "ephemeral" and body["text"] == messages.SLACK_HELP
    assert not fake.calls_to("chat.postMessage") and not await slack.rows("SELECT id FROM answers")


async def test_ephemeral_answers_come_through_the_response_url_with_a_share_button(
        fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    slack = await Harness.start(fake, examples_pool, embedder, slack_answer_visibility="ephemeral")
    try:
        reply = await slack.command(DISK)
        ack = reply.json()
        assert ack["response_type"] == "ephemeral" and "Searching runbooks" in texts(ack["blocks"])
        await slack.done()
        assert not fake.calls_to("chat.postMessage") and not fake.calls_to("chat.update")
        [answer] = fake.calls_to("response_url")
        assert answer.args["response_type"] == "ephemeral" and answer.args["replace_original"] is True
        values = button_values(answer.args["blocks"])
        assert set(values) == {ACTION_UP, ACTION_DOWN, ACTION_SHARE}
        answer_id = values[ACTION_SHARE]["answer_id"]

        await slack.click(ACTION_SHARE, answer_id, channel="C0INCIDENT", message_ts="1760000000.999999", ephemeral=True)
        await slack.done()
        [shared] = fake.calls_to("chat.postMessage")
        assert shared.args["channel"] == "C0INCIDENT" and "thread_ts" not in shared.args
        shown = texts(shared.args["blocks"])
        assert "Shared by <@U0BOB0001>" in shown and "<@U0ALICE01> asked:" in shown and "```df -hT" in shown
        assert ACTION_SHARE not in button_values(shared.args["blocks"])
        assert fake.calls_to("response_url")[-1].args["delete_original"] is True
        assert await slack.rows("SELECT channel, ts, answer_id FROM answer_messages") == [
            ("C0INCIDENT", "1760000000.000001", answer_id)]
    finally:
        await slack.close()


async def test_visible_answer_falls_back_to_the_response_url_where_the_bot_is_not_a_member(
        slack: Harness, fake: FakeSlackAPI) -> None:
    fake.fail("chat.postMessage", error="not_in_channel")
    await slack.command(DISK, channel="G0PRIVATE1")
    await slack.done()
    first, answer = fake.calls_to("response_url")
    assert first.args["response_type"] == "in_channel" and "Searching runbooks" in texts(first.args["blocks"])
    assert answer.args["replace_original"] is True and "```df -hT" in texts(answer.args["blocks"])


# --- Signatures ------------------------------------------------------------------------------------------------------


async def test_forged_unsigned_and_stale_requests_are_rejected(slack: Harness, fake: FakeSlackAPI) -> None:
    body = command_body(DISK, response_url=fake.response_url())
    forged = await slack.post(body, FORM, signed=False, headers=sign(body, secret="not-the-secret"))
    unsigned = await slack.post(body, FORM, signed=False)
    stale = await slack.post(body, FORM, signed=False, headers=sign(body, timestamp=int(time.time()) - 600))
    tampered_headers = sign(body)
    tampered = await slack.post(body.replace("disk", "dusk"), FORM, signed=False, headers=tampered_headers)
    await slack.done()
    assert [r.status for r in (forged, unsigned, stale, tampered)] == [401, 401, 401, 401]
    assert [c.method for c in fake.calls] == [], "nothing reached the Web API"
    assert not await slack.rows("SELECT id FROM answers")
    ok = await slack.command(DISK)
    assert ok.status == 200


# --- Failures --------------------------------------------------------------------------------------------------------


@answer_failures("Sorry, I couldn't answer that")
async def test_a_failure_becomes_an_apology_in_place_of_the_placeholder(
        slack: Harness, fake: FakeSlackAPI, exc: Exception, expected: str) -> None:
    slack.bot.deps.answerer = BrokenAnswerer(exc, slack.pool)  # type: ignore[assignment]
    await slack.command(DISK)
    await slack.done()
    [update] = fake.calls_to("chat.update")
    assert expected in texts(update.args["blocks"]) and expected in update.args["text"]
    assert "boom" not in update.args["text"], "no internals shown"


async def test_web_api_429_is_retried_after_retry_after(slack: Harness, fake: FakeSlackAPI) -> None:
    fake.fail("chat.update", status=429, retry_after=1)
    await slack.command(DISK)
    await slack.done()
    first, second = fake.calls_to("chat.update")
    assert second.at - first.at >= 1.0, "waited for Retry-After"
    assert first.args["blocks"] == second.args["blocks"] and "```df -hT" in texts(second.args["blocks"])


async def test_rate_limits_per_user_and_per_channel(fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    slack = await Harness.start(fake, examples_pool, embedder, slack_user_rate_limit=2, slack_channel_rate_limit=3)
    try:
        replies = [await slack.command(DISK) for _ in range(3)]
        assert [r.body for r in replies[:2]] == ["", ""]
        assert "Too many questions from you" in replies[2].json()["text"]
        other = await slack.command(DISK, user="U0CAROL01")
        limited = await slack.command(DISK, user="U0DAVE001")
        assert other.body == "" and "from this channel" in limited.json()["text"]
        await slack.done()
        assert len(fake.calls_to("chat.update")) == 3
    finally:
        await slack.close()


async def test_channel_allow_list_and_per_channel_sources(fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    slack = await Harness.start(fake, examples_pool, embedder, slack_allowed_channels=["C0INCIDENT", "C0OTHERS1"],
                                slack_channel_sources={"C0OTHERS1": ["team-b-runbooks"], "*": ["examples"]})
    try:
        refused = await slack.command(DISK, channel="C0RANDOM01")
        assert refused.json()["text"] == messages.SLACK_CHANNEL_NOT_ALLOWED
        await slack.command(DISK, channel="C0INCIDENT")
        await slack.command(DISK, channel="C0OTHERS1")
        await slack.done()
        by_channel = {c.args["channel"]: texts(c.args["blocks"]) for c in fake.calls_to("chat.update")}
        assert set(by_channel) == {"C0INCIDENT", "C0OTHERS1"}
        assert "```df -hT" in by_channel["C0INCIDENT"]
        assert ":mag:" in by_channel["C0OTHERS1"] and "```" not in by_channel["C0OTHERS1"], \
            "the other channel only searches a source without this runbook"
    finally:
        await slack.close()


async def test_source_links_come_from_the_configured_base_url(fake: FakeSlackAPI, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    base = "https://git.example.com/sre/runbooks/blob/main"
    slack = await Harness.start(fake, examples_pool, embedder, slack_source_links={"examples": base})
    try:
        await slack.command(DISK)
        await slack.done()
        shown = texts(fake.calls_to("chat.update")[0].args["blocks"])
        assert f"<{base}/disk-full.md#" in shown, shown
    finally:
        await slack.close()


async def test_ack_comes_before_the_answer(slack: Harness, fake: FakeSlackAPI) -> None:
    """The HTTP ack does not wait for answering: it returns while the answer is still running."""
    gate = asyncio.Event()
    slack.bot.deps.answerer = GatedAnswerer(slack.bot.deps.answerer, gate)  # type: ignore[assignment]
    reply = await slack.command(DISK)
    assert reply.status == 200 and len(slack.bot.tasks) == 1
    await asyncio.sleep(0.2)
    assert len(fake.calls_to("chat.postMessage")) == 1 and not fake.calls_to("chat.update"), "placeholder only"
    gate.set()
    await slack.done()
    assert len(fake.calls_to("chat.update")) == 1



# --- Wiring ----------------------------------------------------------------------------------------------------------


async def test_slack_route_is_mounted_next_to_health_and_api(slack: Harness, fake: FakeSlackAPI,
                                                             examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    from aiohttp.test_utils import TestServer

    from bot.app import serve_config
    from bot.runtime import Runtime
    from bot.server import build_web_app

    async with slack.session.get(slack.server.make_url("/healthz")) as resp:
        assert resp.status == 200
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    runtime = Runtime(examples_pool, embedder, slack.bot.deps.answerer)
    assert serve_config(settings).slack is None, "no SLACK_BOT_TOKEN, no Slack"
    server = TestServer(build_web_app(runtime))
    await server.start_server()
    try:
        async with slack.session.post(server.make_url("/slack/events"), data=b"{}") as resp:
            assert resp.status == 404
    finally:
        await server.close()


def test_slack_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_ALLOWED_CHANNELS", "C0INCIDENT, C0PAYMENTS")
    monkeypatch.setenv("SLACK_CHANNEL_SOURCES", '{"C0PAYMENTS": ["payments"], "*": ["examples"]}')
    monkeypatch.setenv("SLACK_SOURCE_LINKS", '{"examples": "https://git.example.com/runbooks/blob/main"}')
    monkeypatch.setenv("SLACK_ALERT_FILTERS", "service")
    monkeypatch.setenv("SLACK_ANSWER_VISIBILITY", "ephemeral")
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.slack_allowed_channels == ["C0INCIDENT", "C0PAYMENTS"] and s.slack_alert_filters == ["service"]
    assert s.slack_channel_sources == {"C0PAYMENTS": ["payments"], "*": ["examples"]}
    assert s.slack_source_links["examples"].startswith("https://") and s.slack_answer_visibility == "ephemeral"
    assert (s.slack_user_rate_limit, s.slack_channel_rate_limit, s.slack_answer_bots) == (10, 30, False)


def test_http_mode_needs_a_signing_secret(examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    from bot.app import make_answerer, slack_config
    from bot.slack.adapter import build_slack_app

    settings = Settings(_env_file=None, slack_bot_token="xoxb-x")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="SLACK_SIGNING_SECRET"):
        build_slack_app(slack_config(settings), make_answerer(settings, examples_pool, embedder, None))


async def test_url_verification_echoes_the_challenge(slack: Harness) -> None:
    body = json.dumps({"token": "x", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
                       "type": "url_verification"})
    reply = await slack.post(body, "application/json")
    assert reply.status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in reply.body


async def test_manifest_declares_what_the_app_listens_to_with_least_privilege(slack: Harness) -> None:
    import yaml

    from tests.conftest import REPO

    manifest = yaml.safe_load((REPO / "manifest.yml").read_text())
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True and settings["interactivity"]["is_enabled"] is True
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/runbook"]
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "commands", "app_mentions:read", "chat:write", "channels:history", "groups:history", "im:history",
        "reactions:read"}
    harmless = {  # one event of each declared kind that the app handles without answering
        "app_mention": {"type": "app_mention", "user": "U0OTHERBOT", "bot_id": "B0OTHERBOT", "text": "hi",
                        "ts": "1.1", "channel": "C0INCIDENT"},
        "message.im": {"type": "message", "channel_type": "im", "subtype": "message_changed", "channel": "D0X",
                       "ts": "1.2"},
        "reaction_added": {"type": "reaction_added", "user": "U0BOB0001", "reaction": "eyes",
                           "item": {"type": "message", "channel": "C0INCIDENT", "ts": "1.3"}},
        "reaction_removed": {"type": "reaction_removed", "user": "U0BOB0001", "reaction": "eyes",
                             "item": {"type": "message", "channel": "C0INCIDENT", "ts": "1.4"}},
    }
    declared = settings["event_subscriptions"]["bot_events"]
    assert set(declared) == set(harmless)
    for n, name in enumerate(declared):
        reply = await slack.event(harmless[name], event_id=f"Ev0MANIFEST{n}")
        assert reply.status == 200, f"{name} has a listener"
    undeclared = await slack.event({"type": "team_join", "user": {"id": "U0NEW"}}, event_id="Ev0MANIFESTX")
    assert undeclared.status == 404, "Bolt reports events nobody listens to"
