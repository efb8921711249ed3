"""Corrections: an engineer names the runbook that was right; the same alert and questions close to
it get that runbook first, saying so; disagreements go to the runbook more engineers backed, then
the latest; corrections survive re-ingestion and go when their runbook goes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from bot.app import make_answerer
from bot.context import IncidentContext
from bot.records.corrections import list_corrections, withdraw_correction
from bot.settings import Settings
from retrieval.corrections import Correction, active_corrections, choose
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
