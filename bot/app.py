"""Wiring: the one place that reads Settings. It opens the database pool, the embedder and the
answerer, and turns the settings into each part's configuration (search, Slack, Teams, jobs, server);
nothing else sees Settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from psycopg_pool import AsyncConnectionPool
from pydantic import SecretStr

from bot.access import AccessConfig
from bot.agent import AgentLimits
from bot.api import ApiConfig, ApiKeyScope
from bot.answering import Answerer
from bot.llm import LLM, LiteLLMChat
from bot.settings import Settings
from bot.jobs import JobsConfig
from bot.runtime import Runtime
from bot.slack.config import SlackConfig
from bot.teams.config import TeamsConfig
from bot.tools import ToolLimits
from guardrails import load_policy
from retrieval import db
from retrieval.access import SourceRule
from retrieval.corrections import CorrectionsCache
from retrieval.embed import CachedEmbedder, Embedder, local_embedder
from retrieval.ingest import IngestOptions
from retrieval.rerank import make_reranker
from retrieval.search_types import SearchConfig
from retrieval.sync import SourceSpec
from retrieval.weights import WeightsCache


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedding backend (hosted ones through bot.llm)."""
    if settings.embedding_backend == "litellm":
        from bot.llm import LiteLLMEmbedder

        key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
        return LiteLLMEmbedder(
            settings.embedding_model or "", api_base=settings.embedding_api_base, api_key=key,
            batch_size=settings.embedding_batch_size,
        )
    return local_embedder(settings.embedding_backend, settings.embedding_model)


def ingest_options(settings: Settings, source: str | None = None) -> IngestOptions:
    """Ingestion knobs from settings."""
    return IngestOptions(
        source=source, max_file_bytes=settings.max_file_bytes,
        target_tokens=settings.chunk_target_tokens, max_tokens=settings.chunk_max_tokens,
        overlap_tokens=settings.chunk_overlap_tokens, embed_batch_size=settings.embedding_batch_size,
    )


def database_url(settings: Settings) -> str:
    """The external database, or the embedded one started on demand."""
    return db.resolve_url(settings.database_dsn(), settings.pgdata)


def make_llm(settings: Settings) -> LLM | None:
    """The configured chat model, or None (extractive answers) when no model is set."""
    model = settings.chat_model()
    if not model:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return LiteLLMChat(
        model, fallback=settings.llm_fallback_model, temperature=settings.llm_temperature,
        timeout=settings.llm_timeout_s, retries=settings.llm_retries, max_tokens=settings.llm_max_tokens,
        api_base=settings.llm_api_base, api_key=key, stop=settings.llm_stop,
    )


def search_config(settings: Settings) -> SearchConfig:
    """Search knobs from settings: the confidence thresholds and the reranker's share."""
    return SearchConfig(min_confidence=settings.min_confidence, min_plausible=settings.min_plausible,
                        rerank_weight=settings.reranker_weight, rerank_depth=settings.reranker_depth)


def make_answerer(settings: Settings, pool: AsyncConnectionPool, embedder: Embedder, llm: LLM | None) -> Answerer:
    """The answering service with every limit and threshold from settings."""
    return Answerer(
        pool=pool, embedder=embedder, llm=llm, policy=load_policy(settings.guard_policy),
        limits=AgentLimits(max_steps=settings.agent_max_steps, call_timeout_s=settings.llm_timeout_s,
                           total_timeout_s=settings.agent_timeout_s, min_confidence=settings.min_confidence,
                           min_plausible=min(settings.min_plausible, settings.min_confidence),
                           gate=settings.llm_gate),
        tool_limits=ToolLimits(budget_tokens=settings.tool_budget_tokens, call_tokens=settings.tool_call_tokens,
                               timeout_s=settings.tool_timeout_s),
        search_config=search_config(settings),
        reranker=make_reranker(settings.reranker_model),
        secrets=tuple(settings.secret_values()), max_question_chars=settings.max_question_chars,
        record=settings.record_answers,
        weights=WeightsCache(pool, ttl_s=settings.feedback_cache_s) if settings.feedback_enabled else None,
        access=access_config(settings),
        corrections=CorrectionsCache(pool, ttl_s=settings.feedback_cache_s) if settings.feedback_enabled else None,
    )


async def open_runtime(settings: Settings, *, embedder: Embedder | None = None, llm: LLM | None = None) -> Runtime:
    """Start or connect to the database, migrate, open the pool, load the embedder."""
    url = database_url(settings)
    pool = await db.open_pool(url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
    try:
        chosen = embedder or CachedEmbedder(make_embedder(settings))
        answerer = make_answerer(settings, pool, chosen, llm if llm is not None else make_llm(settings))
    except Exception:
        await pool.close()
        raise
    return Runtime(pool=pool, embedder=chosen, answerer=answerer)


def slack_config(settings: Settings) -> SlackConfig:
    """The Slack block of the settings, the only place the Slack adapter's knobs are read."""

    def secret(value: SecretStr | None) -> str:
        return value.get_secret_value() if value else ""

    return SlackConfig(visibility=settings.slack_answer_visibility,
                       allowed_channels=frozenset(settings.slack_allowed_channels),
                       channel_sources=dict(settings.slack_channel_sources),
                       source_links=dict(settings.slack_source_links),
                       alert_filters=tuple(settings.slack_alert_filters), answer_bots=settings.slack_answer_bots,
                       bot_token=secret(settings.slack_bot_token), signing_secret=secret(settings.slack_signing_secret),
                       app_token=secret(settings.slack_app_token), api_url=settings.slack_api_url,
                       api_retries=settings.slack_api_retries, user_rate_limit=settings.slack_user_rate_limit,
                       channel_rate_limit=settings.slack_channel_rate_limit)


def access_config(settings: Settings) -> AccessConfig:
    """The restricted sources and who belongs to which group."""
    rules = {name: SourceRule(channels=tuple(r.allowed_channels), groups=tuple(r.allowed_groups))
             for name, r in settings.restricted_sources.items()}
    return AccessConfig(restricted_sources=rules,
                        groups={g: tuple(members) for g, members in settings.access_groups.items()})


def api_config(settings: Settings) -> ApiConfig:
    """The API's bearer keys (the server decides whether one is required)."""
    return ApiConfig(keys=tuple(
        ApiKeyScope(name, k.key.get_secret_value(), tuple(k.sources) if k.sources is not None else None,
                    tuple(k.groups)) for name, k in settings.api_keys.items()))


def teams_config(settings: Settings) -> TeamsConfig:
    """The Teams block of the settings (link bases default to Slack's)."""
    password = settings.teams_app_password.get_secret_value() if settings.teams_app_password else ""
    return TeamsConfig(app_id=settings.teams_app_id, app_password=password, tenant_id=settings.teams_tenant_id,
                       dev_mode=settings.teams_dev_mode, channel_sources=dict(settings.teams_channel_sources),
                       source_links=dict(settings.teams_source_links or settings.slack_source_links),
                       alert_filters=tuple(p.strip() for p in settings.teams_alert_filters.split(",") if p.strip()),
                       user_rate_limit=settings.teams_user_rate_limit,
                       channel_rate_limit=settings.teams_channel_rate_limit)


def jobs_config(settings: Settings) -> JobsConfig:
    """The scheduled jobs' knobs: intervals, the sources to re-sync, the answers' own search config."""
    return JobsConfig(search=search_config(settings), ingest=ingest_options(settings),
                      sources=tuple(SourceSpec(s.name, s.path.expanduser(), s.pull) for s in settings.sync_sources),
                      recompute_minutes=settings.feedback_recompute_minutes,
                      sync_minutes=settings.sync_interval_minutes, stale_after_days=settings.stale_after_days,
                      stale_min_downvotes=settings.stale_min_downvotes)


@dataclass(frozen=True)
class ServeConfig:
    """What `runbook-bot serve` runs: the port, the chat adapters that are configured, the jobs."""

    port: int = 3000
    api: ApiConfig = field(default_factory=ApiConfig)
    slack: SlackConfig | None = None  # None: no SLACK_BOT_TOKEN
    teams: TeamsConfig | None = None  # None: neither TEAMS_APP_ID nor TEAMS_DEV_MODE
    jobs: JobsConfig = field(default_factory=JobsConfig)


def serve_config(settings: Settings) -> ServeConfig:
    """The server's configuration from the settings."""
    slack = slack_config(settings) if settings.slack_bot_token is not None else None
    teams = teams_config(settings)
    return ServeConfig(port=settings.port, api=api_config(settings), slack=slack, teams=teams if teams.wanted else None,
                       jobs=jobs_config(settings))


async def serve(settings: Settings) -> None:
    """`runbook-bot serve`: refuse unsafe Teams settings before anything starts, open the runtime, serve
    until stopped (the server closes the runtime)."""
    from bot.server import check_serve_config, run_server  # the chat SDKs load only to serve

    config = serve_config(settings)
    check_serve_config(config)
    await run_server(await open_runtime(settings), config)
