"""`runbook-bot eval answers`: incident cases through the Slack reading path, scored as answers."""

from __future__ import annotations

import json
from pathlib import Path

from bot.answer import Answer, Source, Step
from bot.measure.answer_eval import Case, answer_case, case_question, load_cases, score_answer, summarise
from bot.app import make_answerer
from bot.settings import Settings
from tests.bot.cli.test_main import env, run  # noqa: F401  (fixture)
from tests.conftest import EXAMPLES

ALERT_THREAD = [
    {"type": "message", "subtype": "bot_message", "bot_id": "B0ALERTS", "username": "Opsgenie", "ts": "100.1",
     "text": "", "attachments": [{"pretext": "New alert created",
                                   "title": "#77: KubePodCrashLooping: checkout/checkout-api-5d9",
                                   "text": "checkout-api restarted 9 times in 10 minutes."}]},
    {"type": "message", "user": "U0ALICE", "ts": "100.2", "text": "started after the 14:00 deploy"},
    {"type": "message", "user": "U0BOB", "ts": "100.3", "text": "<@UBOT> what do I do?"},
]
CASES = [
    {"id": "typed-1", "kind": "typed", "ask": "disk full on /var/lib/docker, no space left on device",
     "thread": [], "relevant": ["disk-full.md"]},
    {"id": "thread-1", "kind": "thread", "ask": "<@UBOT> what do I do?", "thread": ALERT_THREAD,
     "relevant": ["k8s-pod-crashloop.md"]},
    {"id": "off-1", "kind": "offtopic", "ask": "how do I bake sourdough bread", "thread": [], "relevant": []},
]


def _cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return path


def test_a_thread_case_is_read_as_the_slack_adapter_reads_it(tmp_path: Path) -> None:
    thread = load_cases(_cases(tmp_path))[1]
    question, ctx = case_question(thread, "C1")  # type: ignore[misc]
    assert question == "what do I do?" and ctx.alert["alertname"] == "KubePodCrashLooping"
    assert ctx.search_query(question).startswith("KubePodCrashLooping. checkout-api restarted 9 times")
    assert ctx.thread == [m for m in ctx.thread if "what do I do" not in m], "the asking message is not context"


def test_scores_follow_the_incidents_readme() -> None:
    case = Case("c", "typed", "q", relevant=("a.md",))
    src = [Source(id=1, chunk_id=1, document="A", path="a.md", heading_path=[], relevance=1.0),
           Source(id=2, chunk_id=2, document="B", path="b.md", heading_path=[], relevance=0.5)]
    right = score_answer(case, Answer(question="q", answer="x", sources=src,
                                      steps=[Step(instruction="s", citations=[1]), Step(instruction="t", citations=[2])]), 5)
    assert right.top_right and right.any_right and right.cite_precision == 0.5 and right.tier == "confident"
    wrong = score_answer(case, Answer(question="q", answer="x", sources=src[::-1], tentative=True), 7)
    assert not wrong.top_right and wrong.any_right and wrong.tier == "closest"
    abstained = score_answer(Case("o", "offtopic", "q"), Answer(question="q", answer="no", abstained=True), 9)
    summary = summarise([right, wrong, abstained])
    assert summary["top_right"] == 0.5 and summary["false_abstain"] == 0.0
    assert summary["abstain_recall"] == 1.0 and summary["abstain_precision"] == 1.0
    assert summary["by_kind"]["typed"]["n"] == 2 and summary["p95_ms"] == 9


async def test_cases_answered_by_the_real_answerer(examples_pool, embedder, tmp_path: Path) -> None:
    answerer = make_answerer(Settings(_env_file=None, record_answers=False), examples_pool, embedder, None)
    rows = [await answer_case(answerer, c, f"C{n}") for n, c in enumerate(load_cases(_cases(tmp_path)))]
    typed, thread, off = rows
    assert typed.top_right and typed.cite_precision == 1.0
    assert thread.top_right, "the alert above a bare 'what do I do?' finds the runbook"
    assert off.abstained and off.tier == "abstained"


def test_eval_answers_command_prints_the_scores_as_json_last(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    result = run(["eval", "answers", "--corpus", str(EXAMPLES), "--cases", str(_cases(tmp_path)), "--json",
                  "--no-record"], env)
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout.strip().splitlines()[-1])
    assert scores["cases"] == 3 and scores["mode"] == "extractive" and scores["abstain_recall"] == 1.0
    assert set(scores["by_kind"]) == {"typed", "thread"} and scores["top_right"] == 1.0
    assert "top_right" in result.stdout and "p95" in result.stdout, "the table comes first"
    missing = run(["eval"], env)
    assert missing.returncode == 2 and "--corpus" in missing.stderr
