"""Corrections: an engineer names the runbook that was right; the same alert and questions close to
it get that runbook first, saying so; disagreements go to the runbook more engineers backed, then
the latest; corrections survive re-ingestion and go when their runbook goes. Votes on an alert's
answers: enough engineers' 👎 put that runbook below the others for the alert, saying so."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from bot.answering import alert_words, taken_in_turn
from bot.app import make_answerer
from bot.context import IncidentContext
from bot.records.corrections import list_corrections, withdraw_correction
from bot.records.feedback import Vote, record_vote, undo_vote
from bot.settings import Settings
from retrieval.corrections import Correction, active_corrections, choose
from retrieval.feedback_alerts import AlertVote, demoted, outvoted
from retrieval.ingest import IngestOptions, ingest
from tests.conftest import EXAMPLES

ALERT = {"alertname": "NodeFilesystemAlmostFull", "instance": "web-1:9100", "mountpoint": "/var/lib/docker"}
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _c(cid: int, path: str, user: str, days: int, *, alertname: str | None = "a", vector=(1.0, 0.0)) -> Correction:  # type: ignore[no-untyped-def]
    return Correction(cid, path, alertname, user, user, T0 + timedelta(days=days), np.asarray(vector, dtype=np.float32))


def test_more_engineers_win_then_the_latest_and_one_person_counts_once() -> None:
    team = [_c(1, "right.md", "ann", 0), _c(2, "right.md", "bob", 1), _c(3, "wrong.md", "eve", 5),
            _c(4, "wrong.md", "eve", 6), _c(5, "wrong.md", "eve", 7)]
    chosen = choose(team, "A", None)
    assert chosen is not None and (chosen.path, chosen.backers) == ("right.md", 2), "eve three times is one engineer"
    later = choose([_c(1, "old.md", "ann", 0), _c(2, "new.md", "bob", 3)], "a", None)
    assert later is not None and (later.path, later.by) == ("new.md", "bob"), "a tie goes to the latest"
    assert choose(team, "other", None) is None
    assert choose(team, None, np.asarray((0.0, 1.0), dtype=np.float32)) is None, "a different question"
    close = choose([_c(1, "x.md", "ann", 0, alertname=None)], None, np.asarray((0.99, 0.05), dtype=np.float32))
    assert close is not None and close.path == "x.md", "a question close to a corrected one"


async def test_a_correction_puts_its_runbook_first_for_the_same_alert(examples_pool, embedder) -> None:
    answerer = make_answerer(Settings(_env_file=None), examples_pool, embedder, None)  # type: ignore[call-arg]
    context = IncidentContext(alert=ALERT, entry_point="slack", channel="C1", user="U1")
    before = await answerer.answer("what now?", context)
    assert before.sources[0].path == "disk-full.md"
    path = await answerer.correct("https://git.example.com/sre/runbooks/blob/main/oom-killed.md", "what now?",
                                  context, platform="slack", user_id="U1", user_name="ann")
    assert path == "oom-killed.md"
    again = IncidentContext(alert={**ALERT, "instance": "web-7:9100"}, entry_point="slack", channel="C2", user="U9")
    after = await answerer.answer("what do I do here?", again)
    assert after.sources[0].path == "oom-killed.md"
    assert after.notes[0].startswith("This follows a correction: ann said on "), after.notes
    unrelated = await answerer.answer("kafka consumer lag growing", IncidentContext(entry_point="slack", channel="C2"))
    assert unrelated.sources[0].path == "kafka-consumer-lag.md" and not unrelated.notes[0].startswith("This follows")
    assert await answerer.correct("no-such-runbook.md", "what now?", context, platform="slack", user_id="U1") is None

    [shown] = await list_corrections(examples_pool)
    assert (shown["path"], shown["user_id"], shown["alertname"]) == ("oom-killed.md", "U1", "nodefilesystemalmostfull")
    assert await withdraw_correction(examples_pool, shown["id"]) and not await withdraw_correction(examples_pool, shown["id"])
    answerer.corrections.invalidate()  # type: ignore[union-attr]
    assert (await answerer.answer("what do I do here?", again)).sources[0].path == "disk-full.md"


async def test_corrections_survive_reingestion_and_go_with_their_runbook(pool, embedder, tmp_path: Path) -> None:
    runbooks = tmp_path / "runbooks"
    runbooks.mkdir()
    for name in ("disk-full.md", "oom-killed.md"):
        (runbooks / name).write_text((EXAMPLES / name).read_text())
    await ingest(pool, embedder, [runbooks], IngestOptions(source="team"))
    answerer = make_answerer(Settings(_env_file=None), pool, embedder, None)  # type: ignore[call-arg]
    context = IncidentContext(alert=ALERT, entry_point="slack", channel="C1")
    assert await answerer.correct("oom-killed.md", "what now?", context, platform="slack", user_id="U1") == "oom-killed.md"
    (runbooks / "oom-killed.md").write_text((EXAMPLES / "oom-killed.md").read_text() + "\n\nOne more line.\n")
    await ingest(pool, embedder, [runbooks], IngestOptions(source="team"))
    assert [c.path for c in await active_corrections(pool)] == ["oom-killed.md"], "a changed runbook keeps them"
    (runbooks / "oom-killed.md").unlink()
    await ingest(pool, embedder, [runbooks], IngestOptions(source="team"))
    assert await active_corrections(pool) == [], "a deleted runbook withdraws them"
    [gone] = await list_corrections(pool, withdrawn=True)
    assert gone["withdrawn_why"] == "runbook deleted"


# --- 👎 on an alert: "not this runbook for this alert" ---------------------------------------------------------------


def _v(path: str, user: str, vote: int, days: int, *, alert: str = "a", sure: float = 0.6) -> AlertVote:
    return AlertVote(alert, path, user, vote, T0 + timedelta(days=days), sure)


def test_enough_engineers_thumbs_down_on_an_alert_demote_its_runbook() -> None:
    two = [_v("wrong.md", "ann", -1, 0), _v("wrong.md", "bob", -1, 1)]
    [found] = demoted(two, "A")
    assert (found.path, found.down, found.up, found.at) == ("wrong.md", 2, 0, T0 + timedelta(days=1))
    assert demoted(two, "other") == [] and demoted(two, None) == [], "only for the same alert"
    assert [d.path for d in demoted(two[:1], "a")] == ["wrong.md"], "one is enough when the bot was unsure"
    fair = [_v("fair.md", "ann", -1, 0, sure=0.9), _v("fair.md", "ann", -1, 5, sure=0.9)]
    assert demoted(fair, "a") == [], "one engineer counts once, and is not enough when the bot was fairly sure"
    assert [d.path for d in demoted([*fair, _v("fair.md", "bob", -1, 6)], "a")] == ["fair.md"]
    assert demoted([*two, _v("wrong.md", "eve", 1, 2), _v("wrong.md", "fay", 1, 3)], "a") == [], \
        "a 👍 from another engineer counts against"
    assert demoted([*two, _v("wrong.md", "bob", 1, 2)], "a") == [], "an engineer's latest vote counts"
    assert demoted(two, "a", kept={"wrong.md"}) == [], "a correction names it"
    sure = [_v("right.md", user, -1, 0, sure=0.99) for user in ("ann", "bob")]
    assert demoted(sure, "a") == [] and demoted(sure[:1], "a") == [], "the bot was sure: it takes three"
    assert [d.path for d in demoted([*sure, _v("right.md", "cyd", -1, 1)], "a")] == ["right.md"]


def test_the_choices_take_the_question_and_the_alert_in_turn() -> None:
    asked = [("a.md", "A"), ("a.md", "A"), ("b.md", "B"), ("c.md", "C")]
    named = [("shown.md", "S"), ("d.md", "D"), ("b.md", "B")]
    assert taken_in_turn([asked, named], skip="shown.md") == [("a.md", "A"), ("d.md", "D"), ("b.md", "B"),
                                                               ("c.md", "C")]
    assert alert_words({"alertname": "KubePodCrashLooping", "service": "checkout_api", "instance": "10.0.0.1"}) == \
        "Kube Pod Crash Looping checkout api"
    assert alert_words({}) == ""


async def test_thumbs_down_on_an_alert_shows_the_next_runbook_next_time(examples_pool, embedder) -> None:
    answerer = make_answerer(Settings(_env_file=None), examples_pool, embedder, None)  # type: ignore[call-arg]
    context = IncidentContext(alert=ALERT, entry_point="slack", channel="C1", user="U1")
    first = await answerer.answer("what now?", context)
    assert first.sources[0].path == "disk-full.md" and not outvoted(2, first.confidence), "sure: it takes three"
    for user in ("U1", "U2", "U4"):
        await record_vote(examples_pool, Vote("slack", "C1", "1.1", user, first.answer_id, -1))  # type: ignore[arg-type]
    answerer.feedback_changed()
    again = IncidentContext(alert={**ALERT, "instance": "web-7:9100"}, entry_point="slack", channel="C2")
    after = await answerer.answer("what do I do here?", again)
    assert after.sources[0].path != "disk-full.md" and "disk-full.md" not in after.sources[0].path
    assert after.notes[0].startswith("Engineers marked disk-full.md wrong for this alert on "), after.notes
    assert "(3 engineers)" in after.notes[0]
    other = await answerer.answer("disk full on /var/lib/docker",
                                  IncidentContext(alert={"alertname": "HostDiskFull"}, entry_point="slack"))
    assert other.sources[0].path == "disk-full.md", "another alert keeps it"

    await answerer.correct("disk-full.md", "what now?", context, platform="slack", user_id="U3", user_name="cyd")
    kept = await answerer.answer("what do I do here?", again)
    assert kept.sources[0].path == "disk-full.md" and kept.notes[0].startswith("This follows a correction: cyd")
    [correction] = await list_corrections(examples_pool)
    await withdraw_correction(examples_pool, correction["id"])
    await undo_vote(examples_pool, "slack", "C1", "1.1", "U2", -1)
    answerer.feedback_changed()
    back = await answerer.answer("what do I do here?", again)
    assert back.sources[0].path == "disk-full.md" and not any(n.startswith("Engineers marked") for n in back.notes)
