"""Teams formats as pure functions: the Answer as an Adaptive Card (steps, commands, guardrail findings,
citations, feedback, Teams' size limit) and a message activity read into the thread model."""

from __future__ import annotations

import json
from typing import Any

from bot import messages
from bot.chat.alerts import thread_question
from bot.answer import Answer, Finding, Source, Step
from bot.teams.cards import MAX_CARD_BYTES, VERB_VOTE, answer_card, size
from bot.teams.thread import conversation_key, read_message, thread_root
from tests.bot.teams.test_adapter import QUOTED_ALERT, texts, walk
from tests.teamsfake import BOT, message

SOURCE = Source(id=1, chunk_id=11, document="Disk full on a Linux host", path="disk-full.md",
                heading_path=["Disk full on a Linux host", "Mitigation"], relevance=0.82)
OTHER = Source(id=2, chunk_id=12, document="Kubernetes pod crash loop", path="k8s-pod-crashloop.md",
               heading_path=["Kubernetes pod crash loop"], relevance=0.41)


def _answer(*steps: Step, answer_id: int | None = 7, **extra: Any) -> Answer:
    return Answer(question="disk full on /var/lib/docker", answer="Free space on the Docker volume.",
                  steps=list(steps), sources=[SOURCE, OTHER], confidence=0.82, answer_id=answer_id, **extra)


def _codes(card: dict[str, Any]) -> list[str]:
    return [e["codeSnippet"] for e in walk(card["body"]) if e.get("type") == "CodeBlock"]


def test_steps_commands_citations_and_feedback() -> None:
    step = Step(instruction="Prune unused images", rationale="Images are the usual culprit.", priority="now",
                commands=["docker image prune -a --filter until=24h"], citations=[1, 2])
    card = answer_card(_answer(step), links={1: "https://git.example.com/rb/disk-full.md#mitigation"},
                       asked_by="Alice Example")
    shown = texts(card)
    assert "Alice Example asked: disk full on /var/lib/docker" in shown
    assert "**1.** 🚨 Prune unused images [[1]](https://git.example.com/rb/disk-full.md#mitigation) [2]" in shown
    assert "_Images are the usual culprit._" in shown
    assert _codes(card) == ["docker image prune -a --filter until=24h"]
    assert "**[1]** [Disk full on a Linux host › Mitigation](https://git.example.com/rb/disk-full.md#mitigation)" \
           " · relevance 0.82" in shown
    assert "**[2]** Kubernetes pod crash loop (k8s-pod-crashloop.md) · relevance 0.41" in shown, "no link: the path"
    assert "confidence 0.82 · extractive · answer 7" in shown
    up, down = card["actions"]
    assert (up["type"], up["verb"], up["data"], up["title"]) == (
        "Action.Execute", VERB_VOTE, {"answer_id": 7, "vote": 1}, messages.TEAMS_FEEDBACK_UP)
    assert down["data"] == {"answer_id": 7, "vote": -1}
    assert down["fallback"] == {"type": "Action.Submit", "title": messages.TEAMS_FEEDBACK_DOWN,
                                "data": {"verb": VERB_VOTE, "answer_id": 7, "vote": -1}}
    [comment] = [e for e in walk(card["body"]) if e.get("type") == "Input.Text"]
    assert comment["id"] == "comment" and comment["isMultiline"]


def test_blocked_commands_are_never_shown_as_commands() -> None:
    blocked = Finding(command="rm -rf /", rule="rm-root", severity="block", reason="deletes the whole filesystem")
    warned = Finding(command="docker system prune -a", rule="docker-prune-all", severity="warn",
                     reason="removes every unused image", safer="docker image prune --filter until=24h")
    info = Finding(command="journalctl --vacuum-size=1G", rule="journal-vacuum", severity="info",
                   reason="old logs are gone for good")
    step = Step(instruction="Clean up", commands=["rm -rf /", "docker system prune -a", "journalctl --vacuum-size=1G"],
                citations=[1], findings=[blocked, warned, info])
    card = answer_card(_answer(step))
    assert _codes(card) == ["docker system prune -a", "journalctl --vacuum-size=1G"]
    assert all("rm -rf /" not in e.get("text", "") for e in walk(card["body"]) if e.get("fontType") == "Monospace")
    styles = {e["style"]: texts({"body": e["items"]}) for e in walk(card["body"]) if e.get("style")}
    assert "⛔ **Blocked, not shown as a command:** rm -rf /: deletes the whole filesystem" in styles["attention"]
    assert "⚠️ **Check before running:** docker system prune -a" in styles["warning"]
    assert "Safer: docker image prune --filter until=24h" in styles["warning"]
    assert "ℹ️ Note: journalctl --vacuum-size=1G" in styles["default"]


def test_long_answers_stay_under_teams_size_limit() -> None:
    command = "kubectl get pods -A -o wide | grep -v Running " * 20
    steps = [Step(instruction=f"Step number {n} " + "explained at length " * 40, commands=[command] * 3,
                  citations=[1]) for n in range(40)]
    card = answer_card(_answer(*steps), links={1: "https://git.example.com/rb/disk-full.md"})
    assert size(card) <= MAX_CARD_BYTES < 28_000
    shown = texts(card)
    assert "more step(s) did not fit in this card: see [Disk full on a Linux host](https://git.example.com/" in shown
    assert "**1.**" in shown and "**40.**" not in shown and card["actions"], "feedback survives the cut"
    assert len(json.dumps(card, ensure_ascii=False).encode()) == size(card)


def test_abstentions_and_unsaved_answers() -> None:
    card = answer_card(Answer(question="why is the moon grey", answer="I don't have a runbook that covers this.",
                              abstained=True, closest_titles=["Disk full"]), feedback=True)
    assert texts(card).splitlines()[1].startswith("🔍 I don't have a runbook")
    assert "actions" not in card and not [e for e in walk(card["body"]) if e.get("type") == "Input.Text"], \
        "no answer id, nothing to vote on"
    assert "actions" not in answer_card(_answer(), feedback=False)


# --- Reading a message --------------------------------------------------------------------------------------------


def test_a_quoted_alert_becomes_an_earlier_message() -> None:
    html = QUOTED_ALERT + '<p><at id="0">runbook-bot</at> what now? cc <at id="1">Bob Example</at></p>'
    activity = message("what now? cc <at>Bob Example</at>", html=html, service_url="http://127.0.0.1/")
    incoming = read_message(activity, BOT["id"])
    assert incoming.asked == "what now? cc @Bob Example"
    [quoted] = incoming.earlier
    assert quoted.author == "Alertmanager" and not quoted.own
    assert quoted.text.startswith("[FIRING:1] KubePodCrashLooping (cluster=prod-eu-1")
    assert ("k8s-pod-crashloop", "https://runbooks.example.com/kubernetes/k8s-pod-crashloop") in quoted.links
    tq = thread_question(incoming.asked, incoming.earlier, asking=incoming.asking)
    assert tq.question == "what now? cc @Bob Example"
    assert tq.alert["alertname"] == "KubePodCrashLooping" and tq.alert["namespace"] == "payments"
    assert tq.alert["runbook_url"] == "https://runbooks.example.com/kubernetes/k8s-pod-crashloop"


def test_quoting_the_bots_own_answer_is_not_context() -> None:
    html = ('<blockquote itemtype="http://schema.skype.com/Reply"><strong itemprop="mri" '
            f'itemid="{BOT["id"]}">runbook-bot</strong><p>Free space on the Docker volume.</p></blockquote>'
            '<p><at id="0">runbook-bot</at> and after that?</p>')
    incoming = read_message(message("and after that?", html=html, service_url="http://127.0.0.1/"), BOT["id"])
    [quoted] = incoming.earlier
    assert quoted.own and thread_question(incoming.asked, incoming.earlier).thread == []


def test_plain_text_the_command_word_and_attached_cards() -> None:
    alert_card = {"contentType": "application/vnd.microsoft.card.adaptive", "content": {
        "type": "AdaptiveCard", "body": [
            {"type": "TextBlock", "text": "[FIRING:1] NodeFilesystemAlmostOutOfSpace"},
            {"type": "FactSet", "facts": [{"title": "instance", "value": "db-01:9100"},
                                          {"title": "severity", "value": "warning"}]}],
        "actions": [{"type": "Action.OpenUrl", "title": "Runbook", "url": "https://runbooks.example.com/disk"}]}}
    activity = message("/runbook", personal=True, attachments=[alert_card], service_url="http://127.0.0.1/")
    incoming = read_message(activity, BOT["id"])
    assert incoming.asked == ""
    [card] = incoming.earlier
    assert card.bot and ("instance", "db-01:9100") in card.fields
    tq = thread_question(incoming.asked, incoming.earlier, asking=incoming.asking)
    assert tq.question == "NodeFilesystemAlmostOutOfSpace" and tq.alert["severity"] == "warning"
    assert tq.alert["runbook_url"] == "https://runbooks.example.com/disk"


def test_connector_cards_are_read_too() -> None:
    connector = {"contentType": "application/vnd.microsoft.teams.card.o365connector", "content": {
        "title": "[FIRING:1] KubePodCrashLooping (payments critical)",
        "sections": [{"activityTitle": "Pod payments/checkout-api is crash looping",
                      "facts": [{"name": "namespace", "value": "payments"}, {"name": "alertname",
                                                                            "value": "KubePodCrashLooping"}]}],
        "potentialAction": [{"@type": "OpenUri", "name": "Runbook",
                             "targets": [{"os": "default", "uri": "https://runbooks.example.com/crashloop"}]}]}}
    incoming = read_message(message("", personal=True, attachments=[connector], service_url="http://x/"), BOT["id"])
    [card] = incoming.earlier
    assert ("namespace", "payments") in card.fields
    assert ("Runbook", "https://runbooks.example.com/crashloop") in card.links
    assert thread_question("", incoming.earlier).alert["alertname"] == "KubePodCrashLooping"


def test_conversation_ids() -> None:
    assert conversation_key("19:abc@thread.tacv2;messageid=1759990000000") == "19:abc@thread.tacv2"
    assert thread_root("19:abc@thread.tacv2;messageid=1759990000000") == "1759990000000"
    assert conversation_key("a:1personal") == "a:1personal" and thread_root("a:1personal") is None
