#!/usr/bin/env python3
"""Record what a real model sent and received while answering, as test fixtures.

    python bench/local_llm/record.py --out tests/fixtures/transcripts [--name qwen1.5b]

Needs a model endpoint (LLM_MODEL, LLM_API_BASE: see `local_llm.py env`). Each question in
QUESTIONS is answered by the real agent loop on the example runbooks, ingested into a throw-away
database exactly as the tests ingest them (so chunk ids, and the model's citations of them, match
in the tests); every model round (the messages and tools sent, the tool choice, the reply or the
error) is written to `<out>/<name>-<slug>.json` with what the answer became. The tests replay
them through `tests.fakes.ReplayLLM` (tests/bot/test_transcripts.py), so the suite covers what
real models do without running one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bot.app import make_answerer, make_llm  # noqa: E402
from bot import EXAMPLE_RUNBOOKS  # noqa: E402
from bot.context import IncidentContext  # noqa: E402
from bot.llm import LLM, ChatMessage, Completion, ToolSpec  # noqa: E402
from bot.settings import Settings  # noqa: E402
from retrieval import db  # noqa: E402
from retrieval.embed import WordLlamaEmbedder  # noqa: E402
from retrieval.ingest import IngestOptions, ingest  # noqa: E402

QUESTIONS: list[dict[str, Any]] = [
    {"question": "Disk full on /var/lib/docker: No space left on device. What do I do?"},
    {"question": "what do I do?", "alert": {"alertname": "KubePodCrashLooping",
                                            "summary": "checkout-api keeps restarting in checkout",
                                            "namespace": "checkout"}},
    {"question": "kafka consumer lag keeps growing on the orders topic, how do I find the slow consumer?"},
    {"question": "how do I renew the office printer toner?"},
    {"question": "postgres replica is 20 minutes behind the primary"},
]


# What shapes the conversation besides the model: a replay uses the same values.
REPLAYED_SETTINGS = ("tool_budget_tokens", "tool_call_tokens", "agent_max_steps", "min_confidence", "min_plausible",
                     "llm_gate")


class RecordingLLM:
    """Wraps a model and keeps every round: what was sent, and what came back (or the error)."""

    def __init__(self, inner: LLM) -> None:
        self.inner, self.name = inner, inner.name
        self.rounds: list[dict[str, Any]] = []

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """The inner model's reply, recorded."""
        sent = {"messages": [m.wire() for m in messages], "tools": [t.name for t in tools], "tool_choice": tool_choice}
        try:
            reply = await self.inner.complete(messages, tools, tool_choice=tool_choice)
        except Exception as exc:
            self.rounds.append({**sent, "error": f"{type(exc).__name__}: {exc}"[:500]})
            raise
        self.rounds.append({**sent, "reply": reply.model_dump(mode="json")})
        return reply


async def record(out: Path, name: str) -> None:
    settings = Settings()
    inner = make_llm(settings)
    if inner is None:
        raise SystemExit("record: set LLM_MODEL (and LLM_API_BASE) first; see local_llm.py env")
    out.mkdir(parents=True, exist_ok=True)
    embedder = WordLlamaEmbedder()
    with db.throwaway_server() as url:
        pool = await db.open_pool(url, min_size=1, max_size=4)
        try:
            await ingest(pool, embedder, [EXAMPLE_RUNBOOKS], IngestOptions(source="examples"))
            for item in QUESTIONS:
                llm = RecordingLLM(inner)
                answerer = make_answerer(settings.model_copy(update={"record_answers": False}), pool, embedder, llm)
                context = IncidentContext(alert=item.get("alert", {}), entry_point="cli")
                answer = await answerer.answer(item["question"], context)
                slug = re.sub(r"[^a-z0-9]+", "-", item["question"].lower()).strip("-")[:40]
                path = out / f"{name}-{slug}.json"
                path.write_text(json.dumps({
                    "model": inner.name, "recorded": date.today().isoformat(), "question": item["question"],
                    "settings": {k: getattr(settings, k) for k in REPLAYED_SETTINGS},
                    "alert": item.get("alert", {}), "rounds": llm.rounds,
                    "answer": {"mode": answer.mode, "abstained": answer.abstained, "tentative": answer.tentative,
                               "outcomes": answer.trace.outcomes, "summary": answer.answer,
                               "sources": [s.path for s in answer.sources], "steps": len(answer.steps),
                               "notes": answer.notes},
                }, indent=1) + "\n")
                print(f"{path.name}: {answer.mode}, outcomes {answer.trace.outcomes}, "
                      f"{len(llm.rounds)} rounds", flush=True)
        finally:
            await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "transcripts")
    parser.add_argument("--name", default="local")
    args = parser.parse_args()
    asyncio.run(record(args.out, args.name))


if __name__ == "__main__":
    main()
