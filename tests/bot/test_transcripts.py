"""Real model behaviour without a model: conversations recorded from a local Qwen2.5 server
(bench/local_llm/record.py) replayed through the agent loop on the example runbooks. The recorded
replies (tool calls written in fenced JSON, server errors on malformed output, answers in other
field names, calls repeated instead of answering) must end as they ended with the real model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.app import make_answerer
from bot.context import IncidentContext
from bot.settings import Settings
from tests.fakes import ReplayLLM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
RECORDED = sorted(FIXTURES.glob("*.json"))
TIMING = {"timeout"}  # depends on how fast the model was, not on what it said


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_there_are_recordings_of_real_models() -> None:
    assert len(RECORDED) >= 3, f"record some with bench/local_llm/record.py into {FIXTURES}"
    rounds = [r for path in RECORDED for r in _load(path)["rounds"]]
    assert any("error" in r for r in rounds) or any(r["reply"]["content"] for r in rounds), "real quirks are kept"


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
async def test_a_recorded_conversation_ends_as_it_did(path: Path, examples_pool: Any, embedder: Any) -> None:
    recorded = _load(path)
    expected = recorded["answer"]
    if TIMING & set(expected["outcomes"]):
        pytest.skip("the recording ended on the clock, which a replay does not reproduce")
    llm = ReplayLLM(recorded["rounds"], name=recorded["model"])
    settings = Settings(_env_file=None, record_answers=False, **recorded.get("settings", {}))
    answerer = make_answerer(settings, examples_pool, embedder, llm)
    answer = await answerer.answer(recorded["question"], IncidentContext(alert=recorded["alert"]))
    assert len(llm.seen) == len(recorded["rounds"]), "the loop asked the model as often as it did live"
    assert answer.trace.outcomes == expected["outcomes"]
    assert (answer.mode, answer.abstained, answer.tentative) == (expected["mode"], expected["abstained"],
                                                                 expected["tentative"])
    assert [s.path for s in answer.sources] == expected["sources"]
    assert all(step.citations for step in answer.steps), "whatever the model wrote, every step shown is grounded"
    sent = [r["tools"] for r in recorded["rounds"]]
    assert llm.tools_offered == sent, "the same tools were offered round by round"
