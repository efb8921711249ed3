"""The corrections replay: engineers who name the right runbook on a 👎 fix the alert's recurrence."""

from __future__ import annotations

from bot.app import make_answerer
from bot.measure.corrections_replay import CorrectionOptions, alert_name, replay_corrections
from bot.measure.evaluate import Query
from bot.settings import Settings

# Ground truth that disagrees with the search on purpose: the team decided memory pressure on a
# node is handled by the OOM runbook; the disk alerts stay with the disk runbook (held out).
QUERIES = [
    Query("NodeFilesystemAlmostFull-0-alert", "[FIRING] NodeFilesystemAlmostFull: disk almost full on web-1",
          ("oom-killed.md",), "alert"),
    Query("NodeFilesystemAlmostFull-0-desc", "NodeFilesystemAlmostFull: disk almost full on web-3",
          ("oom-killed.md",), "desc"),
    Query("KafkaLag-1-alert", "[FIRING] KafkaLag: kafka consumer lag growing", ("kafka-consumer-lag.md",), "alert"),
    Query("KafkaLag-1-desc", "consumer group lag keeps growing on the orders topic", ("kafka-consumer-lag.md",), "desc"),
]


def test_alert_name_drops_the_number_and_variant() -> None:
    assert alert_name("Elasticsearch ILM stopped-52-alert") == "Elasticsearch ILM stopped"


async def test_a_correction_fixes_the_recurrence_and_leaves_the_rest(examples_pool, embedder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import bot.measure.corrections_replay as replay

    # Both alerts in the voted half, so the recurrence of the corrected one is measured.
    monkeypatch.setattr(replay, "split", lambda queries: (list(queries), []))
    answerer = make_answerer(Settings(_env_file=None), examples_pool, embedder, None)  # type: ignore[call-arg]
    options = CorrectionOptions(vote_probability=1.0, wrong_vote_rate=0.0, pick_rate=1.0, choices=9)
    found = await replay_corrections(answerer, QUERIES, options)
    assert found["alerts"] == 2 and found["round1"]["corrections"] == 3, found
    assert (found["before"]["recurrences"], found["after"]["recurrences"]) == (0.5, 1.0)
    assert found["after"]["reworded"] == 1.0, "the same question in other words, without the alert's name"
