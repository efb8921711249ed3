"""Feedback from Teams through the real SDK routes: 👍 / 👎 Action.Execute invokes (with the comment typed
into the card), Action.Submit from older clients and reactions, all in Slack's feedback table."""

from __future__ import annotations

from typing import Any

import pytest

from bot import messages
from bot.records.feedback import feedback_rows
from bot.teams.cards import MORE_INPUT
from tests.bot.teams.test_adapter import DISK, QUOTED_ALERT, votes
from tests.teamsfake import (
    ALICE, BOB, CHANNEL, FakeConnector, TeamsHarness, card_action, card_fix, card_submit, message, reaction,
)

pytestmark = pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")


@pytest.fixture
def fake(connector: FakeConnector) -> FakeConnector:
    return connector


async def _answer(teams: TeamsHarness, fake: FakeConnector) -> tuple[int, str]:
    """Ask once; the answer's id and the id of the card message showing it."""
    await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url))
    await teams.done()
    [update] = fake.calls_to("update")
    [vote, _] = votes(update.cards()[0])
    return int(vote["data"]["answer_id"]), str(update.activity_id)


def _summary(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["platform"], r["channel"], r["message_ts"], r["user_id"], r["vote"], r["via"], r["comment"])
            for r in rows]


async def test_buttons_vote_once_per_user_with_the_comment_typed_into_the_card(
        teams: TeamsHarness, fake: FakeConnector) -> None:
    answer_id, card_id = await _answer(teams, fake)
    sent_before = len(fake.connector_calls())
    down = await teams.post(card_action(answer_id, -1, reply_to_id=card_id, comment="  missing the prune step ",
                                        service_url=fake.service_url))
    assert down.status == 200
    assert down.json() == {"statusCode": 200, "type": "application/vnd.microsoft.activity.message",
                           "value": messages.TEAMS_FEEDBACK_COMMENT_THANKS}, "the invoke is answered in place"
    rows = await feedback_rows(teams.pool, answer_id)
    assert _summary(rows) == [("teams", CHANNEL, card_id, BOB["aadObjectId"], -1, "button", "missing the prune step")]
    assert rows[0]["question"] == DISK and rows[0]["cited_chunk_ids"], "the vote carries the answer's citations"
    asked = fake.connector_calls()[sent_before:]
    assert len(asked) == 1 and asked[0].cards()[0]["actions"][0]["verb"] == "runbook.fix", "a 👎 asks what was right"
    up = await teams.post(card_action(answer_id, 1, reply_to_id=card_id, comment="", service_url=fake.service_url))
    assert up.json()["value"] == messages.TEAMS_FEEDBACK_THANKS
    assert _summary(await feedback_rows(teams.pool, answer_id)) == [
        ("teams", CHANNEL, card_id, BOB["aadObjectId"], 1, "button", None)], "changed, not added; old comment dropped"
    assert len(fake.connector_calls()) == sent_before + 1, "nothing more posted for a 👍"


async def test_a_vote_on_an_unknown_answer_or_a_broken_database_is_not_silent(
        teams: TeamsHarness, fake: FakeConnector) -> None:
    gone = await teams.post(card_action(999_999, 1, reply_to_id="1760000000042", service_url=fake.service_url))
    assert gone.json()["value"] == messages.TEAMS_FEEDBACK_GONE
    answer_id, card_id = await _answer(teams, fake)
    real = teams.bot.deps.answerer

    class NoDatabase:
        @property
        def pool(self) -> Any:
            from retrieval.db import DatabaseUnavailable

            raise DatabaseUnavailable("down")

    teams.bot.deps.answerer = NoDatabase()  # type: ignore[assignment]
    try:
        broken = await teams.post(card_action(answer_id, -1, reply_to_id=card_id, service_url=fake.service_url))
    finally:
        teams.bot.deps.answerer = real
    assert broken.status == 200 and broken.json()["value"] == messages.TEAMS_DATABASE_DOWN
    assert not await feedback_rows(teams.pool, answer_id)


async def test_submit_buttons_from_older_clients_vote_too(teams: TeamsHarness, fake: FakeConnector) -> None:
    answer_id, card_id = await _answer(teams, fake)
    submit = card_submit(answer_id, 1, reply_to_id=card_id, service_url=fake.service_url)
    reply = await teams.post(submit)
    await teams.done()
    assert reply.status == 202
    assert _summary(await feedback_rows(teams.pool, answer_id)) == [
        ("teams", CHANNEL, card_id, BOB["aadObjectId"], 1, "button", None)]
    thanks = fake.calls_to("reply")[-1]
    assert thanks.body["text"] == messages.TEAMS_FEEDBACK_THANKS and thanks.activity_id == submit["id"]
    assert len(await teams.rows("SELECT id FROM answers")) == 1, "a button is not a question"


async def test_reactions_vote_and_removing_them_undoes_the_vote(teams: TeamsHarness, fake: FakeConnector) -> None:
    answer_id, card_id = await _answer(teams, fake)
    url = fake.service_url
    await teams.post(reaction("like", reply_to_id=card_id, service_url=url))
    await teams.post(reaction("heart", reply_to_id=card_id, service_url=url))
    await teams.post(reaction("like", reply_to_id="1759990000000", service_url=url))  # the alert, not an answer
    await teams.done()
    assert _summary(await feedback_rows(teams.pool)) == [
        ("teams", CHANNEL, card_id, BOB["aadObjectId"], 1, "reaction", None)]
    await teams.post(reaction("like", reply_to_id=card_id, added=False, service_url=url))
    await teams.done()
    assert not await feedback_rows(teams.pool)
    assert len(await teams.rows("SELECT id FROM answers")) == 1


async def test_a_thumbs_down_offers_runbooks_and_the_pick_leads_the_next_answer(
        teams: TeamsHarness, fake: FakeConnector) -> None:
    answer_id, card_id = await _answer(teams, fake)
    sent = len(fake.connector_calls())
    await teams.post(card_action(answer_id, -1, reply_to_id=card_id, service_url=fake.service_url))
    [asked] = fake.connector_calls()[sent:]
    choices = [c["value"] for c in next(b for b in asked.cards()[0]["body"] if b["type"] == "Input.ChoiceSet")["choices"]]
    assert choices[-1] == "none" and "disk-full.md" not in choices, "the runbook it led with is not offered again"
    picked = "oom-killed.md" if "oom-killed.md" in choices else choices[0]
    saved = await teams.post(card_fix(answer_id, choice=picked, reply_to_id=card_id, service_url=fake.service_url))
    assert saved.json()["value"].startswith("Thanks: this question now leads with `" + picked)
    none = await teams.post(card_fix(answer_id, choice="none", reply_to_id=card_id, service_url=fake.service_url))
    assert none.json()["value"] == messages.CORRECTION_NONE
    unknown = await teams.post(card_fix(answer_id, other="no/such.md", reply_to_id=card_id, service_url=fake.service_url))
    assert "could not find a runbook" in unknown.json()["value"]

    await teams.post(message(f"<at>runbook-bot</at> {DISK}", service_url=fake.service_url, id="1759990100077"))
    await teams.done()
    shown = str(fake.calls_to("update")[-1].cards()[0])
    first = shown[shown.index("**[1]**"):].split("relevance")[0]
    assert f"({picked})" in first, first
    assert "This follows a correction" in shown


async def test_fix_in_a_thread_corrects_the_latest_answer_there(teams: TeamsHarness, fake: FakeConnector) -> None:
    answer_id, _ = await _answer(teams, fake)
    await teams.post(message("<at>runbook-bot</at> fix https://git.example.com/runbooks/blob/main/oom-killed.md",
                             service_url=fake.service_url, id="1759990100088"))
    await teams.done()
    said = str(fake.connector_calls()[-1].body)
    assert "now leads with `oom-killed.md`" in said, said


CAROL = {"id": "29:1carol-teams-id", "name": "Carol Example", "aadObjectId": "aad-carol-0003"}


async def _alert_answer(teams: TeamsHarness, fake: FakeConnector, n: int) -> tuple[int, str, str]:
    """The quoted alert asked about (the n-th time): the answer's id, its card's id and its text."""
    html = QUOTED_ALERT + '<p><at id="0">runbook-bot</at>&nbsp;</p>'
    await teams.post(message("<at>runbook-bot</at>", html=html, service_url=fake.service_url, id=f"17599901{n:05d}"))
    await teams.done()
    update = fake.calls_to("update")[-1]
    [vote, _] = votes(update.cards()[0])
    return int(vote["data"]["answer_id"]), str(update.activity_id), str(update.cards()[0])


def _lead(card_text: str) -> str:
    return card_text[card_text.index("**[1]**"):].split("relevance")[0]


async def test_thumbs_down_on_an_alert_without_a_pick_then_a_pick_from_the_menu(
        teams: TeamsHarness, fake: FakeConnector) -> None:
    """Three engineers' 👎 (the bot was sure: the alert links its runbook) and no pick: the alert's next
    answer leads with the next runbook and says why; a runbook picked from the menu then leads."""
    answer_id, card_id, shown = await _alert_answer(teams, fake, 1)
    assert "(k8s-pod-crashloop.md)" in _lead(shown)
    sent = len(fake.connector_calls())
    for who in (ALICE, BOB, CAROL):
        await teams.post(card_action(answer_id, -1, reply_to_id=card_id, service_url=fake.service_url, sender=who))
    asked = fake.connector_calls()[sent]
    body = asked.cards()[0]["body"]
    [first, more] = [b for b in body if b["type"] == "Input.ChoiceSet"]
    assert first["style"] == "expanded" and len(first["choices"]) == 6 and first["choices"][-1]["value"] == "none"
    assert more["style"] == "compact" and more["id"] == MORE_INPUT and more["choices"], "the next runbooks in a menu"

    _, _, again = await _alert_answer(teams, fake, 2)
    assert "(k8s-pod-crashloop.md)" not in _lead(again), _lead(again)
    assert "Engineers marked k8s-pod-crashloop.md wrong for this alert on " in again, again

    picked = more["choices"][-1]["value"]
    saved = await teams.post(card_fix(answer_id, more=picked, reply_to_id=card_id, service_url=fake.service_url))
    assert saved.json()["value"].startswith(f"Thanks: alert KubePodCrashLooping now leads with `{picked}`")
    _, _, fixed = await _alert_answer(teams, fake, 3)
    assert f"({picked})" in _lead(fixed) and "This follows a correction: Bob Example" in fixed, fixed
