"""Settings: read once from the environment (and an optional .env file), then passed down."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

EmbeddingBackend = Literal["wordllama", "sentence-transformers", "litellm"]
LLMProfile = Literal["cheap", "balanced", "premium"]


def default_home() -> Path:
    """The per-user data directory used when RUNBOOK_BOT_HOME is not set."""
    return platformdirs.user_data_path("runbook-bot", appauthor=False)


class SyncSource(BaseModel):
    """A source the scheduler keeps fresh: a directory or a git working tree (pulled first)."""

    name: str = Field(min_length=1)
    path: Path
    pull: bool = True


class RestrictedSource(BaseModel):
    """A source only some conversations and groups may see."""

    allowed_channels: list[str] = Field(default_factory=list)
    allowed_groups: list[str] = Field(default_factory=list)


class ApiKey(BaseModel):
    """A bearer key of the HTTP API, scoped to sources (None: any) and carrying groups."""

    key: SecretStr
    sources: list[str] | None = None
    groups: list[str] = Field(default_factory=list)


class Settings(BaseSettings):
    """Every knob of runbook-bot. Only this module reads the environment."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # Storage
    database_url: SecretStr | None = Field(
        default=None, description="External Postgres with pgvector; unset = embedded server"
    )
    runbook_bot_home: Path = Field(default_factory=default_home, description="Data directory")
    db_pool_min: int = Field(default=1, ge=1)
    db_pool_max: int = Field(default=8, ge=1)

    # Embeddings
    embedding_backend: EmbeddingBackend = "wordllama"
    embedding_model: str | None = Field(
        default=None, description="Backend-specific model name; unset = the backend's default"
    )
    embedding_batch_size: int = Field(default=64, ge=1, le=4096)
    embedding_api_base: str | None = Field(default=None, description="litellm backend only")
    embedding_api_key: SecretStr | None = None

    # Reranking (extra `transformers`): a cross-encoder model name or path; unset = off
    reranker_model: str | None = None
    reranker_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="Share of the reranker in the blend")
    reranker_depth: int = Field(default=20, ge=1, le=100, description="Fused hits the reranker re-scores")

    # Ingestion and chunking
    max_file_mb: float = Field(default=5.0, gt=0, description="Larger files are skipped")
    chunk_target_tokens: int = Field(default=450, ge=50)
    chunk_max_tokens: int = Field(default=600, ge=100)
    chunk_overlap_tokens: int = Field(default=50, ge=0)

    # LLM (any litellm model name); unset = extractive answers only
    llm_model: str | None = Field(default=None, description="Explicit model; overrides the profile")
    llm_profile: LLMProfile = "balanced"
    llm_model_cheap: str | None = None
    llm_model_balanced: str | None = None
    llm_model_premium: str | None = None
    llm_fallback_model: str | None = None
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_temperature: float = Field(default=0.2, ge=0.0, le=1.0)
    llm_timeout_s: float = Field(default=30.0, gt=0, description="Per model call")
    llm_retries: int = Field(default=2, ge=0, le=10)
    llm_max_tokens: int = Field(default=1500, ge=100)
    llm_stop: list[str] = Field(default_factory=list, max_length=4,
                                description='Stop sequences, JSON (a small local model: ["\\n\\n\\n\\n"])')

    # The agent loop
    agent_max_steps: int = Field(default=6, ge=1, le=20)
    agent_timeout_s: float = Field(default=60.0, gt=0, description="Whole answer, all calls")
    tool_timeout_s: float = Field(default=10.0, gt=0)
    tool_budget_tokens: int = Field(default=6000, ge=500, description="Tool output shown to the model")
    tool_call_tokens: int = Field(default=2000, ge=200, description="One tool result at most")
    min_confidence: float = Field(default=0.65, ge=0.0, le=1.0, description="Below: a closest match, not an answer")
    min_plausible: float = Field(default=0.25, ge=0.0, le=1.0, description="Below: abstain")
    llm_gate: bool = Field(default=True, description="Show the extractive answer when the model's falls short of it")
    max_question_chars: int = Field(default=2000, ge=50)
    guard_policy: Path | None = Field(default=None, description="Operator policy YAML (extends the default)")
    record_answers: bool = Field(default=True, description="Store each answer in the answers table")

    # Feedback and jobs
    feedback_enabled: bool = Field(default=True, description="Apply engineers' votes as reranking boosts")
    feedback_cache_s: float = Field(default=30.0, ge=0, description="How often to look for new weights")
    feedback_recompute_minutes: float = Field(default=15.0, ge=0, description="Weights job interval; 0 = off")
    sync_sources: list[SyncSource] = Field(
        default_factory=list, description='JSON: [{"name": "platform", "path": "/srv/runbooks", "pull": true}]'
    )
    sync_interval_minutes: float = Field(default=30.0, ge=0, description="Source re-sync interval; 0 = off")
    stale_after_days: int = Field(default=180, ge=1, description="Staleness report: not updated for this long")
    stale_min_downvotes: int = Field(default=3, ge=1, description="Staleness report: cited in this many 👎")

    # Slack
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str | None = Field(default=None, description="Web API base URL (tests, GovSlack); unset = slack.com")
    slack_answer_visibility: Literal["channel", "ephemeral"] = Field(
        default="channel", description="/runbook answers: visible in the channel, or ephemeral with a share button")
    slack_allowed_channels: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Channel ids answered in (comma-separated); empty = all; DMs always")
    slack_channel_sources: dict[str, list[str]] = Field(
        default_factory=dict, description='JSON {"C123": ["payments"], "*": [...]}: sources searched per channel')
    slack_source_links: dict[str, str] = Field(
        default_factory=dict, description='JSON {"examples": "https://git.example.com/rb/blob/main"}: link bases')
    slack_alert_filters: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Alert labels used as strict search filters: service, environment")
    slack_answer_bots: bool = Field(default=False, description="Answer other bots' mentions and DMs")
    slack_user_rate_limit: int = Field(default=10, ge=0, description="Questions per user per minute; 0 = no limit")
    slack_channel_rate_limit: int = Field(default=30, ge=0, description="Questions per channel per minute; 0 = off")
    slack_api_retries: int = Field(default=3, ge=0, le=10, description="Retries of a Web API call after a 429")

    @field_validator("slack_allowed_channels", "slack_alert_filters", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    # Teams
    teams_app_id: str | None = Field(
        default=None, description="Microsoft App ID (Entra app client id) of the bot; set = serve POST /api/messages")
    teams_app_password: SecretStr | None = Field(default=None, description="Client secret of that Entra app")
    teams_tenant_id: str | None = Field(
        default=None, description="Tenant of a single-tenant bot; unset = multi-tenant (botframework.com)")
    teams_dev_mode: bool = Field(
        default=False, description="Local testing only: no JWT check and no tokens; refused with a password, "
                                   "binds 127.0.0.1 and answers loopback requests only")
    teams_channel_sources: dict[str, list[str]] = Field(
        default_factory=dict, description='JSON {"19:...@thread.tacv2": ["payments"], "*": [...]}: sources per '
                                          "conversation")
    teams_source_links: dict[str, str] = Field(
        default_factory=dict, description="JSON link base per source, like SLACK_SOURCE_LINKS; empty = those")
    teams_alert_filters: str = Field(
        default="", description="Comma-separated alert labels used as strict search filters: service, environment")
    teams_user_rate_limit: int = Field(default=10, ge=0, description="Questions per user per minute; 0 = no limit")
    teams_channel_rate_limit: int = Field(default=30, ge=0, description="Questions per conversation a minute; 0 = off")

    # Server
    restricted_sources: dict[str, RestrictedSource] = Field(
        default_factory=dict, description='JSON {"security": {"allowed_channels": ["C1"], "allowed_groups": ["secops"]}}')
    access_groups: dict[str, list[str]] = Field(
        default_factory=dict, description='JSON {"secops": ["U123", "C456"]}: members (user or channel ids, API key names)')
    api_keys: dict[str, ApiKey] = Field(
        default_factory=dict, description='JSON {"grafana": {"key": "...", "sources": ["examples"], "groups": []}}')
    port: int = Field(default=3000, ge=1, le=65535)
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = Field(default="text", description="json: one object per line")

    @field_validator("runbook_bot_home")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @property
    def pgdata(self) -> Path:
        """Where the embedded Postgres keeps its data."""
        return self.runbook_bot_home / "pgdata"

    @property
    def max_file_bytes(self) -> int:
        """The ingestion size limit in bytes."""
        return int(self.max_file_mb * 1024 * 1024)

    def chat_model(self, profile: LLMProfile | None = None) -> str | None:
        """The model to answer with: LLM_MODEL, else the profile's model, else None (extractive)."""
        if self.llm_model and profile is None:
            return self.llm_model
        chosen = {"cheap": self.llm_model_cheap, "balanced": self.llm_model_balanced,
                  "premium": self.llm_model_premium}[profile or self.llm_profile]
        return chosen or self.llm_model

    def secret_values(self) -> list[str]:
        """Every configured secret, for redaction from answers."""
        values = [getattr(self, n) for n in type(self).model_fields] + [k.key for k in self.api_keys.values()]
        return [v.get_secret_value() for v in values if isinstance(v, SecretStr) and v.get_secret_value()]

    def database_dsn(self) -> str | None:
        """The external database URL, or None for the embedded server."""
        return self.database_url.get_secret_value() if self.database_url else None

    def masked(self) -> dict[str, Any]:
        """The effective settings with every secret masked, for display."""
        shown: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name == "database_url" and value is not None:
                value = mask_url(value.get_secret_value())
            elif isinstance(value, SecretStr):
                value = "********" if value.get_secret_value() else ""
            elif isinstance(value, Path):
                value = str(value)
            elif name == "api_keys":
                value = {n: {**k.model_dump(exclude={"key"}), "key": "********"} for n, k in value.items()}
            elif name == "restricted_sources":
                value = {n: r.model_dump() for n, r in value.items()}
            shown[name.upper()] = value
        return shown


def mask_url(url: str) -> str:
    """Hide the password of a connection URL (and any password= parameter)."""
    url = re.sub(r"(://[^:/@]+:)[^@]*@", r"\1********@", url)
    return re.sub(r"(password=)[^&\s]+", r"\1********", url, flags=re.IGNORECASE)
