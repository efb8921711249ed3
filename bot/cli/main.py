"""The `runbook-bot` command line: a sync shell over the async core (asyncio.run per command)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, TypeVar

import typer

from bot import EXAMPLE_RUNBOOKS, messages
from bot.answering import EmptyQuestion
from bot.app import database_url, ingest_options, jobs_config, open_runtime
from bot.app import serve as serve_app
from bot.runtime import Runtime
from bot.cli import output
from bot.cli.bench import bench_cmd
from bot.cli.feedback import feedback_app
from bot.cli.guard import guard_app
from bot.context import IncidentContext
from bot.filters import Filters
from bot.observability import configure_logging, new_request_id
from bot.settings import Settings
from guardrails import PolicyError
from retrieval import db
from retrieval.embed import EmbedderUnavailable
from retrieval.ingest import EmptySource, IngestOptions, IngestRefused, describe, ingest
from retrieval.search import hybrid_search
from retrieval.search_types import SearchFilters
from retrieval.rerank import RerankerUnavailable
from retrieval.store import IndexMismatch

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Answers on-call questions from your runbooks.")
db_app = typer.Typer(no_args_is_help=True, help="Database migrations.")
app.add_typer(db_app, name="db")
app.add_typer(guard_app, name="guard", help="Run the dangerous-command policy by hand.")
app.add_typer(feedback_app, name="feedback", help="Feedback weights: recompute, show, replay.")
report_app = typer.Typer(no_args_is_help=True, help="Reports for runbook owners.")
app.add_typer(report_app, name="report")

T = TypeVar("T")
DEMO_QUESTION = "Disk full on /var/lib/docker: No space left on device. What do I do?"
USER_ERRORS = (db.DatabaseUnavailable, EmbedderUnavailable, IndexMismatch, FileNotFoundError, EmptyQuestion,
               RerankerUnavailable, PolicyError)  # (an operator's GUARD_POLICY file that does not parse)


def _settings() -> Settings:
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    new_request_id()
    return settings


def _run(coro: Awaitable[T]) -> T:
    """Run a coroutine; known failures become one clear line and exit code 2."""
    try:
        return asyncio.run(coro)  # type: ignore[arg-type]
    except USER_ERRORS as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


async def _with_runtime(settings: Settings, work: Callable[[Runtime], Awaitable[T]]) -> T:
    runtime = await open_runtime(settings)
    try:
        return await work(runtime)
    finally:
        await runtime.close()


def _filters(source: list[str], service: list[str], environment: list[str], tag: list[str]) -> SearchFilters | None:
    return Filters(source=source, service=service, environment=environment, tags=tag).to_search()


@app.command()
def config() -> None:
    """Print the effective settings, secrets masked."""
    for key, value in _settings().masked().items():
        typer.echo(f"{key}={'' if value is None else value}")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply pending migrations."""
    settings = _settings()
    applied = _run(db.upgrade(database_url(settings)))
    typer.echo("\n".join(f"applied {m.version:03d}_{m.name}" for m in applied) or "database is up to date")


@db_app.command("status")
def db_status() -> None:
    """List migrations and whether each is applied."""
    settings = _settings()
    for migration, applied_at in _run(db.status(database_url(settings))):
        typer.echo(f"{migration.version:03d}_{migration.name}: {applied_at or 'pending'}")


@app.command("ingest")
def ingest_cmd(
    paths: list[Path] = typer.Argument(..., help="Directories, git working trees or files"),
    source: Optional[str] = typer.Option(None, help="Source name (default: the directory name)"),
    stats: bool = typer.Option(False, "--stats", help="Print time per stage"),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON"),
    allow_empty: bool = typer.Option(
        False, "--allow-empty", help="Let paths with no documents delete every document of the source"
    ),
) -> None:
    """Ingest runbooks incrementally (unchanged files are skipped, deleted ones removed)."""
    settings = _settings()
    options = replace(ingest_options(settings, source), allow_empty=allow_empty)
    try:
        summary = _run(_with_runtime(settings, lambda rt: _ingest(rt, paths, options)))
    except IngestRefused as exc:
        typer.echo(_refusal(exc), err=True)
        raise typer.Exit(2) from None
    typer.echo(json.dumps(summary, indent=2) if as_json else output.ingest_text(summary, stats=stats))
    if summary["failed"]:
        raise typer.Exit(1)


def _refusal(exc: IngestRefused) -> str:
    """Why an ingest was refused, with what to do about it."""
    if isinstance(exc, EmptySource):
        return messages.INGEST_EMPTY_SOURCE.format(source=exc.source, documents=exc.documents)
    return messages.INGEST_NOT_A_SOURCE.format(detail=exc)


async def _ingest(runtime: Runtime, paths: list[Path], options: IngestOptions) -> dict[str, Any]:
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("ingesting", total=None)
            result = await ingest(runtime.pool, runtime.embedder, paths, options,
                                  lambda done, total, path: bar.update(task, completed=done, total=total, description=path[-40:]))
    else:
        result = await ingest(runtime.pool, runtime.embedder, paths, options)
    return describe(result)


@app.command()
def reindex() -> None:
    """Rebuild the vector index from the chunks in Postgres with the configured embedder."""
    from retrieval.reindex import reindex as rebuild

    settings = _settings()
    report = _run(_with_runtime(settings, lambda rt: rebuild(rt.pool, rt.embedder)))
    typer.echo(json.dumps(report, indent=2))


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for"),
    k: int = typer.Option(5, "-k", min=1, max=50, help="How many results"),
    as_json: bool = typer.Option(False, "--json"),
    explain: bool = typer.Option(False, "--explain", help="Show per-leg ranks, scores and boosts"),
    source: list[str] = typer.Option([], help="Only these sources"),
    service: list[str] = typer.Option([], help="Only runbooks of these services"),
    environment: list[str] = typer.Option([], help="Only these environments"),
    tag: list[str] = typer.Option([], help="Only runbooks with any of these tags"),
) -> None:
    """Hybrid search over the runbooks."""
    query = _readable(query)
    if not query.strip():
        typer.echo(messages.EMPTY_SEARCH, err=True)
        raise typer.Exit(2)
    settings = _settings()
    filters = _filters(source, service, environment, tag)
    result = _run(_with_runtime(settings, lambda rt: hybrid_search(rt.pool, rt.embedder, query, k=k, filters=filters)))
    typer.echo(json.dumps(output.search_json(result), indent=2, default=str) if as_json
               else output.search_text(result, explain=explain))


@app.command()
def ask(
    question: str = typer.Argument("", help="The question, or an alert pasted as is ('-' reads stdin)"),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer model as JSON"),
    source: list[str] = typer.Option([], help="Only these sources"),
    service: list[str] = typer.Option([], help="Only runbooks of these services"),
    environment: list[str] = typer.Option([], help="Only these environments"),
    tag: list[str] = typer.Option([], help="Only runbooks with any of these tags"),
) -> None:
    """Answer a question with steps, commands and cited runbook sections."""
    question = _stdin_text() if question == "-" else _readable(question)
    if not question.strip():
        typer.echo(messages.EMPTY_QUESTION, err=True)
        raise typer.Exit(2)
    settings = _settings()
    context = IncidentContext(filters=_filters(source, service, environment, tag), entry_point="cli")
    answer = _run(_with_runtime(settings, lambda rt: rt.answerer.answer(question, context)))
    typer.echo(answer.model_dump_json(indent=2) if as_json else output.answer_text(answer))


def _stdin_text() -> str:
    """Standard input as text; bytes that are not UTF-8 become U+FFFD, with a note on stderr."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        typer.echo(messages.STDIN_NOT_UTF8, err=True)
        return data.decode("utf-8", errors="replace")


def _readable(text: str) -> str:
    """A command-line argument as valid text: bytes that were not UTF-8 (kept by Python as lone
    surrogates, which the embedder and Postgres refuse) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@app.command()
def demo(
    question: str = typer.Option(DEMO_QUESTION, help="The question to ask after ingesting"),
    path: Path = typer.Option(EXAMPLE_RUNBOOKS, help="Runbooks to ingest"),
) -> None:
    """Start the embedded database, ingest the example runbooks, answer one question."""
    settings = _settings()

    async def work(runtime: Runtime) -> None:
        summary = await _ingest(runtime, [path], ingest_options(settings, "examples"))
        typer.echo(output.ingest_text(summary))
        typer.echo(f"\nQ: {question}\n")
        typer.echo(output.answer_text(await runtime.answerer.answer(question, IncidentContext(entry_point="cli"))))

    _run(_with_runtime(settings, work))


eval_app = typer.Typer(help="Measure retrieval (`eval --corpus --queries`) or whole answers (`eval answers`).")
app.add_typer(eval_app, name="eval")


@eval_app.callback(invoke_without_command=True)
def eval_cmd(
    ctx: typer.Context,
    corpus: Optional[Path] = typer.Option(None, exists=True, file_okay=False, help="The corpus/ folder of an eval set"),
    queries: Optional[Path] = typer.Option(None, exists=True, dir_okay=False, help="queries.jsonl"),
    as_json: bool = typer.Option(False, "--json", help="Last stdout line: the metrics as JSON"),
    compare: bool = typer.Option(False, "--compare", help="Also run BM25-only and dense-only"),
    record: bool = typer.Option(True, help="Store the runs in eval_runs of the bot's database"),
    reranker: Optional[str] = typer.Option(None, help="Cross-encoder model name or path (default RERANKER_MODEL)"),
) -> None:
    """Measure retrieval on a labelled corpus, in a throw-away database."""
    if ctx.invoked_subcommand is not None:
        return
    if corpus is None or queries is None:
        typer.echo("error: eval needs --corpus and --queries (or: eval answers --corpus --cases)", err=True)
        raise typer.Exit(2)
    from bot.measure.retrieval_eval import run_eval

    settings = _settings()
    result = _run(run_eval(settings, corpus, queries, compare=compare, record=record,
                           reranker=reranker or settings.reranker_model))
    typer.echo(output.eval_table(result))
    if as_json:
        typer.echo(json.dumps(result, separators=(",", ":")))


@eval_app.command("answers")
def eval_answers_cmd(
    corpus: Path = typer.Option(..., exists=True, file_okay=False, help="The corpus/ folder of an eval set"),
    cases: Path = typer.Option(..., exists=True, dir_okay=False, help="Incident cases (.jsonl)"),
    as_json: bool = typer.Option(False, "--json", help="Last stdout line: the scores as JSON"),
    llm: bool = typer.Option(False, "--llm", help="Answer with the configured model (LLM_MODEL)"),
    record: bool = typer.Option(True, help="Store the run in eval_runs of the bot's database"),
    verbose: bool = typer.Option(False, "--verbose", help="One JSON line per case on stderr"),
    every: int = typer.Option(1, "--every", min=1, help="Answer every N-th case only (a slow model)"),
) -> None:
    """Answer incident cases as the Slack bot would (throw-away database) and score the answers."""
    from bot.measure.answer_eval import run_answer_eval

    settings = _settings()

    def show(scored: Any) -> None:
        if verbose:
            typer.echo(json.dumps(scored.row()), err=True)

    try:
        result = _run(run_answer_eval(settings, corpus, cases, use_llm=llm, record=record, every=every,
                                      on_case=show))
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(output.answers_table(result))
    if as_json:
        typer.echo(json.dumps(result, separators=(",", ":")))


@app.command()
def sync(source: list[str] = typer.Option([], help="Only these configured sources")) -> None:
    """Pull and ingest the sources configured in SYNC_SOURCES once (what the serve job does)."""
    from bot.jobs import sync_job

    settings = _settings()
    config = jobs_config(settings)
    specs = [s for s in config.sources if not source or s.name in source]
    if not specs:
        typer.echo("error: no sources configured (set SYNC_SOURCES) or none matches --source", err=True)
        raise typer.Exit(2)

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        return [await sync_job(runtime, config, spec) for spec in specs]

    results = _run(_with_runtime(settings, work))
    typer.echo(json.dumps(results, indent=2, default=str))
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(1)


@report_app.command("stale")
def report_stale(
    days: Optional[int] = typer.Option(None, min=1, help="Not updated for this many days (default STALE_AFTER_DAYS)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Runbooks not updated for a long time, and runbooks often cited in 👎 answers, with owners."""
    from bot.jobs import staleness_job

    settings = _settings()
    if days is not None:
        settings = settings.model_copy(update={"stale_after_days": days})
    config = jobs_config(settings)
    report = _run(_with_runtime(settings, lambda rt: staleness_job(rt, config)))
    typer.echo(json.dumps(report, indent=2, default=str) if as_json else output.staleness_text(report))


@app.command()
def serve() -> None:
    """Run the server: health checks, POST /api/rag/ask, and Slack (Socket Mode or /slack/events)."""
    _run(serve_app(_settings()))


app.command("bench")(bench_cmd)


def main() -> None:
    """Entry point of the runbook-bot command."""
    app()


if __name__ == "__main__":
    main()
