"""A local stand-in for Microsoft Teams: the Bot Connector, Entra ID's token endpoint and the Bot
Framework signing keys, all on 127.0.0.1.

`FakeConnector` is a real aiohttp server. Activities name it as their `serviceUrl`, so the Agents
SDK's Connector client posts replies, updates and deletions to it; it records every request
(operation, conversation, activity id, JSON body, bearer token, arrival time) and answers like the
Connector does. It also serves a client-credentials token endpoint (what `LocalTokenProvider`, the
test's stand-in for MSAL, calls) and a JWKS document with the public key of `Issuer`, which signs
activity JWTs as the Bot Framework does. `LocalJwks` serves those keys to the SDK's own JWT
validator in place of login.botframework.com. Also here: activity JSON as Teams sends it, and
`TeamsHarness`: the real server with the Teams adapter mounted, driven over HTTP.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import jwt
from aiohttp import web
from aiohttp.test_utils import TestServer
from azure.core.credentials_async import AsyncTokenCredential
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt import PyJWK, PyJWKClient
from microsoft_agents.hosting.core import AccessTokenProviderBase, AgentAuthConfiguration, JwtTokenValidator

from bot.app import make_answerer, teams_config
from bot.runtime import Runtime
from bot.server import build_web_app
from bot.settings import Settings
from bot.teams.adapter import TeamsBot, build_teams_app
from bot.teams.auth import LoopbackServiceUrls
from tests.chatfake import Reply, ServerHarness

APP_ID = "6f1c2a9e-0000-4b1e-9c3d-5a7b8c9d0e1f"
APP_PASSWORD = "fake-client-secret"
TENANT = "72f988bf-0000-41af-91ab-2d7cd011db47"
BOT = {"id": f"28:{APP_ID}", "name": "runbook-bot"}
ALICE = {"id": "29:1alice-teams-id", "name": "Alice Example", "aadObjectId": "aad-alice-0001"}
BOB = {"id": "29:1bob-teams-id", "name": "Bob Example", "aadObjectId": "aad-bob-0002"}
CHANNEL = "19:incidents0123456789@thread.tacv2"
ROOT = "1759990000000"  # the channel post (the alert) the thread hangs under
PERSONAL = "a:1personal-chat-with-alice"
BOTFRAMEWORK_ISSUER = "https://api.botframework.com"


@dataclass
class Call:
    """One request that reached the fake."""

    method: str
    path: str
    op: str  # send, reply, update, delete, token, keys, other
    conversation: str | None
    activity_id: str | None
    body: Any
    token: str | None
    at: float

    def cards(self) -> list[dict[str, Any]]:
        """The Adaptive Cards the activity carries."""
        return [a["content"] for a in (self.body or {}).get("attachments") or []
                if a.get("contentType") == "application/vnd.microsoft.card.adaptive"]


@dataclass
class FakeConnector:
    """The Bot Connector of one fake Teams tenant, its token endpoint and signing keys."""

    calls: list[Call] = field(default_factory=list)
    jwks: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._failures: dict[str, list[int]] = {}
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeConnector:
        """Listen on a free local port."""
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeConnector:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def service_url(self) -> str:
        """What activities carry as `serviceUrl` (a regional path, as Teams' are)."""
        return self.url + "/amer/"

    def fail(self, op: str, status: int = 500, times: int = 1) -> None:
        """Answer the next `times` requests of an operation with HTTP `status`."""
        self._failures.setdefault(op, []).extend([status] * times)

    def calls_to(self, op: str) -> list[Call]:
        """Every recorded request of one operation, in arrival order."""
        return [c for c in self.calls if c.op == op]

    def connector_calls(self) -> list[Call]:
        """Every request to the Connector API (not the token endpoint or the keys)."""
        return [c for c in self.calls if c.op in ("send", "reply", "update", "delete", "other")]

    def next_id(self) -> str:
        """A fresh message id, shaped like Teams' (milliseconds)."""
        return str(1760000000000 + next(self._ids))

    async def _handle(self, request: web.Request) -> web.Response:
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            is_json = request.content_type == "application/json"
            body = json.loads(raw) if is_json and raw else dict(urllib.parse.parse_qsl(raw.decode()))
        op, conversation, activity_id = _route(request.method, request.path)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        self.calls.append(Call(request.method, request.path, op, conversation, activity_id, body, token,
                               time.perf_counter()))
        if self._failures.get(op):
            return web.json_response({"error": {"code": "ServiceError"}}, status=self._failures[op].pop(0))
        if op == "token":
            return web.json_response({"token_type": "Bearer", "expires_in": 3599,
                                      "access_token": f"fake-connector-token-{len(self.calls_to('token'))}"})
        if op == "keys":
            return web.json_response(self.jwks)
        if op == "update":
            return web.json_response({"id": activity_id})
        if op == "delete":
            return web.Response(status=200)
        return web.json_response({"id": self.next_id()}, status=201 if op != "other" else 404)


def _route(method: str, path: str) -> tuple[str, str | None, str | None]:
    """The Connector operation of a request, with its conversation and activity ids."""
    if path.endswith("/oauth2/v2.0/token"):
        return "token", None, None
    if path == "/keys":
        return "keys", None, None
    parts = path.split("/v3/conversations/", 1)
    if len(parts) != 2:
        return "other", None, None
    conversation, _, rest = parts[1].partition("/activities")
    activity_id = rest.strip("/") or None
    op = {"POST": "reply" if activity_id else "send", "PUT": "update", "DELETE": "delete"}.get(method, "other")
    return op, conversation, activity_id


class Issuer:
    """Signs activity JWTs as the Bot Framework does (RS256, a `kid`, the bot's app id as audience)."""

    def __init__(self, kid: str = "fake-botframework-key-1") -> None:
        self.kid = kid
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    @classmethod
    def serving(cls, fake: FakeConnector) -> Issuer:
        """A new issuer whose public key the fake publishes."""
        issuer = cls()
        fake.jwks = issuer.jwks()
        return issuer

    def jwks(self) -> dict[str, Any]:
        """The public key as a JWKS document."""
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256", "endorsements": ["msteams"]}]}

    def token(self, *, service_url: str, audience: str = APP_ID, issuer: str = BOTFRAMEWORK_ISSUER,
              expires_in: int = 3600, kid: str | None = None, **claims: Any) -> str:
        """A signed channel token for one request."""
        now = int(time.time())
        payload = {"iss": issuer, "aud": audience, "serviceurl": service_url, "nbf": now - 5,
                   "exp": now + expires_in, **claims}
        return jwt.encode(payload, self.key, algorithm="RS256", headers={"kid": kid or self.kid})


class LocalJwks:
    """The SDK's signing-key source, answered from the fake's JWKS instead of Microsoft's key endpoints.

    Records which key URL the SDK's validator asked for (the real one), then fetches the keys from the
    fake with PyJWT's own client."""

    def __init__(self, fake: FakeConnector) -> None:
        self.fake = fake
        self.asked: list[str] = []

    @classmethod
    def install(cls, fake: FakeConnector, monkeypatch: Any) -> LocalJwks:
        """Make the SDK's JwtTokenValidator (every instance, for this test) take its keys from the fake."""
        keys = cls(fake)
        monkeypatch.setattr(JwtTokenValidator, "_jwk_client_manager", keys)
        return keys

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> PyJWK:
        """The key that signed a token, by its `kid`."""
        self.asked.append(jwks_uri)
        client = PyJWKClient(self.fake.url + "/keys", cache_keys=False)
        return await asyncio.to_thread(client.get_signing_key, header["kid"])


class LocalTokenProvider(AccessTokenProviderBase):
    """MSAL's stand-in: a client-credentials request to the fake's token endpoint, cached until expiry."""

    def __init__(self, configuration: AgentAuthConfiguration, fake: FakeConnector) -> None:
        self._configuration, self.fake = configuration, fake
        self._cache: dict[str, tuple[str, float]] = {}

    @classmethod
    def factory(cls, fake: FakeConnector) -> Any:
        """What build_teams_app takes as `provider`."""
        return lambda configuration: cls(configuration, fake)

    @property
    def configuration(self) -> AgentAuthConfiguration:
        """The connection settings (client id, secret, tenant)."""
        return self._configuration

    async def get_access_token(self, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        """A token for the scopes, from the cache or the fake's token endpoint."""
        scope = " ".join(scopes)
        cached = self._cache.get(scope)
        if cached and cached[1] > time.time() and not force_refresh:
            return cached[0]
        c = self._configuration
        form = {"client_id": c.CLIENT_ID or "", "client_secret": c.CLIENT_SECRET or "",
                "grant_type": "client_credentials", "scope": scope}
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{self.fake.url}/{c.TENANT_ID}/oauth2/v2.0/token", data=form) as resp:
                resp.raise_for_status()
                body = await resp.json()
        self._cache[scope] = (body["access_token"], time.time() + float(body["expires_in"]) - 60)
        return str(body["access_token"])

    def get_token_credential(self) -> AsyncTokenCredential:
        """Not used by the Connector path."""
        raise NotImplementedError


# --- What Teams sends -----------------------------------------------------------------------------------------------


def mention(name: str = "runbook-bot", user_id: str = BOT["id"]) -> dict[str, Any]:
    """A mention entity."""
    return {"type": "mention", "text": f"<at>{name}</at>", "mentioned": {"id": user_id, "name": name}}


def message(text: str, *, service_url: str, id: str = "1759990100000", conversation: str | None = None,
            sender: dict[str, Any] = ALICE, personal: bool = False, html: str | None = None,
            attachments: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A message activity: a mention in a channel thread by default, a 1:1 chat message when `personal`."""
    if personal:
        conv = {"id": conversation or PERSONAL, "conversationType": "personal", "tenantId": TENANT}
        channel_data: dict[str, Any] = {"tenant": {"id": TENANT}}
        entities: list[dict[str, Any]] = []
    else:
        conv = {"id": conversation or f"{CHANNEL};messageid={ROOT}", "conversationType": "channel",
                "isGroup": True, "tenantId": TENANT}
        channel_data = {"teamsChannelId": CHANNEL, "teamsTeamId": "19:team0123@thread.tacv2",
                        "channel": {"id": CHANNEL}, "team": {"id": "19:team0123@thread.tacv2"},
                        "tenant": {"id": TENANT}}
        entities = [mention()]
    found = list(attachments or [])
    if html is not None:
        found.insert(0, {"contentType": "text/html", "content": html})
    return {"type": "message", "id": id, "timestamp": "2025-10-09T10:01:40.000Z", "serviceUrl": service_url,
            "channelId": "msteams", "from": sender, "conversation": conv, "recipient": BOT, "textFormat": "plain",
            "locale": "en-US", "text": text, "attachments": found, "entities": entities,
            "channelData": channel_data, **extra}


def card_action(answer_id: int, vote: int, *, service_url: str, reply_to_id: str, comment: str | None = None,
                sender: dict[str, Any] = BOB, conversation: str | None = None) -> dict[str, Any]:
    """An Action.Execute click on an answer card (`adaptiveCard/action` invoke), inputs merged into data."""
    data: dict[str, Any] = {"answer_id": answer_id, "vote": vote}
    if comment is not None:
        data["comment"] = comment
    return {"type": "invoke", "name": "adaptiveCard/action", "id": f"f:{answer_id}{vote}{time.time_ns()}",
            "serviceUrl": service_url, "channelId": "msteams", "from": sender, "recipient": BOT,
            "conversation": {"id": conversation or f"{CHANNEL};messageid={ROOT}", "conversationType": "channel",
                             "tenantId": TENANT},
            "replyToId": reply_to_id, "channelData": {"tenant": {"id": TENANT}}, "locale": "en-US",
            "value": {"action": {"type": "Action.Execute", "verb": "runbook.vote", "data": data},
                      "trigger": "manual"}}


def card_submit(answer_id: int, vote: int, *, service_url: str, reply_to_id: str,
                sender: dict[str, Any] = BOB) -> dict[str, Any]:
    """An Action.Submit click from a client without Universal Actions: a message with a value."""
    return {"type": "message", "id": f"submit-{time.time_ns()}", "serviceUrl": service_url, "channelId": "msteams",
            "from": sender, "recipient": BOT, "replyToId": reply_to_id,
            "conversation": {"id": f"{CHANNEL};messageid={ROOT}", "conversationType": "channel", "tenantId": TENANT},
            "value": {"verb": "runbook.vote", "answer_id": answer_id, "vote": vote}, "text": ""}


def reaction(kind: str, *, service_url: str, reply_to_id: str, added: bool = True,
             sender: dict[str, Any] = BOB) -> dict[str, Any]:
    """A reaction added to (or removed from) a message."""
    key = "reactionsAdded" if added else "reactionsRemoved"
    return {"type": "messageReaction", "id": f"r-{time.time_ns()}", "serviceUrl": service_url,
            "channelId": "msteams", "from": sender, "recipient": BOT, "replyToId": reply_to_id,
            "conversation": {"id": f"{CHANNEL};messageid={ROOT}", "conversationType": "channel", "tenantId": TENANT},
            key: [{"type": kind}]}


# --- The adapter under test ---------------------------------------------------------------------------------------


def teams_settings(*, dev_mode: bool = False, **overrides: Any) -> Settings:
    """Settings of a bot registered in the fake tenant (or in development mode, without credentials)."""
    values: dict[str, Any] = ({"teams_dev_mode": True} if dev_mode else
                              {"teams_app_id": APP_ID, "teams_app_password": APP_PASSWORD, "teams_tenant_id": TENANT})
    return Settings(_env_file=None, **{**values, **overrides})  # type: ignore[call-arg]


class TeamsHarness(ServerHarness):
    """A running server with the Teams adapter mounted, and helpers that send what Teams sends."""

    def __init__(self, fake: FakeConnector, issuer: Issuer, bot: TeamsBot, server: TestServer) -> None:
        super().__init__(bot, server)
        self.fake, self.issuer = fake, issuer

    @classmethod
    async def start(cls, fake: FakeConnector, issuer: Issuer, pool: Any, embedder: Any, *, llm: Any = None,
                    dev_mode: bool = False, production_urls: bool = False, **overrides: Any) -> TeamsHarness:
        """Build answerer, Teams app and server from settings, as `runbook-bot serve` does; tokens come from
        the fake's endpoint, and replies may go to its loopback service URL (unless `production_urls`)."""
        settings = teams_settings(dev_mode=dev_mode, **overrides)
        answerer = make_answerer(settings, pool, embedder, llm)
        provider = None if dev_mode else LocalTokenProvider.factory(fake)
        urls = None if production_urls or dev_mode else LoopbackServiceUrls()
        bot = build_teams_app(teams_config(settings), answerer, provider=provider, service_urls=urls)
        server = TestServer(build_web_app(Runtime(pool, embedder, answerer), teams=bot))
        await server.start_server()
        return cls(fake, issuer, bot, server)

    async def post(self, activity: dict[str, Any], *, token: str | None = "valid",
                   headers: dict[str, str] | None = None) -> Reply:
        """POST /api/messages as the Bot Connector would: signed with a fresh channel token unless told otherwise."""
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token == "valid":
            token = self.issuer.token(service_url=activity["serviceUrl"])
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return await self.send("/api/messages", json.dumps(activity), sent)


def card_fix(answer_id: int, *, service_url: str, reply_to_id: str, choice: str | None = None,
             other: str | None = None, more: str | None = None, sender: dict[str, Any] = BOB) -> dict[str, Any]:
    """The correction card sent (`adaptiveCard/action` invoke, verb runbook.fix), its inputs merged into data."""
    activity = card_action(answer_id, 0, service_url=service_url, reply_to_id=reply_to_id, sender=sender)
    data: dict[str, Any] = {"answer_id": answer_id}
    if choice is not None:
        data["runbook_choice"] = choice
    if more is not None:
        data["runbook_choice_more"] = more
    if other is not None:
        data["runbook_other"] = other
    activity["value"]["action"] = {"type": "Action.Execute", "verb": "runbook.fix", "data": data}
    return activity
