"""Slack message formats, both ways, as pure functions (no client here).

Writing: the Answer model as Block Kit, placeholders and short replies, within Slack's limits
(50 blocks per message, 3000 characters per section text, 10 context elements): long text is
split with code fences kept balanced, and what does not fit points at the full runbook. Every
piece of runbook or user text is escaped (`&`, `<`, `>`), so nothing in a runbook can ping
`@channel`. Reading: a Slack message (text, attachments, fields, blocks, mrkdwn links) as a
platform-neutral `ThreadMessage`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot import messages
from bot.chat.alerts import ThreadMessage, ThreadQuestion, thread_question
from bot.chat.corrections import NONE_OF_THESE, SHOWN_FIRST
from bot.answer import Answer, Finding, Source, Step
from guardrails.inputs import normalise_question

Block = dict[str, Any]
MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_CONTEXT_ELEMENTS = 10
MAX_SOURCES_SHOWN = 9  # the sources listed under an answer
MAX_FALLBACK_CHARS = 3000
ACTION_UP = "runbook_feedback_up"
ACTION_DOWN = "runbook_feedback_down"
ACTION_SHARE = "runbook_share"
FEEDBACK_VIEW = "runbook_feedback_comment"
ACTION_FIX_PICK = "runbook_fix_pick"  # a runbook chosen after a 👎 (value: "<answer id>|<path>")
ACTION_FIX_BUTTON = "runbook_fix_button_"  # + its place: one of the closest runbooks, as a button (same value)
ACTION_FIX_NONE = "runbook_fix_none"
MAX_OPTION_CHARS = 75
_LINK = re.compile(r"<([^<>\n]+)>")
_SEVERITY_ICON = {"block": ":no_entry:", "warn": ":warning:", "info": ":information_source:"}


def escape(text: str) -> str:
    """Escape text for mrkdwn: `&`, `<` and `>` (what would otherwise be links or mentions)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str) -> str:
    """Markdown from a model or a runbook as Slack mrkdwn: escaped, **bold** to *bold*, links."""
    out = escape(text)
    out = re.sub(r"\*\*(.+?)\*\*", r"*\1*", out)
    out = re.sub(r"\[([^\]]+)\]\((https?://[^\s)]+)\)", lambda m: f"<{m[2]}|{m[1]}>", out)
    return out


def section(text: str) -> Block:
    """A mrkdwn section block (the caller keeps the text within limits)."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(*texts: str) -> Block:
    """A context block of mrkdwn elements (at most 10, each clipped)."""
    elements = [{"type": "mrkdwn", "text": clip(t, MAX_SECTION_CHARS)} for t in texts if t][:MAX_CONTEXT_ELEMENTS]
    return {"type": "context", "elements": elements}


def clip(text: str, limit: int, suffix: str = "…") -> str:
    """Text cut to `limit` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - len(suffix)].rstrip() + suffix


def split_mrkdwn(text: str, limit: int = MAX_SECTION_CHARS) -> list[str]:
    """Pieces of at most `limit` characters, cut at line ends; a code fence cut in two is closed
    and reopened so each piece renders on its own."""
    lines: list[str] = []
    for line in text.split("\n"):
        while len(line) > limit - 10:  # a single huge line: hard cut
            lines.append(line[: limit - 10])
            line = line[limit - 10:]
        lines.append(line)
    pieces: list[str] = []
    current: list[str] = []
    size, in_fence = 0, False
    for line in lines:
        if current and size + len(line) + 1 > limit - 4:
            pieces.append("\n".join(current) + ("\n```" if in_fence else ""))
            current, size = (["```"], 4) if in_fence else ([], 0)
        current.append(line)
        size += len(line) + 1
        if line.count("```") % 2:
            in_fence = not in_fence
    if current:
        pieces.append("\n".join(current))
    return [p for p in pieces if p.strip("`\n ")]


def text_blocks(text: str) -> list[Block]:
    """A short reply (help, apology, refusal) as sections; `text` is already mrkdwn."""
    return [section(p) for p in split_mrkdwn(text)][:MAX_BLOCKS]


def placeholder_blocks(question: str | None = None, asked_by: str | None = None) -> list[Block]:
    """The "Searching runbooks..." message that the answer later replaces."""
    blocks = [section(messages.SLACK_SEARCHING)]
    if question:
        blocks.append(context(_asked(question, asked_by)))
    return blocks


def _asked(question: str, asked_by: str | None, shared_by: str | None = None) -> str:
    who = f"<@{asked_by}> asked: " if asked_by else "Question: "
    shared = " · " + messages.SLACK_SHARED_BY.format(user=shared_by) if shared_by else ""
    return who + escape(clip(" ".join(question.split()), 300)) + shared


def answer_blocks(answer: Answer, *, links: Mapping[int, str] | None = None, asked_by: str | None = None,
                  feedback: bool = True, share: bool = False, shared_by: str | None = None) -> list[Block]:
    """An answer as Block Kit: summary, numbered steps with commands, guardrail warnings, notes,
    sources with links and relevance, and the feedback (and share) buttons; at most 50 blocks."""
    links = {s.id: (links or {}).get(s.id) or s.link for s in answer.sources}
    head = [context(_asked(answer.question, asked_by, shared_by))]
    summary = (":mag: " if answer.abstained else "") + mrkdwn(answer.answer or messages.NO_RUNBOOK)
    head += [section(p) for p in split_mrkdwn(summary)][:3]
    tail = _notes(answer) + _sources(answer.sources, links) + [_footer(answer)]
    actions = _actions(answer, feedback=feedback, share=share)
    tail += [actions] if actions else []
    budget = MAX_BLOCKS - len(head) - len(tail) - 1  # one block is kept for "more steps"
    steps: list[Block] = []
    for n, step in enumerate(answer.steps, start=1):
        rendered = _step(n, step, links)
        if len(steps) + len(rendered) > budget:
            steps.append(section(_more(len(answer.steps) - n + 1, answer.sources, links)))
            break
        steps += rendered
    return head + steps + tail


def _step(n: int, step: Step, links: Mapping[int, str | None]) -> list[Block]:
    """One numbered step: instruction, citations and rationale, commands in code blocks, then findings."""
    cites = " ".join(f"<{links[c]}|[{c}]>" if links.get(c) else f"[{c}]" for c in step.citations)
    lines = [f"*{n}.* " + (":rotating_light: " if step.priority == "now" else "") + mrkdwn(step.instruction)
             + (f"  {cites}" if cites else "")]
    if step.rationale:
        lines.append(f"_{mrkdwn(step.rationale)}_")
    blocked = {f.command for f in step.findings if f.severity == "block"}
    for command in step.commands:
        if command not in blocked:
            lines.append("```" + escape(command.replace("```", "'''")) + "```")
    blocks = [section(p) for p in split_mrkdwn("\n".join(lines))]
    flagged = [f for f in step.findings if f.severity in ("block", "warn")]
    if flagged:
        blocks += [section(p) for p in split_mrkdwn("\n".join(_finding(f) for f in flagged))]
    infos = [_finding(f) for f in step.findings if f.severity == "info"]
    if infos:
        blocks.append(context(*infos))
    return blocks


def _finding(f: Finding) -> str:
    """A guardrail finding: blocked commands are shown as text, never as a copyable code block."""
    label = {"block": "*Blocked:*", "warn": "*Check before running:*", "info": "Note:"}[f.severity]
    shown = escape(clip(" ".join(f.command.split()), 200)).replace("`", "'")
    text = f"{_SEVERITY_ICON[f.severity]} {label} `{shown}`: {escape(f.reason)}"
    if f.safer:
        text += f"\n      Safer: `{escape(f.safer).replace('`', chr(39))}`"
    return text


def _more(count: int, sources: list[Source], links: Mapping[int, str | None]) -> str:
    first = next((links[s.id] for s in sources if links.get(s.id)), None)
    where = f"<{first}|{escape(sources[0].document)}>" if first else (escape(sources[0].document) if sources else "")
    return messages.SLACK_MORE_STEPS.format(count=count, where=where or "the runbook")


_USER_MENTION = re.compile(r"&lt;@([UW][A-Z0-9]{2,20})&gt;")


def _notes(answer: Answer) -> list[Block]:
    # A note may name an engineer ("corrected by <@U123>"): user mentions stay mentions, nothing else.
    notes = [":memo: " + _USER_MENTION.sub(r"<@\1>", mrkdwn(n)) for n in answer.notes if n.strip()]
    return [context(*notes)] if notes else []


def _sources(sources: list[Source], links: Mapping[int, str | None]) -> list[Block]:
    """One context element, the heading and one line per source (`[1] <link|Runbook › Section> ·
    relevance 0.82`): read as one list, one per line, and never taken for the steps' citations."""
    if not sources:
        return []
    lines = [":books: *Sources*"]
    for s in sources[:MAX_SOURCES_SHOWN]:
        name = escape(" › ".join([s.document, *s.heading_path[1:]]) if s.heading_path else s.document)
        shown = f"<{links[s.id]}|{clip(name, 150)}>" if links.get(s.id) else f"{clip(name, 150)} (`{escape(s.path)}`)"
        line = f"*[{s.id}]* {shown} · relevance {s.relevance:.2f}"
        if sum(len(x) + 1 for x in lines) + len(line) > MAX_SECTION_CHARS:
            break
        lines.append(line)
    return [context("\n".join(lines))]


def _footer(answer: Answer) -> Block:
    mode = answer.mode + (f" ({answer.model_used})" if answer.model_used else "")
    parts = [f"confidence {answer.confidence:.2f}", mode]
    if answer.answer_id is not None:
        parts.append(f"answer {answer.answer_id}")
    return context(" · ".join(parts))


def _actions(answer: Answer, *, feedback: bool, share: bool) -> Block | None:
    if answer.answer_id is None:
        return None
    value = json.dumps({"answer_id": answer.answer_id})
    elements: list[Block] = []
    if feedback:
        elements += [_button(":+1: Helpful", ACTION_UP, value), _button(":-1: Not helpful", ACTION_DOWN, value)]
    if share:
        elements.append(_button(messages.SLACK_SHARE_BUTTON, ACTION_SHARE, value, style="primary"))
    return {"type": "actions", "block_id": "runbook_answer_actions", "elements": elements} if elements else None


def _button(label: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {"type": "button", "action_id": action_id, "value": value,
                     "text": {"type": "plain_text", "text": label, "emoji": True}}
    if style:
        button["style"] = style
    return button


def fallback_text(answer: Answer) -> str:
    """The notification text that goes with the blocks (plain, clipped)."""
    return clip(answer.answer or messages.NO_RUNBOOK, MAX_FALLBACK_CHARS)


def comment_modal(private_metadata: str, choices: Sequence[tuple[str, str]] = ()) -> Block:
    """The thumbs-down follow-up: which runbook would have been right (the closest ones as options,
    the next ones in a menu, "none of these", or a typed link or path) and an optional comment,
    stored on submit."""
    blocks: list[Block] = []
    first, more = list(choices[:SHOWN_FIRST]), list(choices[SHOWN_FIRST:])
    if first:
        options = [_option(title, path) for path, title in first]
        options.append(_option(messages.CORRECTION_NONE_LABEL, NONE_OF_THESE))
        blocks.append({"type": "input", "block_id": "correction", "optional": True,
                       "label": {"type": "plain_text", "text": messages.CORRECTION_ASK},
                       "element": {"type": "radio_buttons", "action_id": "choice", "options": options}})
    if more:
        blocks.append({"type": "input", "block_id": "correction_more", "optional": True,
                       "label": {"type": "plain_text", "text": messages.CORRECTION_MORE},
                       "element": {"type": "static_select", "action_id": "choice",
                                   "options": [_option(title, path) for path, title in more],
                                   "placeholder": {"type": "plain_text", "text": messages.CORRECTION_CHOICE}}})
    blocks.append({"type": "input", "block_id": "correction_other", "optional": True,
                   "label": {"type": "plain_text", "text": messages.CORRECTION_OTHER},
                   "element": {"type": "plain_text_input", "action_id": "text", "max_length": 500}})
    blocks.append({"type": "input", "block_id": "comment", "optional": True,
                   "label": {"type": "plain_text", "text": messages.SLACK_FEEDBACK_LABEL},
                   "element": {"type": "plain_text_input", "action_id": "text", "multiline": True,
                               "max_length": 3000}})
    return {
        "type": "modal", "callback_id": FEEDBACK_VIEW, "private_metadata": private_metadata,
        "title": {"type": "plain_text", "text": messages.SLACK_FEEDBACK_TITLE},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": blocks,
    }


def correction_blocks(answer_id: int, choices: Sequence[tuple[str, str]]) -> list[Block]:
    """After a 👎 reaction (no modal can open): the closest runbooks as buttons, the next ones in a
    menu, and "none of these"."""
    first, more = list(choices[:SHOWN_FIRST]), list(choices[SHOWN_FIRST:])
    blocks = [section(f"*{escape(messages.CORRECTION_ASK)}* {escape(messages.CORRECTION_FIX_HINT)}")]
    if first:
        blocks.append({"type": "actions", "block_id": "fix_first", "elements": [
            _button(_clipped(title), f"{ACTION_FIX_BUTTON}{n}", f"{answer_id}|{path}"[:2000])
            for n, (path, title) in enumerate(first, start=1)]})
    elements: list[Block] = []
    if more:
        elements.append({"type": "static_select", "action_id": ACTION_FIX_PICK,
                         "options": [_option(title, f"{answer_id}|{path}") for path, title in more],
                         "placeholder": {"type": "plain_text", "text": messages.CORRECTION_MORE}})
    elements.append(_button(messages.CORRECTION_NONE_LABEL, ACTION_FIX_NONE, f"{answer_id}|{NONE_OF_THESE}"))
    blocks.append({"type": "actions", "block_id": "fix_more", "elements": elements})
    return blocks


def _clipped(label: str) -> str:
    return label if len(label) <= MAX_OPTION_CHARS else label[: MAX_OPTION_CHARS - 1] + "…"


def _option(label: str, value: str) -> Block:
    return {"text": {"type": "plain_text", "text": _clipped(label)}, "value": value[:150]}


# --- Reading ---------------------------------------------------------------------------------------------------------


def thread_message(msg: Mapping[str, Any], bot_user_id: str | None, bot_id: str | None) -> ThreadMessage:
    """A Slack message flattened: text, attachment titles, texts and fields, block texts and link targets."""
    parts: list[str] = [msg.get("text") or ""]
    fields: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for att in msg.get("attachments") or []:
        shown = [att.get(k) for k in ("pretext", "author_name", "title", "text") if att.get(k)]
        parts += shown or [att.get("fallback") or ""]
        if att.get("title_link"):
            links.append((att.get("title") or "", att["title_link"]))
        fields += [(f.get("title") or "", f.get("value") or "") for f in att.get("fields") or []]
        links += _buttons(att.get("actions") or [])
    if not msg.get("text") and not msg.get("attachments"):
        parts += _block_texts(msg.get("blocks") or [])
    for block in msg.get("blocks") or []:
        if isinstance(block, dict):
            links += _buttons(block.get("elements") or []) + _buttons([block.get("accessory") or {}])
    text, found = plain_text("\n".join(p for p in parts if p))
    fields = [(plain_text(k)[0], plain_text(v, found)[0]) for k, v in fields]
    own = bool(bot_user_id and msg.get("user") == bot_user_id) or bool(bot_id and msg.get("bot_id") == bot_id)
    return ThreadMessage(text=text, fields=tuple(fields), links=tuple(links + found), author=msg.get("user"),
                         bot=bool(msg.get("bot_id")) or msg.get("subtype") == "bot_message", own=own)


HELP_WORDS = {"", "help", "?", "usage"}


def slack_question(event: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]], bot_user_id: str | None,
                   bot_id: str | None) -> ThreadQuestion | None:
    """What a mention or DM asks: the message's words (the bot's mention removed), the thread's alert and
    replies before it (`earlier`, oldest first, as conversations.replies returns them); None when the
    message asks for help."""
    asking = thread_message(event, bot_user_id, bot_id)
    asked = normalise_question(event.get("text") or "", bot_user_id=bot_user_id).text
    if asked and asked.lower() in HELP_WORDS:
        return None
    return thread_question(asked, [thread_message(m, bot_user_id, bot_id) for m in earlier], asking=asking)


def _buttons(elements: Sequence[Any]) -> list[tuple[str, str]]:
    """(label, url) of link buttons: the "Runbook" button of an alert notification."""
    out = []
    for e in elements:
        if isinstance(e, dict) and isinstance(e.get("url"), str):
            label = e.get("text")
            label = label.get("text", "") if isinstance(label, dict) else str(label or "")
            out.append((plain_text(label)[0], e["url"]))
    return out


def _block_texts(blocks: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if isinstance(block.get("text"), dict):
            out.append(block["text"].get("text", ""))
        out += [f.get("text", "") for f in block.get("fields") or [] if isinstance(f, dict)]
        elements = [e for e in block.get("elements") or [] if isinstance(e, dict)]
        out += [e["text"] for e in elements if isinstance(e.get("text"), str)]
    return out


def plain_text(text: str, links: list[tuple[str, str]] | None = None) -> tuple[str, list[tuple[str, str]]]:
    """Slack mrkdwn as plain text (`<url|label>` -> label, `<@U1>` -> @U1, entities decoded), and the links."""
    found = links if links is not None else []

    def token(m: re.Match[str]) -> str:
        target, _, label = m[1].partition("|")
        if re.match(r"^(?:https?|mailto):", target):
            found.append((html.unescape(label or target), html.unescape(target)))
            return label or target
        if target[:1] in "@#":
            return target[:1] + (label or target[1:])
        return "@" + (label or target[1:].split("^")[0]) if target.startswith("!") else m[0]

    return html.unescape(_LINK.sub(token, text)), found
