"""The corrections replay: engineers who name the right runbook on a 👎 fix the alert's recurrence."""

from __future__ import annotations

from bot.app import make_answerer
from bot.chat.corrections import CHOICES
from bot.measure.corrections_replay import CorrectionOptions, alert_name, averaged, replay_corrections
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


# The example runbooks lead this alert with the replication-lag runbook; the consumer-lag one is next.
QUEUE = [
    Query("QueueBacklog-2-alert", "[FIRING] QueueBacklog: messages piling up in the orders queue",
          ("kafka-consumer-lag.md",), "alert"),
    Query("QueueBacklog-2-desc", "orders queue backlog growing", ("kafka-consumer-lag.md",), "desc"),
]


async def test_thumbs_down_alone_move_the_recurrence_to_the_next_runbook(examples_pool, embedder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import bot.measure.corrections_replay as replay

    monkeypatch.setattr(replay, "split", lambda queries: (list(queries), []))
    answerer = make_answerer(Settings(_env_file=None), examples_pool, embedder, None)  # type: ignore[call-arg]
    options = CorrectionOptions(vote_probability=1.0, wrong_vote_rate=0.0, pick_rate=0.0)
    found = await replay_corrections(answerer, QUEUE + QUERIES[2:], options)
    assert found["round1"]["corrections"] == 0 and found["round1"]["downvotes"] == 3, found
    assert found["round1"]["upvotes"] == 3, "the right answer's 👍 are stored too"
    assert (found["before"]["recurrences"], found["after"]["recurrences"]) == (0.5, 1.0), found
    assert found["options"]["choices"] == CHOICES, "as many choices as the chat UIs offer"


def test_several_seeds_report_their_mean() -> None:
    run = {"before": {"recurrences": 0.5}, "after": {"recurrences": 1.0}, "round1": {"corrections": 2}, "alerts": 2}
    other = {**run, "after": {"recurrences": 0.5}, "round1": {"corrections": 1}}
    assert averaged([run]) is run
    mean = averaged([run, other])
    assert mean["after"] == {"recurrences": 0.75} and mean["round1"] == {"corrections": 1.5}
    assert mean["runs"] == [run, other] and mean["alerts"] == 2
