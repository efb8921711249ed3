"""A local stand-in for Slack: the Web API, response URLs and the Socket Mode WebSocket.

`FakeSlackAPI` is a real aiohttp server on 127.0.0.1. It records every call (method, arguments,
arrival time), answers like Slack does for the methods the bot uses, can fail a method (429 with
Retry-After, or `{"ok": false, "error": ...}`), and serves a Socket Mode WebSocket whose URL
`apps.connections.open` returns. Also here: signed request bodies, as Slack sends them, and
`Harness`: the real server with the Slack adapter mounted, driven over HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestServer

from bot.app import make_answerer, slack_config
from bot.runtime import Runtime
from bot.server import build_web_app
from bot.settings import Settings
from bot.slack.adapter import SlackBot, build_slack_app
from tests.chatfake import Reply, ServerHarness

BOT_USER = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM = "T0TEAM001"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


@dataclass
class Call:
    """One request that reached the fake."""

    method: str  # Web API method, or "response_url"
    args: dict[str, Any]
    at: float  # time.perf_counter() on arrival
    token: str | None = None


@dataclass
class _Failure:
    status: int
    error: str | None
    retry_after: int | None
    times: int


@dataclass
class FakeSlackAPI:
    """The Web API, response URLs and Socket Mode of one fake workspace."""

    latency_s: float = 0.0  # added to every Web API call (benchmarks)
    calls: list[Call] = field(default_factory=list)
    threads: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (channel, thread_ts) -> messages
    socket_acks: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._failures: dict[str, list[_Failure]] = {}
        self._ts = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._runner: web.AppRunner | None = None
        self._acked = asyncio.Condition()
        self.url = ""

    # --- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> FakeSlackAPI:
        """Listen on a free local port."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/respond/{token}", self._respond)
        app.router.add_get("/socket", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        """Close sockets and stop listening."""
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        """What SLACK_API_URL points at."""
        return self.url + "/api/"

    def response_url(self, name: str = "cmd") -> str:
        """A response_url for a slash command or an interaction."""
        return f"{self.url}/respond/{name}"

    # --- scripting ---------------------------------------------------------------------------------------------

    def fail(self, method: str, *, status: int = 200, error: str | None = None, retry_after: int | None = None,
             times: int = 1) -> None:
        """Fail the next `times` calls of `method`: HTTP `status` (429 with Retry-After) or an `ok: false` error."""
        self._failures.setdefault(method, []).append(_Failure(status, error, retry_after, times))

    def calls_to(self, method: str) -> list[Call]:
        """Every recorded call of one method, in arrival order."""
        return [c for c in self.calls if c.method == method]

    def posted_blocks(self, method: str = "chat.update") -> list[list[dict[str, Any]]]:
        """The blocks of every call of `method`."""
        return [c.args.get("blocks") or [] for c in self.calls_to(method)]

    # --- Web API -----------------------------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _arguments(request)
        auth = request.headers.get("Authorization", "")
        self.calls.append(Call(method, args, time.perf_counter(), auth.removeprefix("Bearer ") or None))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        failure = self._next_failure(method)
        if failure is not None:
            if failure.status != 200:
                headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
                return web.json_response({"ok": False, "error": "ratelimited"}, status=failure.status, headers=headers)
            return web.json_response({"ok": False, "error": failure.error or "fatal_error"})
        return web.json_response(self._answer(method, args))

    def _next_failure(self, method: str) -> _Failure | None:
        queue = self._failures.get(method) or []
        if not queue:
            return None
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        return failure

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake", "user": "runbook-bot",
                    "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False}
        if method == "chat.postMessage":
            ts = self.next_ts()
            message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "ts": ts, "text": args.get("text", "")}
            if args.get("thread_ts"):
                message["thread_ts"] = args["thread_ts"]
                self.threads.setdefault((args["channel"], args["thread_ts"]), []).append(message)
            return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts"), "text": args.get("text", "")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self.next_ts()}
        if method == "conversations.replies":
            messages = self.threads.get((args.get("channel", ""), args.get("ts", "")), [])
            return {"ok": True, "messages": messages, "has_more": False}
        if method == "views.open":
            return {"ok": True, "view": {"id": "V0FAKE01", **(args.get("view") or {})}}
        if method == "apps.connections.open":
            return {"ok": True, "url": self.url.replace("http://", "ws://") + "/socket"}
        return {"ok": True}

    def next_ts(self) -> str:
        """A fresh message timestamp."""
        return f"1760000000.{next(self._ts):06d}"

    async def _respond(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls.append(Call("response_url", {"url_name": request.match_info["token"], **body}, time.perf_counter()))
        return web.Response(text="ok")

    # --- Socket Mode -------------------------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1,
                            "debug_info": {"host": "fake", "approximate_connection_time": 3600}})
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                async with self._acked:
                    self.socket_acks.append(json.loads(msg.data))
                    self._acked.notify_all()
        self._sockets.remove(ws)
        return ws

    async def wait_connected(self, timeout: float = 10) -> None:
        """Wait until a Socket Mode client is connected."""
        async with asyncio.timeout(timeout):
            while not self._sockets:
                await asyncio.sleep(0.02)

    async def push(self, envelope: dict[str, Any]) -> None:
        """Send an envelope (events_api, slash_commands, interactive) to the connected client."""
        await self._sockets[-1].send_json(envelope)

    async def wait_ack(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        """The client's acknowledgement of an envelope."""
        async with asyncio.timeout(timeout):
            async with self._acked:
                while True:
                    for ack in self.socket_acks:
                        if ack.get("envelope_id") == envelope_id:
                            return ack
                    await self._acked.wait()


async def _arguments(request: web.Request) -> dict[str, Any]:
    """The call's arguments, from JSON or a form, with JSON-encoded fields decoded."""
    args: dict[str, Any] = dict(request.query)
    if request.method == "GET":
        pass
    elif request.content_type == "application/json":
        args.update(await request.json())
    else:
        args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    for key in ("blocks", "attachments", "view"):
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    return args


# --- What Slack sends ---------------------------------------------------------------------------------------------


def sign(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """The X-Slack-Signature and timestamp headers Slack adds to a request body."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def command_body(text: str, *, user: str = "U0ALICE01", channel: str = "C0INCIDENT", response_url: str,
                 trigger_id: str = "13345224609.738474920.8088930838d88f008e0") -> str:
    """A `/runbook` slash command, form-encoded."""
    return urllib.parse.urlencode({
        "token": "legacy-verification-token", "team_id": TEAM, "team_domain": "fake", "channel_id": channel,
        "channel_name": "incidents", "user_id": user, "user_name": "alice", "command": "/runbook", "text": text,
        "api_app_id": "A0RUNBOOK1", "is_enterprise_install": "false", "response_url": response_url,
        "trigger_id": trigger_id,
    })


def event_body(event: dict[str, Any], *, event_id: str, event_time: int | None = None) -> str:
    """An Events API callback, JSON."""
    return json.dumps({
        "token": "legacy-verification-token", "team_id": TEAM, "api_app_id": "A0RUNBOOK1", "event": event,
        "type": "event_callback", "event_id": event_id, "event_time": event_time or int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True, "is_enterprise_install": False}],
        "is_ext_shared_channel": False, "event_context": "4-fake",
    })


def action_body(action_id: str, value: str, *, channel: str, message_ts: str, response_url: str,
                user: str = "U0BOB0001", ephemeral: bool = False) -> str:
    """A block_actions interaction (a button click), form-encoded as `payload=`."""
    payload = {
        "type": "block_actions", "team": {"id": TEAM, "domain": "fake"},
        "user": {"id": user, "username": "bob", "team_id": TEAM}, "api_app_id": "A0RUNBOOK1",
        "token": "legacy-verification-token", "trigger_id": "trigger-" + action_id,
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": ephemeral},
        "channel": {"id": channel, "name": "incidents"}, "response_url": response_url,
        "actions": [{"type": "button", "action_id": action_id, "block_id": "runbook_answer_actions",
                     "value": value, "action_ts": str(time.time())}],
    }
    if not ephemeral:
        payload["message"] = {"type": "message", "ts": message_ts, "bot_id": BOT_ID, "text": "answer"}
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


def view_submission_body(callback_id: str, private_metadata: str, text: str, *, user: str = "U0BOB0001",
                         values: dict[str, Any] | None = None) -> str:
    """A modal submitted, form-encoded as `payload=`; `values` adds other inputs' state."""
    payload = {
        "type": "view_submission", "team": {"id": TEAM, "domain": "fake"},
        "user": {"id": user, "username": "bob", "team_id": TEAM}, "api_app_id": "A0RUNBOOK1",
        "token": "legacy-verification-token", "trigger_id": "trigger-view",
        "view": {"id": "V0FAKE01", "type": "modal", "callback_id": callback_id, "private_metadata": private_metadata,
                 "state": {"values": {"comment": {"text": {"type": "plain_text_input", "value": text}},
                                      **(values or {})}}},
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


# --- The adapter under test ---------------------------------------------------------------------------------------

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def slack_settings(fake: FakeSlackAPI, **overrides: Any) -> Settings:
    """Settings of a bot talking to the fake workspace."""
    values: dict[str, Any] = {"slack_bot_token": "xoxb-fake-token", "slack_signing_secret": SIGNING_SECRET,
                              "slack_api_url": fake.api_url, "slack_api_retries": 2}
    return Settings(_env_file=None, **{**values, **overrides})  # type: ignore[call-arg]


class Harness(ServerHarness):
    """A running server with the Slack adapter mounted, and helpers that send what Slack sends."""

    def __init__(self, fake: FakeSlackAPI, bot: SlackBot, server: TestServer) -> None:
        super().__init__(bot, server)
        self.fake = fake

    @classmethod
    async def start(cls, fake: FakeSlackAPI, pool: Any, embedder: Any, *, llm: Any = None,
                    **overrides: Any) -> Harness:
        """Build answerer, Slack app and server from settings, as `runbook-bot serve` does."""
        settings = slack_settings(fake, **overrides)
        answerer = make_answerer(settings, pool, embedder, llm)
        bot = build_slack_app(slack_config(settings), answerer)
        server = TestServer(build_web_app(Runtime(pool, embedder, answerer), bot))
        await server.start_server()
        return cls(fake, bot, server)

    async def post(self, body: str, content_type: str, *, headers: dict[str, str] | None = None,
                   signed: bool = True, retry: int | None = None) -> Reply:
        """POST /slack/events as Slack would (signed unless told otherwise)."""
        sent = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
        if retry is not None:
            sent.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
        return await self.send("/slack/events", body.encode(), sent)

    async def command(self, text: str, **kwargs: Any) -> Reply:
        """`/runbook <text>`."""
        return await self.post(command_body(text, response_url=self.fake.response_url(), **kwargs), FORM)

    async def event(self, event: dict[str, Any], *, event_id: str, retry: int | None = None) -> Reply:
        """An Events API delivery."""
        return await self.post(event_body(event, event_id=event_id), JSON, retry=retry)

    async def click(self, action_id: str, answer_id: int, *, channel: str, message_ts: str,
                    user: str = "U0BOB0001", ephemeral: bool = False) -> Reply:
        """A button under an answer."""
        body = action_body(action_id, json.dumps({"answer_id": answer_id}), channel=channel, message_ts=message_ts,
                           response_url=self.fake.response_url("action"), user=user, ephemeral=ephemeral)
        return await self.post(body, FORM)

    async def submit(self, callback_id: str, private_metadata: str, text: str, user: str = "U0BOB0001",
                     values: dict[str, Any] | None = None) -> Reply:
        """A modal submitted."""
        return await self.post(view_submission_body(callback_id, private_metadata, text, user=user, values=values),
                               FORM)

    async def pick(self, action_id: str, value: str, *, channel: str, message_ts: str,
                   user: str = "U0BOB0001") -> Reply:
        """An option chosen in a select menu of an ephemeral message."""
        body = action_body(action_id, value, channel=channel, message_ts=message_ts,
                           response_url=self.fake.response_url("action"), user=user, ephemeral=True)
        payload = json.loads(urllib.parse.parse_qs(body)["payload"][0])
        payload["actions"][0] = {"type": "static_select", "action_id": action_id, "block_id": "fix",
                                 "selected_option": {"text": {"type": "plain_text", "text": value}, "value": value},
                                 "action_ts": str(time.time())}
        return await self.post(urllib.parse.urlencode({"payload": json.dumps(payload)}), FORM)
