"""Signed but malformed requests to POST /slack/events: each gets a 4xx (an ack for an Events API
delivery, which Slack would otherwise retry) and a log line, never a 500 or a traceback; unsigned
ones still get a 401, and the requests around them are still answered."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import logging
import time
import urllib.parse
from typing import Any

import pytest

from bot.slack.blocks import ACTION_SHARE, ACTION_UP, FEEDBACK_VIEW
from tests.slackfake import (
    FORM, JSON, SIGNING_SECRET, FakeSlackAPI, Harness, action_body, command_body, event_body, sign,
    view_submission_body,
)

DISK = "disk full on /var/lib/docker"


@pytest.fixture
def fake(slack_api: FakeSlackAPI) -> FakeSlackAPI:
    return slack_api


def signed_bytes(body: bytes, timestamp: str | None = None) -> dict[str, str]:
    """Headers of a body signed as Slack signs it, over its raw bytes and any timestamp text."""
    ts = str(int(time.time())) if timestamp is None else timestamp
    digest = hmac.new(SIGNING_SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def mention_without(field: str) -> str:
    event = {"type": "app_mention", "user": "U0ALICE01", "text": "<@UBOT0001> disk", "ts": "1759990100.000100",
             "channel": "C0INCIDENT", "event_ts": "1759990100.000100"}
    del event[field]
    return event_body(event, event_id=f"Ev0NO{field.upper()}")


def command_without(*fields: str) -> str:
    form = dict(urllib.parse.parse_qsl(command_body(DISK, response_url="http://127.0.0.1:9/respond/cmd")))
    return urllib.parse.urlencode({k: v for k, v in form.items() if k not in fields})


def payload(data: Any) -> str:
    return urllib.parse.urlencode({"payload": json.dumps(data)})


def click_with(action: dict[str, Any] | None = None, **top: Any) -> str:
    data = json.loads(urllib.parse.parse_qs(action_body(
        ACTION_UP, json.dumps({"answer_id": 1}), channel="C0INCIDENT", message_ts="1760000000.000001",
        response_url="http://127.0.0.1:9/respond/action"))["payload"][0])
    if action is not None:
        data["actions"][0].update(action)
    for key, value in top.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return payload(data)


# body, content type, expected status: 400 for what Slack never sends, 200 for an Events API delivery
# that Slack would retry on an error (it is acked and dropped).
MALFORMED = {
    "broken JSON": ("{\"type\": \"event_callback\", \"event\": ", JSON, 400),
    "JSON that is not an object": ("[1, 2, 3]", JSON, 400),
    "JSON null": ("null", JSON, 400),
    "broken form payload": ("payload=%7Bnot+json", FORM, 400),
    "form payload that is not an object": (payload(["block_actions"]), FORM, 400),
    "event that is not an object": (json.dumps({"type": "event_callback", "event": "app_mention",
                                                "event_id": "Ev0STRING01"}), JSON, 400),
    "app_mention without a channel": (mention_without("channel"), JSON, 200),
    "app_mention without a ts": (mention_without("ts"), JSON, 200),
    "direct message without a channel": (event_body(
        {"type": "message", "channel_type": "im", "user": "U0ALICE01", "text": "disk", "ts": "1.2"},
        event_id="Ev0DMNOCHAN"), JSON, 200),
    "reaction without its message": (event_body(
        {"type": "reaction_added", "user": "U0BOB0001", "reaction": "+1", "item": {"type": "message"}},
        event_id="Ev0REACTION"), JSON, 200),
    "reaction without a user": (event_body(
        {"type": "reaction_added", "reaction": "+1", "item": {"type": "message", "channel": "C0X", "ts": "1.3"}},
        event_id="Ev0REACTUSR"), JSON, 200),
    "slash command without user and channel": (command_without("user_id", "channel_id"), FORM, 400),
    "slash command without a channel": (command_without("channel_id"), FORM, 400),
    "button without a value": (click_with({"value": None}), FORM, 400),
    "button whose value is not JSON": (click_with({"value": "{answer"}), FORM, 400),
    "button without a user": (click_with(user=None), FORM, 400),
    "button without its message": (click_with(container={"type": "message"}), FORM, 400),
    "share button without an answer id": (urllib.parse.urlencode({"payload": json.dumps({
        **json.loads(urllib.parse.parse_qs(click_with())["payload"][0]),
        "actions": [{"type": "button", "action_id": ACTION_SHARE, "block_id": "b", "value": "{}"}]})}), FORM, 400),
    "comment modal with broken metadata": (view_submission_body(FEEDBACK_VIEW, "{not json", "bad answer"), FORM, 400),
}


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_a_signed_malformed_request_is_refused_with_a_log_line(
        slack: Harness, fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture, name: str) -> None:
    body, content_type, status = MALFORMED[name]
    caplog.set_level(logging.INFO)
    reply = await slack.post(body, content_type)
    await slack.done()
    assert reply.status == status, reply.body
    assert "malformed" in caplog.text.lower(), "a log line says what was refused"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], "no traceback"
    assert [c.method for c in fake.calls if c.method != "auth.test"] == [], "nothing was posted"
    assert not await slack.rows("SELECT id FROM answers")


async def test_a_timestamp_that_is_not_a_number(slack: Harness, fake: FakeSlackAPI,
                                                caplog: pytest.LogCaptureFixture) -> None:
    body = command_body(DISK, response_url=fake.response_url())
    signed = await slack.post(body, FORM, signed=False, headers=signed_bytes(body.encode(), "abc"))
    forged = await slack.post(body, FORM, signed=False,
                              headers={**signed_bytes(body.encode(), "abc"), "X-Slack-Signature": "v0=00"})
    assert (signed.status, forged.status) == (400, 401)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_body_that_is_not_utf8(slack: Harness, caplog: pytest.LogCaptureFixture) -> None:
    body = b'{"type": "event_callback", "event": {"type": "app_mention", "text": "\xff\xfe"}}'
    signed = await slack.send("/slack/events", body, {"Content-Type": JSON, **signed_bytes(body)})
    unsigned = await slack.send("/slack/events", body, {"Content-Type": JSON})
    assert (signed.status, unsigned.status) == (400, 401)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_unsigned_malformed_requests_are_still_401(slack: Harness, fake: FakeSlackAPI) -> None:
    statuses = [(await slack.post(body, content_type, signed=False)).status
                for body, content_type, _ in MALFORMED.values()]
    stale = "{not json"
    old = await slack.post(stale, JSON, signed=False, headers=sign(stale, timestamp=int(time.time()) - 600))
    assert set(statuses) == {401} and old.status == 401
    assert [c.method for c in fake.calls] == []


async def test_requests_around_malformed_ones_are_answered(slack: Harness, fake: FakeSlackAPI) -> None:
    first = await slack.command(DISK)
    refused = [await slack.post(body, content_type) for body, content_type, _ in MALFORMED.values()]
    last = await slack.command(DISK, user="U0CAROL01")
    await slack.done()
    assert (first.status, last.status) == (200, 200) and 500 not in {r.status for r in refused}
    assert len(fake.calls_to("chat.update")) == 2, "both good questions answered"
    assert len(await slack.rows("SELECT id FROM answers")) == 2


def _paths(data: dict[str, Any], prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a payload (into the first element of a list of objects)."""
    out: list[tuple[Any, ...]] = []
    for key, value in data.items():
        out.append(prefix + (key,))
        if isinstance(value, dict):
            out += _paths(value, prefix + (key,))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out += _paths(value[0], prefix + (key, 0))
    return out


def _replaced(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(data))
    inner = copy
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return copy


def _payloads(response_url: str) -> list[tuple[str, dict[str, Any]]]:
    """One payload of each kind the listeners read: JSON events, and interactions as `payload=`."""
    events = [{"type": "app_mention", "user": "U0ALICE01", "text": "hi", "ts": "1.1", "channel": "C0X",
               "thread_ts": "1.0"},
              {"type": "message", "channel_type": "im", "user": "U0ALICE01", "text": "hi", "ts": "1.1",
               "channel": "D0X"},
              {"type": "reaction_added", "user": "U0ALICE01", "reaction": "+1",
               "item": {"type": "message", "channel": "C0X", "ts": "1.1"}}]
    clicks = [action_body(a, json.dumps({"answer_id": 1}), channel="C0X", message_ts="1.1", response_url=response_url)
              for a in (ACTION_UP, ACTION_SHARE)]
    view = view_submission_body(FEEDBACK_VIEW, json.dumps({"answer_id": 1, "channel": "C0X", "ts": "1.1"}), "t")
    return ([(JSON, json.loads(event_body(e, event_id="Ev0FUZZ"))) for e in events]
            + [(FORM, json.loads(urllib.parse.parse_qs(b)["payload"][0])) for b in [*clicks, view]])


async def test_no_field_of_the_wrong_type_makes_a_500_or_a_traceback(  # type: ignore[no-untyped-def]
        fake: FakeSlackAPI, examples_pool, embedder, caplog: pytest.LogCaptureFixture) -> None:
    slack = await Harness.start(fake, examples_pool, embedder, slack_user_rate_limit=10_000,
                                slack_channel_rate_limit=10_000)
    failures, ids = [], itertools.count()
    try:
        for content_type, data in _payloads(fake.response_url()):
            for path in _paths(data):
                for wrong in (5, None, {"a": 1}, ""):
                    sent = _replaced(data, path, wrong)
                    if content_type == JSON:
                        sent["event_id"] = f"Ev0FUZZ{next(ids)}"
                    body = json.dumps(sent) if content_type == JSON else payload(sent)
                    caplog.clear()
                    reply = await slack.post(body, content_type)
                    await slack.done()
                    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
                    if reply.status >= 500 or errors:
                        failures.append((data.get("type"), path, wrong, reply.status, errors[:1]))
    finally:
        await slack.close()
    assert failures == []
