"""Teams message formats as pure functions (no SDK, no client here): the Answer as an Adaptive Card.

A card carries the question, the summary, numbered steps with their citations (links when known),
each command in a `CodeBlock` (monospace, with a copy button in Teams; a monospace TextBlock where a
client lacks CodeBlock), guardrail findings in coloured containers (a blocked command is never shown
as a command), notes, sources with links and relevance, and 👍 / 👎 `Action.Execute` buttons with an
optional comment field (`Action.Submit` as the fallback for clients without Universal Actions).
Teams refuses messages over about 28 KB, so steps that would push the card past `MAX_CARD_BYTES`
are replaced by a pointer to the runbook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot import messages
from bot.chat.corrections import NONE_OF_THESE, Offer
from bot.answer import Answer, Finding, Source, Step

Card = dict[str, Any]
CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
VERB_VOTE = "runbook.vote"
VERB_FIX = "runbook.fix"
CHOICE_INPUT = "runbook_choice"
MORE_INPUT = "runbook_choice_more"  # the next runbooks, in a menu
OTHER_INPUT = "runbook_other"
COMMENT_INPUT = "comment"
MAX_CARD_BYTES = 24_000
MAX_TEXT = 2_000
MAX_SOURCES = 8
_STYLE = {"block": "attention", "warn": "warning", "info": "default"}


def clip(text: str, limit: int, suffix: str = "…") -> str:
    """Text cut to `limit` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - len(suffix)].rstrip() + suffix


def text(value: str, **style: Any) -> Card:
    """A wrapping TextBlock (markdown as Teams renders it), clipped."""
    return {"type": "TextBlock", "text": clip(value, MAX_TEXT), "wrap": True, **style}


def card(body: list[Card], actions: list[Card] | None = None) -> Card:
    """An Adaptive Card (schema 1.5, full width in Teams)."""
    out: Card = {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                 "version": "1.5", "msteams": {"width": "Full"}, "body": body}
    if actions:
        out["actions"] = actions
    return out


def attachment(content: Card) -> dict[str, Any]:
    """The card as a message attachment."""
    return {"contentType": CONTENT_TYPE, "content": content}


def size(content: Card) -> int:
    """The card's size in bytes as sent."""
    return len(json.dumps(content, ensure_ascii=False).encode())


def text_card(message: str) -> Card:
    """A short reply (help, apology, refusal) as a card."""
    return card([text(message)])


def placeholder_card(question: str | None = None, asked_by: str | None = None) -> Card:
    """The "Searching runbooks…" card that the answer later replaces."""
    body = [text(messages.TEAMS_SEARCHING, weight="Bolder")]
    if question:
        body.append(_asked(question, asked_by))
    return card(body)


def _asked(question: str, asked_by: str | None) -> Card:
    shown = clip(" ".join(question.split()), 300)
    line = (messages.TEAMS_ASKED.format(user=asked_by, question=shown) if asked_by
            else messages.TEAMS_QUESTION.format(question=shown))
    return text(line, isSubtle=True, size="Small")


def answer_card(answer: Answer, *, links: Mapping[int, str] | None = None, asked_by: str | None = None,
                feedback: bool = True) -> Card:
    """An answer as an Adaptive Card within Teams' size limit: question, summary, steps with commands,
    guardrail findings, notes, sources with links, footer, and the feedback inputs and buttons."""
    links = {s.id: (links or {}).get(s.id) or s.link for s in answer.sources}
    summary = ("🔍 " if answer.abstained else "") + (answer.answer or messages.NO_RUNBOOK)
    head = [_asked(answer.question, asked_by), text(summary)]
    tail = _notes(answer) + _sources(answer.sources, links) + [_footer(answer)]
    actions: list[Card] = []
    if feedback and answer.answer_id is not None:
        tail.append(_comment_input())
        actions = _vote_actions(answer.answer_id)
    steps: list[Card] = []
    for n, step in enumerate(answer.steps, start=1):
        rendered = _step(n, step, links)
        more = text(_more(len(answer.steps) - n + 1, answer.sources, links), isSubtle=True)
        if size(card(head + steps + [rendered, more] + tail, actions)) > MAX_CARD_BYTES:
            steps.append(more)
            break
        steps.append(rendered)
    return card(head + steps + tail, actions)


def _step(n: int, step: Step, links: Mapping[int, str | None]) -> Card:
    """One numbered step: instruction with citations, rationale, commands, then findings."""
    cites = " ".join(f"[[{c}]]({links[c]})" if links.get(c) else f"[{c}]" for c in step.citations)
    urgent = "🚨 " if step.priority == "now" else ""
    items = [text(f"**{n}.** {urgent}{step.instruction}" + (f" {cites}" if cites else ""))]
    if step.rationale:
        items.append(text(f"_{step.rationale}_", isSubtle=True, spacing="None"))
    blocked = {f.command for f in step.findings if f.severity == "block"}
    items += [code(command) for command in step.commands if command not in blocked]
    items += [_finding(f) for f in step.findings]
    return {"type": "Container", "spacing": "Medium", "items": items}


def code(command: str) -> Card:
    """A command in monospace: Teams' CodeBlock, a monospace TextBlock where CodeBlock is unknown."""
    shown = clip(command, MAX_TEXT)
    return {"type": "CodeBlock", "codeSnippet": shown, "language": "Bash",
            "fallback": {"type": "TextBlock", "text": shown, "fontType": "Monospace", "wrap": True}}


def _finding(f: Finding) -> Card:
    """A guardrail finding in a container coloured by severity (the command as text, not as code)."""
    shown = clip(" ".join(f.command.split()), 200)
    items = [text(messages.TEAMS_FINDING[f.severity].format(command=shown, reason=f.reason), size="Small")]
    if f.safer:
        items.append(text(messages.TEAMS_SAFER.format(safer=f.safer), size="Small", spacing="None"))
    return {"type": "Container", "style": _STYLE[f.severity], "items": items}


def _more(count: int, sources: list[Source], links: Mapping[int, str | None]) -> str:
    first = next((s for s in sources if links.get(s.id)), None)
    where = f"[{first.document}]({links[first.id]})" if first else (sources[0].document if sources else "")
    return messages.TEAMS_MORE_STEPS.format(count=count, where=where or "the runbook")


def _notes(answer: Answer) -> list[Card]:
    return [text(f"📝 {n}", isSubtle=True, size="Small") for n in answer.notes if n.strip()]


def _sources(sources: list[Source], links: Mapping[int, str | None]) -> list[Card]:
    """`[1] [Runbook › Section](link) · relevance 0.82` per source (the path when there is no link)."""
    if not sources:
        return []
    items = [text(messages.TEAMS_SOURCES, spacing="Medium")]
    for s in sources[:MAX_SOURCES]:
        name = clip(" › ".join([s.document, *s.heading_path[1:]]) if s.heading_path else s.document, 150)
        shown = f"[{name}]({links[s.id]})" if links.get(s.id) else f"{name} ({s.path})"
        items.append(text(f"**[{s.id}]** {shown} · relevance {s.relevance:.2f}", size="Small", spacing="None"))
    return items


def _footer(answer: Answer) -> Card:
    mode = answer.mode + (f" ({answer.model_used})" if answer.model_used else "")
    parts = [f"confidence {answer.confidence:.2f}", mode]
    if answer.answer_id is not None:
        parts.append(f"answer {answer.answer_id}")
    return text(" · ".join(parts), isSubtle=True, size="Small")


def _comment_input() -> Card:
    return {"type": "Input.Text", "id": COMMENT_INPUT, "placeholder": messages.TEAMS_FEEDBACK_PLACEHOLDER,
            "isMultiline": True, "maxLength": 3000, "spacing": "Medium"}


def _vote_actions(answer_id: int) -> list[Card]:
    return [_vote(messages.TEAMS_FEEDBACK_UP, answer_id, 1), _vote(messages.TEAMS_FEEDBACK_DOWN, answer_id, -1)]


def _vote(title: str, answer_id: int, vote: int) -> Card:
    """A vote button: Action.Execute (an invoke the bot answers), Action.Submit on older clients."""
    data = {"answer_id": answer_id, "vote": vote}
    return {"type": "Action.Execute", "title": title, "verb": VERB_VOTE, "data": data,
            "fallback": {"type": "Action.Submit", "title": title, "data": {"verb": VERB_VOTE, **data}}}


def fallback_text(answer: Answer) -> str:
    """Plain text of the answer's summary (logs, notification previews), clipped."""
    return clip(answer.answer or messages.NO_RUNBOOK, 300)


def correction_card(offer: Offer) -> Card:
    """After a 👎: the closest runbooks as a list, the next ones in a menu, "none of these", and a field
    for a link or path."""
    first = [{"title": clip(title, 120), "value": path} for path, title in offer.first]
    first.append({"title": messages.CORRECTION_NONE_LABEL, "value": NONE_OF_THESE})
    body = [text(messages.CORRECTION_ASK, weight="Bolder"),
            {"type": "Input.ChoiceSet", "id": CHOICE_INPUT, "style": "expanded", "choices": first}]
    if offer.more:
        body.append({"type": "Input.ChoiceSet", "id": MORE_INPUT, "style": "compact",
                     "placeholder": messages.CORRECTION_MORE,
                     "choices": [{"title": clip(title, 120), "value": path} for path, title in offer.more]})
    body.append({"type": "Input.Text", "id": OTHER_INPUT, "placeholder": messages.CORRECTION_OTHER, "maxLength": 500})
    data = {"answer_id": offer.answer_id}
    action = {"type": "Action.Execute", "title": messages.CORRECTION_SEND, "verb": VERB_FIX, "data": data,
              "fallback": {"type": "Action.Submit", "title": messages.CORRECTION_SEND,
                           "data": {"verb": VERB_FIX, **data}}}
    return card(body, [action])
