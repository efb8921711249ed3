"""The Slack adapter's configuration: plain data, built from the settings in bot/app.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SlackConfig:
    """The adapter's knobs and credentials; bot/app.py builds it from the settings."""

    visibility: str = "channel"  # /runbook answers: "channel" or "ephemeral" (with a share button)
    allowed_channels: frozenset[str] = frozenset()  # empty: every channel; DMs are always allowed
    channel_sources: Mapping[str, Sequence[str]] = field(default_factory=dict)  # channel -> sources; "*" default
    source_links: Mapping[str, str] = field(default_factory=dict)  # source -> base URL of its links
    alert_filters: tuple[str, ...] = ()  # alert labels used as strict filters (service, environment)
    answer_bots: bool = False
    bot_token: str = field(default="", repr=False)
    signing_secret: str = field(default="", repr=False)  # empty: Socket Mode only
    app_token: str = field(default="", repr=False)  # Socket Mode
    api_url: str | None = None  # the Web API base URL (tests: a local fake)
    api_retries: int = 3
    user_rate_limit: int = 10  # questions per minute, 0 = off
    channel_rate_limit: int = 30
