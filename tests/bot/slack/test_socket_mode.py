"""Socket Mode: slack_sdk's real Socket Mode client connects to the fake's WebSocket (whose URL
apps.connections.open returns) and the same Bolt app answers slash commands, events and clicks."""

from __future__ import annotations

import asyncio
import json
import urllib.parse

from bot.app import make_answerer, slack_config
from bot.slack.adapter import build_slack_app
from bot.slack.blocks import ACTION_UP
from bot.records.feedback import feedback_rows
from tests.bot.chat.test_alerts import ALERTMANAGER
from tests.bot.slack.test_adapter import button_values, texts
from tests.slackfake import BOT_USER, FakeSlackAPI, action_body, command_body, event_body, slack_settings

APP_TOKEN = "xapp-1-A0RUNBOOK1-1234567890-abcdef"


async def test_socket_mode_answers_commands_events_and_clicks(examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    fake = await FakeSlackAPI().start()
    settings = slack_settings(fake, slack_app_token=APP_TOKEN, slack_signing_secret=None)
    bot = build_slack_app(slack_config(settings), make_answerer(settings, examples_pool, embedder, None))
    handler = bot.socket_mode(APP_TOKEN)
    await handler.connect_async()
    try:
        await fake.wait_connected()
        [opened] = fake.calls_to("apps.connections.open")
        assert opened.token == APP_TOKEN, "the app-level token opens the connection"

        command = dict(urllib.parse.parse_qsl(command_body("disk full on /var/lib/docker",
                                                           response_url=fake.response_url())))
        await fake.push({"envelope_id": "env-cmd-1", "type": "slash_commands", "accepts_response_payload": True,
                         "payload": command})
        ack = await fake.wait_ack("env-cmd-1")
        assert ack == {"envelope_id": "env-cmd-1"}, "an empty ack"
        await bot.tasks.drain()
        update = fake.calls_to("chat.update")[-1]
        assert "```df -hT" in texts(update.args["blocks"])

        fake.threads[("C0INCIDENT", ALERTMANAGER["ts"])] = [ALERTMANAGER]
        event = json.loads(event_body({"type": "app_mention", "user": "U0ALICE01", "text": f"<@{BOT_USER}>",
                                       "ts": "1759990100.000100", "thread_ts": ALERTMANAGER["ts"],
                                       "channel": "C0INCIDENT"}, event_id="Ev0SOCKET01"))
        for attempt, envelope_id in ((0, "env-ev-1"), (1, "env-ev-2")):  # a retry over the socket
            await fake.push({"envelope_id": envelope_id, "type": "events_api", "accepts_response_payload": False,
                             "retry_attempt": attempt, "retry_reason": "timeout" if attempt else "",
                             "payload": event})
        await asyncio.gather(fake.wait_ack("env-ev-1"), fake.wait_ack("env-ev-2"))
        await bot.tasks.drain()
        in_thread = [c for c in fake.calls_to("chat.postMessage") if c.args.get("thread_ts") == ALERTMANAGER["ts"]]
        assert len(in_thread) == 1, "answered once"
        shown = texts(fake.calls_to("chat.update")[-1].args["blocks"])
        assert "k8s-pod-crashloop.md" in shown

        answered = fake.calls_to("chat.update")[-1].args
        answer_id = button_values(answered["blocks"])[ACTION_UP]["answer_id"]
        click = json.loads(urllib.parse.parse_qs(action_body(
            ACTION_UP, json.dumps({"answer_id": answer_id}), channel="C0INCIDENT", message_ts=answered["ts"],
            response_url=fake.response_url("action")))["payload"][0])
        await fake.push({"envelope_id": "env-click-1", "type": "interactive", "accepts_response_payload": False,
                         "payload": click})
        await fake.wait_ack("env-click-1")
        await bot.tasks.drain()
        [vote] = await feedback_rows(examples_pool)
        assert (vote["answer_id"], vote["vote"], vote["message_ts"]) == (answer_id, 1, answered["ts"])
        assert answered["ts"] != fake.calls_to("chat.update")[0].args["ts"], "the thread answer, not the first one"
    finally:
        await handler.close_async()
        await bot.close()
        await fake.stop()
