"""How the Teams endpoint is secured, and its local development mode.

Production (the default): every activity must carry a Bot Framework JWT, validated by the Agents
SDK (`jwt_authorization_decorator`: signature against Microsoft's published keys, audience = our
app id, issuer = the Bot Framework or our tenant, expiry); replies go only to Microsoft service
URLs (the SDK's `OutboundHostValidator`), authenticated with a token the app gets from Entra ID
with its client secret (MSAL).

Development (`TEAMS_DEV_MODE=true`, for the Bot Framework Emulator or tests): no JWT and no tokens.
It cannot be switched on by accident in production: the bot refuses to start when a client secret
is configured too, the server then binds 127.0.0.1 only, each request must come from a loopback
address without proxy forwarding headers (a tunnel or reverse proxy in front is refused), and
replies go only to loopback service URLs.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable

from aiohttp import web
from azure.core.credentials_async import AsyncTokenCredential
from microsoft_agents.authentication.msal import MsalAuth
from microsoft_agents.hosting.core import (
    AccessTokenProviderBase, AgentAuthConfiguration, AuthTypes, ConnectionManager, OutboundHostValidator,
)
from yarl import URL

from bot.teams.config import TeamsConfig

log = logging.getLogger(__name__)
ProviderFactory = Callable[[AgentAuthConfiguration], AccessTokenProviderBase]
DEV_HOST = "127.0.0.1"
SERVE_HOST = "0.0.0.0"
MULTI_TENANT = "botframework.com"
FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP", "X-Client-IP")


class TeamsConfigError(ValueError):
    """The Teams settings are unsafe or incomplete; the server refuses to start."""


def bind_host(config: TeamsConfig) -> str:
    """The address `runbook-bot serve` listens on: loopback only in Teams development mode."""
    return DEV_HOST if config.dev_mode else SERVE_HOST


def is_loopback(host: str | None) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1."""
    if not host:
        return False
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_config(config: TeamsConfig, host: str | None = None) -> None:
    """Refuse unsafe or incomplete Teams settings (`host`: the address the server will bind)."""
    if config.dev_mode:
        if config.app_password:
            raise TeamsConfigError(
                "TEAMS_DEV_MODE=true turns off authentication and must never run with real credentials: "
                "unset TEAMS_APP_PASSWORD for local testing, or unset TEAMS_DEV_MODE in production")
        if host is not None and not is_loopback(host):
            raise TeamsConfigError(f"TEAMS_DEV_MODE=true only serves on a loopback address, not {host}")
        return
    if not config.app_id or not config.app_password:
        raise TeamsConfigError(
            "Teams needs TEAMS_APP_ID and TEAMS_APP_PASSWORD (the bot's Entra app and client secret); "
            "for local testing without them set TEAMS_DEV_MODE=true")


def auth_configuration(config: TeamsConfig) -> AgentAuthConfiguration:
    """The SDK's connection settings: client-secret auth of the bot's Entra app."""
    return AgentAuthConfiguration(
        auth_type=AuthTypes.client_secret, client_id=config.app_id, client_secret=config.app_password or None,
        tenant_id=config.tenant_id or MULTI_TENANT, connection_name="SERVICE_CONNECTION",
        anonymous_allowed=False, validate_issuer=True)


def connections(config: TeamsConfig, provider: ProviderFactory | None = None) -> ConnectionManager:
    """The SDK's connection manager: MSAL in production, no token provider at all in development mode."""
    chosen = provider or (NoTokens if config.dev_mode else MsalAuth)
    return ConnectionManager(provider_factory=chosen,
                             connections_configurations={"SERVICE_CONNECTION": auth_configuration(config)})


def service_urls(config: TeamsConfig) -> OutboundHostValidator:
    """Where replies may go: Microsoft's Teams and Bot Framework hosts (https), loopback in development mode."""
    if config.dev_mode:
        return LoopbackServiceUrls()
    return OutboundHostValidator(enabled=True)


def local_request(request: web.Request) -> bool:
    """A request straight from this machine: loopback peer and no proxy forwarding headers."""
    forwarded = [h for h in FORWARDING_HEADERS if h in request.headers]
    if forwarded or not is_loopback(request.remote):
        log.warning("teams: development mode refused a request from %s (forwarding headers: %s)",
                    request.remote, ", ".join(forwarded) or "none")
        return False
    return True


class LoopbackServiceUrls(OutboundHostValidator):
    """Service URLs on this machine only (the Emulator, a local fake Connector)."""

    def __init__(self) -> None:
        super().__init__(enabled=True, include_default_microsoft_hosts=False)

    def is_allowed(self, url: str | URL) -> bool:
        """True for http(s) URLs whose host is a loopback address."""
        try:
            parsed = URL(str(url))
        except ValueError:
            return False
        return parsed.scheme in ("http", "https") and not parsed.user and is_loopback(parsed.host)


class NoTokens(AccessTokenProviderBase):
    """Development mode's token provider: it never acquires a token, it fails loudly if asked to."""

    def __init__(self, configuration: AgentAuthConfiguration) -> None:
        self._configuration = configuration

    @property
    def configuration(self) -> AgentAuthConfiguration:
        """The (credential-less) connection settings."""
        return self._configuration

    async def get_access_token(self, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        """Refuse: development mode talks only to loopback service URLs, anonymously."""
        raise RuntimeError("TEAMS_DEV_MODE never acquires tokens")

    def get_token_credential(self) -> AsyncTokenCredential:
        """Refuse, as get_access_token."""
        raise RuntimeError("TEAMS_DEV_MODE never acquires tokens")
