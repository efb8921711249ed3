"""`runbook-bot feedback ...`: recompute the weights, explain them, and prove they help offline."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from bot.app import make_embedder, open_runtime, search_config
from bot.chat.corrections import CHOICES
from bot.records.corrections import list_corrections, withdraw_correction
from bot.settings import Settings
from retrieval import db
from retrieval.embed import CachedEmbedder
from retrieval.weights import explain, load_active, recompute

if TYPE_CHECKING:
    from bot.measure.corrections_replay import CorrectionOptions
    from bot.measure.replay import ReplayOptions

feedback_app = typer.Typer(no_args_is_help=True, help="Feedback weights and corrections: recompute, show, undo, replay.")


def _settings() -> Settings:
    return Settings()


def _run(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except (db.DatabaseUnavailable, FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


async def _recompute(settings: Settings) -> dict[str, Any]:
    runtime = await open_runtime(settings)
    try:
        return await recompute(runtime.pool, runtime.embedder, config=search_config(settings))
    finally:
        await runtime.close()


@feedback_app.command("recompute")
def recompute_cmd() -> None:
    """Turn all votes into a new, active version of the reranking weights."""
    typer.echo(json.dumps(_run(_recompute(_settings())), indent=2, default=str))


async def _show(settings: Settings, top: int, withdrawn: bool) -> dict[str, Any]:
    runtime = await open_runtime(settings)
    try:
        model = await load_active(runtime.pool)
        corrections = await list_corrections(runtime.pool, withdrawn=withdrawn, limit=top)
        return {"version": model.version, "lexical_weight": model.lexical_weight, **explain(model, top),
                "corrections": corrections}
    finally:
        await runtime.close()


@feedback_app.command("show")
def show_cmd(top: int = typer.Option(10, min=1, help="How many boosts, penalties and corrections"),
             withdrawn: bool = typer.Option(False, "--withdrawn", help="List withdrawn corrections too"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """Explain the active weights (the strongest boosts and penalties) and list the corrections."""
    shown = _run(_show(_settings(), top, withdrawn))
    if as_json:
        typer.echo(json.dumps(shown, indent=2, default=str))
        return
    typer.echo(_corrections_text(shown["corrections"]))
    if shown["version"] is None:
        typer.echo("no feedback weights yet: run `runbook-bot feedback recompute` after votes arrive")
        return
    typer.echo(f"weights version {shown['version']}; fusion lexical weight: {shown['lexical_weight'] or 'configured'}")
    for title, rows in (("boosts", shown["boosts"]), ("penalties", shown["penalties"])):
        typer.echo(f"\n{title}:")
        for r in rows:
            typer.echo(f"  {r['boost']:+.4f}  {r['path']} [{r['text_hash']}]  up {r['up']} down {r['down']}"
                       f" (helpful {r['helpful']})")


def _corrections_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no corrections"
    lines = ["corrections (newest first; `runbook-bot feedback undo ID` withdraws one):"]
    for r in rows:
        state = f"  [withdrawn: {r['withdrawn_why']}]" if r["withdrawn_at"] else ""
        alert = f" alert {r['alertname']}" if r["alertname"] else ""
        lines.append(f"  #{r['id']} {r['created_at']:%Y-%m-%d %H:%M} {r['user_name'] or r['user_id']}{alert}: "
                     f"{r['question'][:80]!r} -> {r['path']}{state}")
    return "\n".join(lines) + "\n"


async def _undo(settings: Settings, correction_id: int) -> bool:
    runtime = await open_runtime(settings)
    try:
        return await withdraw_correction(runtime.pool, correction_id, "withdrawn from the command line")
    finally:
        await runtime.close()


@feedback_app.command("undo")
def undo_cmd(correction_id: int = typer.Argument(..., help="A correction's id, from `feedback show`")) -> None:
    """Withdraw a correction: its runbook is no longer put first for its question and alert."""
    if not _run(_undo(_settings(), correction_id)):
        typer.echo(f"error: no correction #{correction_id} in force", err=True)
        raise typer.Exit(2)
    typer.echo(f"correction #{correction_id} withdrawn")


async def _replay_corrections(settings: Settings, corpus: Path, queries_file: Path, options: CorrectionOptions,
                              seeds: int) -> dict[str, Any]:
    """One replay per seed (seed, seed + 1, ...), each on a fresh copy of the corpus; their mean."""
    from bot.app import make_answerer
    from bot.measure.corrections_replay import averaged, replay_corrections
    from bot.measure.databases import ingested_corpus
    from bot.measure.evaluate import load_queries

    queries = load_queries(queries_file)
    embedder = CachedEmbedder(make_embedder(settings), size=8192)
    quiet = settings.model_copy(update={"llm_model": None})  # the extractive answers: what recurs is the ranking
    runs = []
    for seed in range(options.seed, options.seed + seeds):
        async with ingested_corpus(settings, embedder, corpus, "corrections") as pool:
            answerer = make_answerer(quiet, pool, embedder, None)
            runs.append(await replay_corrections(answerer, queries, replace(options, seed=seed)))
    return averaged(runs)


async def _replay(settings: Settings, corpus: Path, queries_file: Path, options: ReplayOptions) -> dict[str, Any]:
    from bot.measure.databases import ingested_corpus
    from bot.measure.evaluate import load_queries
    from bot.measure.replay import replay

    queries = load_queries(queries_file)
    embedder = CachedEmbedder(make_embedder(settings), size=8192)
    async with ingested_corpus(settings, embedder, corpus, "replay") as pool:
        return await replay(pool, embedder, queries, options=options)


def _replayed_text(found: dict[str, Any]) -> str:
    """The corrections replay's figures: per seed when there were several, then the (mean) before -> after."""
    names = ("recurrences", "reworded", "unrelated")
    lines = [f"seed {run['options']['seed']}: " + ", ".join(
        f"{n} {run['before'][n]:.3f} -> {run['after'][n]:.3f}" for n in names) for run in found.get("runs", [])]
    mean = f" (mean of {len(found['runs'])} seeds)" if found.get("runs") else ""
    lines.append(f"{found['alerts']} alerts fire twice, {found['unrelated_queries']} unrelated queries; round 1"
                 f"{mean}: " + ", ".join(f"{v} {k}" for k, v in found["round1"].items()))
    lines += [f"recall@1 {n}: {found['before'][n]:.3f} -> {found['after'][n]:.3f}" for n in names]
    return "\n".join(lines)


@feedback_app.command("replay")
def replay_cmd(
    corpus: Path = typer.Option(..., exists=True, file_okay=False, help="The corpus/ folder of an eval set"),
    queries: Path = typer.Option(..., exists=True, dir_okay=False, help="queries.jsonl"),
    wrong_votes: float = typer.Option(0.15, min=0.0, max=0.5, help="Share of votes that contradict ground truth"),
    seed: int = typer.Option(7),
    corrections: bool = typer.Option(False, "--corrections", help="Replay 👎 with corrections on recurring alerts"),
    choices: int = typer.Option(CHOICES, min=1, max=50, help="With --corrections: runbooks a 👎 offers"),
    seeds: int = typer.Option(1, min=1, max=20, help="With --corrections: replay with this many seeds from --seed "
                              "and report the mean (one alert is 0.023 of recall@1 on gitlab)"),
    as_json: bool = typer.Option(False, "--json", help="Last stdout line: the figures as JSON"),
) -> None:
    """Simulate votes on half the queries, recompute weights, measure the held-out half before/after;
    with --corrections, engineers also name the right runbook and the alerts recur."""
    from bot.measure.replay import ReplayOptions

    if corrections:
        from bot.measure.corrections_replay import CorrectionOptions

        found = _run(_replay_corrections(_settings(), corpus, queries, CorrectionOptions(
            seed=seed, wrong_vote_rate=wrong_votes, choices=choices), seeds))
        typer.echo(_replayed_text(found))
        if as_json:
            typer.echo(json.dumps(found, separators=(",", ":"), default=str))
        return

    result = _run(_replay(_settings(), corpus, queries, ReplayOptions(seed=seed, wrong_vote_rate=wrong_votes)))
    b, a = result["before"], result["after"]
    typer.echo(f"held-out queries {result['held_out_queries']} (voted on {result['train_queries']}, "
               f"{result['votes']} votes, {result['wrong_vote_rate']:.0%} wrong)")
    typer.echo(f"recall@1 {b['recall@1']:.3f} -> {a['recall@1']:.3f}; mrr@10 {b['mrr@10']:.3f} -> {a['mrr@10']:.3f}")
    if as_json:
        typer.echo(json.dumps(result, separators=(",", ":")))
