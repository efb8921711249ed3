"""The Teams adapter's configuration: plain data, built from the settings in bot/app.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TeamsConfig:
    """The adapter's knobs and credentials; bot/app.py builds it from the settings."""

    app_id: str | None = None  # the bot's Entra app (client) id
    app_password: str = field(default="", repr=False)  # its client secret
    tenant_id: str | None = None  # single-tenant bots; None: multi-tenant
    dev_mode: bool = False  # no authentication, loopback only (the Emulator, a local fake Connector)
    channel_sources: Mapping[str, Sequence[str]] = field(default_factory=dict)  # conversation -> sources; "*"
    source_links: Mapping[str, str] = field(default_factory=dict)  # source -> base URL of its links
    alert_filters: tuple[str, ...] = ()  # alert labels used as strict filters (service, environment)
    user_rate_limit: int = 10  # questions per minute, 0 = off
    channel_rate_limit: int = 30

    @property
    def wanted(self) -> bool:
        """Whether the Teams endpoint is wanted (an app id, or the development mode)."""
        return bool(self.app_id) or self.dev_mode
