"""`runbook-bot eval answers`: incident cases through the path a Slack message takes, scored as a
person in an incident reads the answer (the ../shared/eval/incidents contract).

Each case is a `/runbook` text (typed, pasted, offtopic) or an `app_mention` under a thread of
Slack message objects. Both go through the Slack adapter's own reading code
(`slack_blocks.slack_question`), then the answering service (agent or extractive) and its
guardrails, in a throw-away database holding the corpus."""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.agent import model_falls_short
from bot.answer import Answer
from bot.answering import Answerer, EmptyQuestion
from bot.app import make_answerer, make_embedder, make_llm
from bot.context import IncidentContext
from bot.measure.databases import bot_database, ingested_corpus
from bot.measure.evaluate import Outcome, Query, read_jsonl, record_run
from bot.settings import Settings
from bot.slack.blocks import slack_question
from retrieval.embed import CachedEmbedder
from retrieval.search_types import SearchConfig

BOT_USER = "UBOT"  # the bot's user id in the cases' threads
KINDS = ("typed", "pasted", "thread", "offtopic")


@dataclass(frozen=True)
class Case:
    """One incident case: what was sent, and which runbooks answer it ([] = none does)."""

    id: str
    kind: str
    ask: str
    thread: tuple[Mapping[str, Any], ...] = ()
    relevant: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        """True when some runbook answers the case."""
        return bool(self.relevant)


@dataclass
class Scored:
    """How one answer did."""

    case: Case
    abstained: bool
    top: str | None  # the first source's path
    sources: list[str]
    cited: list[str]  # the path each step citation points at
    confidence: float
    latency_ms: float
    tier: str  # confident, closest, abstained, help
    chunk_ids: list[int] = field(default_factory=list)
    tokens: int = 0
    unverified: int = 0  # commands flagged as not found in the cited text
    outcomes: list[str] = field(default_factory=list)  # labelled agent outcomes (trace)

    @property
    def top_right(self) -> bool:
        """Answered, and the first source is a right runbook."""
        return not self.abstained and self.top in self.case.relevant

    @property
    def any_right(self) -> bool:
        """Answered, and some source is a right runbook."""
        return not self.abstained and any(p in self.case.relevant for p in self.sources)

    @property
    def cite_precision(self) -> float | None:
        """Share of step citations that point at a right runbook (answered, answerable cases)."""
        if self.abstained or not self.case.answerable or not self.cited:
            return None
        return sum(1 for p in self.cited if p in self.case.relevant) / len(self.cited)

    def row(self) -> dict[str, Any]:
        """One JSON-able line per case (--verbose)."""
        return {"id": self.case.id, "kind": self.case.kind, "answerable": self.case.answerable,
                "abstained": self.abstained, "tier": self.tier, "top_right": self.top_right,
                "top": self.top, "confidence": round(self.confidence, 3),
                "cite_precision": self.cite_precision, "ms": round(self.latency_ms, 1),
                **({"outcomes": self.outcomes} if self.outcomes else {})}


def load_cases(path: Path) -> list[Case]:
    """Read a cases file (one JSON object a line); a malformed line is an error naming it."""
    def case(raw: dict[str, Any]) -> Case:
        kind = str(raw.get("kind") or ("thread" if raw.get("thread") else "typed"))
        return Case(str(raw["id"]), kind, str(raw.get("ask") or ""), tuple(raw.get("thread") or ()),
                    tuple(raw.get("relevant") or ()))

    return read_jsonl(path, "case", case)


def case_question(case: Case, channel: str) -> tuple[str, IncidentContext] | None:
    """What the Slack adapter would ask the answerer for this case (None: it would show help)."""
    if not case.thread:  # a `/runbook` command's text goes to the answerer as typed
        return case.ask, IncidentContext(entry_point="slack", channel=channel, user="U2")
    last, first = case.thread[-1], case.thread[0]
    event = {"type": "app_mention", "text": case.ask or last.get("text", ""), "user": last.get("user", "U2"),
             "ts": last.get("ts"), "thread_ts": first.get("ts"), "channel": channel}
    replies = [m for m in case.thread if _ts(m) < _ts(event)]
    asked = slack_question(event, replies, BOT_USER, None)
    if asked is None:
        return None
    return asked.question, IncidentContext(thread=asked.thread, alert=asked.alert, entry_point="slack",
                                           channel=channel, user=event["user"])


def _ts(message: Mapping[str, Any]) -> float:
    try:
        return float(message.get("ts") or 0)
    except (TypeError, ValueError):
        return 0.0


async def answer_case(answerer: Answerer, case: Case, channel: str) -> Scored:
    """Answer one case as the bot would, and score it."""
    answer, elapsed = await answer_of(answerer, case, channel)
    if answer is None:  # help instead of an answer: counts as not answering
        return Scored(case, True, None, [], [], 0.0, elapsed, "help")
    return score_answer(case, answer, elapsed)


async def answer_of(answerer: Answerer, case: Case, channel: str) -> tuple[Answer | None, float]:
    """The answer the bot would post for a case (None: it would show help), and how long it took (ms)."""
    t0 = time.perf_counter()
    asked = case_question(case, channel)
    answer: Answer | None = None
    if asked is not None:
        try:
            answer = await answerer.answer(*asked)
        except EmptyQuestion:
            answer = None
    return answer, (time.perf_counter() - t0) * 1000


def score_answer(case: Case, answer: Answer, latency_ms: float) -> Scored:
    """Score an answer against a case's labels."""
    by_id = {s.id: s.path for s in answer.sources}
    cited = [by_id[c] for step in answer.steps for c in step.citations if c in by_id]
    abstained = answer.abstained or not answer.sources
    tier = "abstained" if abstained else ("closest" if answer.tentative else "confident")
    unverified = sum(1 for step in answer.steps for f in step.findings if f.rule == "unverified-command")
    return Scored(case, abstained, answer.sources[0].path if answer.sources else None,
                  [s.path for s in answer.sources], cited, answer.confidence, latency_ms, tier,
                  answer.cited_chunk_ids, answer.trace.prompt_tokens + answer.trace.completion_tokens,
                  unverified, list(answer.trace.outcomes))


def _frac(rows: Sequence[Scored], test: Callable[[Scored], bool]) -> float | None:
    return round(sum(1 for r in rows if test(r)) / len(rows), 3) if rows else None


def _percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))]


def summarise(rows: Sequence[Scored]) -> dict[str, Any]:
    """The incidents README's scores, overall and by kind, plus latency, tiers and tokens."""
    answerable = [r for r in rows if r.case.answerable]
    offtopic = [r for r in rows if not r.case.answerable]
    abstained = [r for r in rows if r.abstained]
    precisions = [p for r in answerable if (p := r.cite_precision) is not None]
    out: dict[str, Any] = {
        "cases": len(rows), "answerable": len(answerable),
        "top_right": _frac(answerable, lambda r: r.top_right),
        "any_right": _frac(answerable, lambda r: r.any_right),
        "false_abstain": _frac(answerable, lambda r: r.abstained),
        "cite_precision": round(statistics.fmean(precisions), 3) if precisions else None,
        "offtopic": len(offtopic), "abstain_recall": _frac(offtopic, lambda r: r.abstained),
        "abstain_precision": _frac(abstained, lambda r: not r.case.answerable),
        "closest_tier": _frac(rows, lambda r: r.tier == "closest"),
        "unverified_commands": sum(r.unverified for r in rows),
        "tokens": sum(r.tokens for r in rows),
        "p50_ms": round(_percentile([r.latency_ms for r in rows], 50), 1),
        "p95_ms": round(_percentile([r.latency_ms for r in rows], 95), 1),
    }
    out["by_kind"] = {}
    for kind in sorted({r.case.kind for r in answerable}, key=lambda k: (k not in KINDS, KINDS.index(k) if k in KINDS else 0, k)):
        xs = [r for r in answerable if r.case.kind == kind]
        kp = [p for r in xs if (p := r.cite_precision) is not None]
        out["by_kind"][kind] = {"n": len(xs), "top_right": _frac(xs, lambda r: r.top_right),
                                "false_abstain": _frac(xs, lambda r: r.abstained),
                                "cite_precision": round(statistics.fmean(kp), 3) if kp else None}
    outcomes: dict[str, int] = {}
    for r in rows:
        for o in r.outcomes:
            outcomes[o] = outcomes.get(o, 0) + 1
    if outcomes:
        out["agent_outcomes"] = dict(sorted(outcomes.items()))
    return out


async def run_answer_eval(
    settings: Settings, corpus: Path, cases_file: Path, *, use_llm: bool = False, record: bool = True,
    every: int = 1, on_case: Callable[[Scored], None] | None = None,
) -> dict[str, Any]:
    """Ingest the corpus into a throw-away database, answer every case (every `every`-th), return the
    scores. With `use_llm`, each case is answered by the model (gate off) and extractively, and the
    scores are those of the gated answer, with the model's and the extractive ones beside them."""
    cases = load_cases(cases_file)[:: max(every, 1)]
    llm = make_llm(settings) if use_llm else None
    if use_llm and llm is None:
        raise ValueError("--llm needs a model: set LLM_MODEL (and LLM_API_BASE for a local server)")
    embedder = CachedEmbedder(make_embedder(settings), size=8192)
    quiet = settings.model_copy(update={"feedback_enabled": False})
    rows: dict[str, list[Scored]] = {"gated": [], "model": [], "extractive": []}
    async with ingested_corpus(settings, embedder, corpus, "eval") as pool:
        extractive = make_answerer(quiet, pool, embedder, None)
        model = make_answerer(quiet.model_copy(update={"llm_gate": False}), pool, embedder, llm) if llm else None
        for n, case in enumerate(cases):
            scored = await _case_rows(case, f"C{n:05d}", extractive, model, rows)
            if on_case is not None:
                on_case(scored)
    main = rows["gated"] if use_llm else rows["extractive"]
    result = summarise(main)
    result["mode"] = "llm" if use_llm else "extractive"
    if use_llm and llm is not None:
        result["model"] = getattr(llm, "model", None)
        result["compare"] = {name: summarise(r) for name, r in rows.items()}
    if record:
        await _record(settings, corpus, cases_file, result, main, extractive.search_config)
    return result


async def _case_rows(case: Case, channel: str, extractive: Answerer, model: Answerer | None,
                     rows: dict[str, list[Scored]]) -> Scored:
    """Score a case extractively and, with a model, as the model answered and as the gate chose."""
    x_answer, x_ms = await answer_of(extractive, case, channel)
    x = score_answer(case, x_answer, x_ms) if x_answer else Scored(case, True, None, [], [], 0.0, x_ms, "help")
    rows["extractive"].append(x)
    if model is None:
        return x
    m_answer, m_ms = await answer_of(model, case, channel)
    m = score_answer(case, m_answer, m_ms) if m_answer else Scored(case, True, None, [], [], 0.0, m_ms, "help")
    rows["model"].append(m)
    keep = m_answer is not None and (x_answer is None or model_falls_short(m_answer, x_answer) is None)
    gated = m if keep else replace(x, latency_ms=m_ms + x_ms, tokens=m.tokens,
                                   outcomes=[*m.outcomes, "extractive_preferred"])
    rows["gated"].append(gated)
    return gated


async def _record(settings: Settings, corpus: Path, cases_file: Path, result: dict[str, Any],
                  rows: Sequence[Scored], config: SearchConfig) -> None:
    """Store the run in eval_runs / eval_results of the bot's database (kind as the variant)."""
    outcomes = [Outcome(Query(r.case.id, r.case.ask, r.case.relevant, r.case.kind), r.sources, r.chunk_ids,
                        r.confidence, r.abstained, r.latency_ms) for r in rows]
    async with bot_database(settings, "eval run") as pool:
        if pool is None:
            return
        run_id = await record_run(pool, corpus.resolve(), cases_file.resolve(),
                                  f"answers-{result['mode']}", config, result, outcomes)
        print(f"recorded eval run {run_id} (answers, {result['mode']})", file=sys.stderr)
