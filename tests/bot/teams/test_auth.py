"""Authentication of the Teams endpoint: the SDK's JWT check in front of /api/messages, the allowed reply
hosts, token acquisition (MSAL in production, a local fake here, none in development mode) and a
development mode that cannot be switched on by accident in production."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request
from microsoft_agents.authentication.msal import MsalAuth

from bot.app import serve, teams_config
from bot.settings import Settings
from bot.teams.adapter import build_teams_app
from bot.teams.auth import (
    LoopbackServiceUrls, NoTokens, TeamsConfigError, bind_host, check_config, connections, local_request,
    service_urls,
)
from tests.bot.teams.test_adapter import DISK, answered, texts
from tests.teamsfake import (
    APP_ID, APP_PASSWORD, TENANT, FakeConnector, Issuer, TeamsHarness, message, teams_settings,
)

pytestmark = pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")


@pytest.fixture
def fake(connector: FakeConnector) -> FakeConnector:
    return connector


# --- Incoming: the SDK's JWT check ---------------------------------------------------------------------------------


async def test_unauthenticated_forged_and_stale_activities_are_rejected(
        teams: TeamsHarness, fake: FakeConnector, issuer: Issuer) -> None:
    activity = message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url)
    url = fake.service_url
    forger = Issuer(kid=issuer.kid)  # same key id, another private key
    rejected = {
        "no token": await teams.post(activity, token=None),
        "not a bearer token": await teams.post(activity, token=None, headers={"Authorization": "Basic YWxhZGRpbg=="}),
        "forged signature": await teams.post(activity, token=forger.token(service_url=url)),
        "another bot's token": await teams.post(activity, token=issuer.token(service_url=url, audience="other-app")),
        "expired": await teams.post(activity, token=issuer.token(service_url=url, expires_in=-600)),
        "untrusted issuer": await teams.post(activity, token=issuer.token(service_url=url,
                                                                          issuer="https://evil.example.com")),
        "garbage": await teams.post(activity, token="not.a.jwt"),
    }
    await teams.done()
    assert {name: r.status for name, r in rejected.items()} == {name: 401 for name in rejected}
    assert not fake.connector_calls() and not fake.calls_to("token"), "nothing was sent, no token was fetched"
    assert not await answered(teams)
    accepted = await teams.post(activity)
    await teams.done()
    assert accepted.status == 202 and len(await answered(teams)) == 1


async def test_replies_go_only_to_microsoft_service_urls_in_production(
        fake: FakeConnector, issuer: Issuer, jwks, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, production_urls=True)
    try:
        reply = await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
        await teams.done()
        assert reply.status == 401 and "Service URL" in reply.body
        assert not fake.connector_calls() and not fake.calls_to("token") and not await answered(teams)
    finally:
        await teams.close()


def test_production_service_urls_are_microsoft_hosts_over_https() -> None:
    urls = service_urls(teams_config(teams_settings()))
    assert urls.enabled
    assert urls.is_allowed("https://smba.trafficmanager.net/amer/")
    assert urls.is_allowed("https://smba.infra.gov.teams.microsoft.us/gov/")
    for refused in ("http://smba.trafficmanager.net/amer/", "https://evil.example.com/", "http://127.0.0.1:3978/",
                    "https://smba.trafficmanager.net.evil.example.com/"):
        assert not urls.is_allowed(refused), refused


# --- Outgoing: tokens -----------------------------------------------------------------------------------------------


def test_production_tokens_come_from_msal_with_the_app_credentials() -> None:
    """Wiring only: building the connection makes no request (no test reaches Entra ID)."""
    provider = connections(teams_config(teams_settings())).get_default_connection()
    assert isinstance(provider, MsalAuth)
    config = provider.configuration
    assert (config.CLIENT_ID, config.CLIENT_SECRET, config.TENANT_ID) == (APP_ID, APP_PASSWORD, TENANT)
    assert config.VALIDATE_ISSUER and not config.ANONYMOUS_ALLOWED
    multi = connections(teams_config(teams_settings(teams_tenant_id=None))).get_default_connection()
    assert multi.configuration.TENANT_ID == "botframework.com"


async def test_development_mode_never_acquires_a_token() -> None:
    provider = connections(teams_config(teams_settings(dev_mode=True))).get_default_connection()
    assert isinstance(provider, NoTokens)
    with pytest.raises(RuntimeError, match="never acquires tokens"):
        await provider.get_access_token("https://api.botframework.com", ["https://api.botframework.com/.default"])


# --- Development mode ----------------------------------------------------------------------------------------------


async def test_development_mode_answers_local_requests_without_tokens(
        fake: FakeConnector, issuer: Issuer, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, dev_mode=True)
    try:
        reply = await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url), token=None)
        await teams.done()
        assert reply.status == 202
        [update] = fake.calls_to("update")
        assert "**1.**" in texts(update.cards()[0])
        assert {c.token for c in fake.connector_calls()} == {None}, "anonymous: no Authorization header"
        assert not fake.calls_to("token") and not fake.calls_to("keys")
    finally:
        await teams.close()


async def test_development_mode_refuses_proxied_requests_and_remote_service_urls(
        fake: FakeConnector, issuer: Issuer, examples_pool, embedder) -> None:  # type: ignore[no-untyped-def]
    teams = await TeamsHarness.start(fake, issuer, examples_pool, embedder, dev_mode=True)
    try:
        activity = message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url)
        tunnelled = await teams.post(activity, token=None, headers={"X-Forwarded-For": "203.0.113.7"})
        forwarded = await teams.post(activity, token=None, headers={"Forwarded": "for=203.0.113.7"})
        remote = await teams.post(message(DISK, personal=True, service_url="https://smba.trafficmanager.net/amer/"),
                                  token=None)
        await teams.done()
        assert (tunnelled.status, forwarded.status, remote.status) == (401, 401, 401)
        assert not fake.calls and not await answered(teams)
    finally:
        await teams.close()


class _Transport:
    """Just enough of an asyncio transport for `request.remote`."""

    def __init__(self, peer: str) -> None:
        self.peer = peer

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self.peer, 52000) if name == "peername" else default


@pytest.mark.parametrize(("peer", "headers", "allowed"), [
    ("127.0.0.1", {}, True), ("::1", {}, True), ("10.0.0.5", {}, False), ("203.0.113.7", {}, False),
    ("127.0.0.1", {"X-Forwarded-For": "203.0.113.7"}, False), ("127.0.0.1", {"X-Real-IP": "203.0.113.7"}, False),
])
def test_development_mode_requests_must_come_from_this_machine(peer: str, headers: dict[str, str],
                                                               allowed: bool) -> None:
    request = make_mocked_request("POST", "/api/messages", headers=headers, transport=_Transport(peer))
    assert local_request(request) is allowed


def test_development_mode_replies_only_to_loopback() -> None:
    urls = LoopbackServiceUrls()
    assert urls.is_allowed("http://localhost:3978/") and urls.is_allowed("http://127.0.0.1:5000/amer/")
    assert not urls.is_allowed("https://smba.trafficmanager.net/amer/")
    assert not urls.is_allowed("http://user:secret@127.0.0.1/") and not urls.is_allowed("file:///etc/passwd")


def test_development_mode_with_a_client_secret_is_refused() -> None:
    config = teams_config(teams_settings(dev_mode=True, teams_app_id=APP_ID, teams_app_password=APP_PASSWORD))
    with pytest.raises(TeamsConfigError, match="TEAMS_APP_PASSWORD"):
        check_config(config)
    with pytest.raises(TeamsConfigError, match="TEAMS_APP_PASSWORD"):
        build_teams_app(config, answerer=None)  # type: ignore[arg-type]


def test_development_mode_serves_on_loopback_only() -> None:
    config = teams_config(teams_settings(dev_mode=True))
    assert bind_host(config) == "127.0.0.1" and bind_host(teams_config(teams_settings())) == "0.0.0.0"
    check_config(config, "127.0.0.1")
    check_config(config, "::1")
    for host in ("0.0.0.0", "10.0.0.5", "::"):
        with pytest.raises(TeamsConfigError, match="loopback"):
            check_config(config, host)


def test_production_needs_the_app_id_and_its_secret() -> None:
    for missing in ({"teams_app_password": None}, {"teams_app_id": None, "teams_app_password": APP_PASSWORD}):
        with pytest.raises(TeamsConfigError, match="TEAMS_DEV_MODE=true"):
            check_config(teams_config(Settings(_env_file=None, **{"teams_app_id": APP_ID, **missing})))  # type: ignore[call-arg]


async def test_serve_refuses_to_start_in_development_mode_with_credentials(tmp_path: Path) -> None:
    """Refused before the database is touched (no embedded server is started in tmp_path)."""
    settings = teams_settings(dev_mode=True, teams_app_password=APP_PASSWORD, runbook_bot_home=tmp_path)
    with pytest.raises(TeamsConfigError, match="never run with real credentials"):
        await serve(settings)
    assert not (tmp_path / "pgdata").exists()


def test_teams_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMS_APP_ID", APP_ID)
    monkeypatch.setenv("TEAMS_APP_PASSWORD", APP_PASSWORD)
    monkeypatch.setenv("TEAMS_TENANT_ID", TENANT)
    monkeypatch.setenv("TEAMS_CHANNEL_SOURCES", '{"*": ["examples"]}')
    monkeypatch.setenv("TEAMS_ALERT_FILTERS", "service, environment")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.teams_app_id, settings.teams_tenant_id, settings.teams_dev_mode) == (APP_ID, TENANT, False)
    assert settings.teams_channel_sources == {"*": ["examples"]}
    assert APP_PASSWORD in settings.secret_values(), "redacted from answers like every secret"
    assert settings.masked()["TEAMS_APP_PASSWORD"] == "********"
    config = teams_config(settings)
    assert config.alert_filters == ("service", "environment")
    assert (config.app_id, config.tenant_id, config.app_password) == (APP_ID, TENANT, APP_PASSWORD)
    assert APP_PASSWORD not in repr(config), "the client secret stays out of logs"
