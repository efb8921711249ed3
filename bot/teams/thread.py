"""Reading a Teams message activity into the platform-neutral thread model (no SDK here).

Without Microsoft Graph a bot sees no thread history: only the message that mentions it. What that
message carries is used: its own words (the bot's <at>mention</at> and the `runbook` command word
removed), messages it quotes (Teams puts a quoted reply in the `text/html` attachment as a
`<blockquote itemtype="http://schema.skype.com/Reply">`: the alert an engineer replied to), and
cards attached to it (a forwarded Adaptive Card or connector card: TextBlocks, FactSets, links).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.chat.alerts import ThreadMessage

HTML = "text/html"
ADAPTIVE = "application/vnd.microsoft.card.adaptive"
CONNECTOR = "application/vnd.microsoft.teams.card.o365connector"
HERO = "application/vnd.microsoft.card.hero"
COMMAND = re.compile(r"^\s*/?runbook\b[:\s]*", re.IGNORECASE)
_QUOTE = re.compile(r"<blockquote\b[^>]*>(.*?)</blockquote>", re.S | re.I)
_AUTHOR = re.compile(r"<strong\b([^>]*itemprop=\"mri\"[^>]*)>(.*?)</strong>", re.S | re.I)
_ITEMID = re.compile(r"itemid=\"([^\"]*)\"")
_TIME = re.compile(r"<span\b[^>]*itemprop=\"time\"[^>]*>.*?</span>", re.S | re.I)
_AT = re.compile(r"<at\b[^>]*>(.*?)</at>", re.S | re.I)
_LINK = re.compile(r"<a\b[^>]*\bhref=\"([^\"]*)\"[^>]*>(.*?)</a>", re.S | re.I)
_BREAK = re.compile(r"<br\s*/?>|</(?:p|div|li|tr|h[1-6]|pre|ul|ol|table)>", re.I)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Incoming:
    """A message to the bot: the user's own words, that message, and what it quotes or attaches."""

    asked: str
    asking: ThreadMessage
    earlier: list[ThreadMessage] = field(default_factory=list)  # quoted messages and attached cards


def conversation_key(conversation_id: str) -> str:
    """The conversation without the thread suffix (`19:x@thread.tacv2;messageid=1` -> `19:x@thread.tacv2`)."""
    return conversation_id.split(";messageid=", 1)[0]


def thread_root(conversation_id: str) -> str | None:
    """The id of the channel post a thread hangs under, when the conversation is a thread."""
    _, found, root = conversation_id.partition(";messageid=")
    return root if found and root else None


def read_message(activity: Mapping[str, Any], bot_id: str | None = None) -> Incoming:
    """The user's question, their message and the quoted/attached messages of a message activity."""
    bot_names = _bot_names(activity, bot_id)
    attachments = [a for a in activity.get("attachments") or [] if isinstance(a, Mapping)]
    page = next((a.get("content") for a in attachments if a.get("contentType") == HTML), None)
    earlier: list[ThreadMessage] = []
    links: list[tuple[str, str]] = []
    if isinstance(page, str) and page.strip():
        own, quotes = _split_quotes(page, bot_names, bot_id)
        earlier += quotes
        words = _html_text(own, bot_names, links)
    else:
        words = _AT.sub(lambda m: "" if _plain(m[1]) in bot_names else "@" + _plain(m[1]),
                        activity.get("text") or "")
    earlier += [card_message(a) for a in attachments if a.get("contentType") in (ADAPTIVE, CONNECTOR, HERO)]
    sender = activity.get("from") or {}
    asking = ThreadMessage(text=words, links=tuple(links), author=sender.get("name") or sender.get("id"))
    return Incoming(asked=COMMAND.sub("", words.strip(), count=1).strip(), asking=asking, earlier=earlier)


def _bot_names(activity: Mapping[str, Any], bot_id: str | None) -> set[str]:
    """The display names under which the bot is mentioned in this activity."""
    recipient = activity.get("recipient") or {}
    ids = {bot_id, recipient.get("id")} - {None}
    names = {recipient.get("name")} - {None}
    for entity in activity.get("entities") or []:
        mentioned = (entity.get("mentioned") or {}) if isinstance(entity, Mapping) else {}
        if mentioned.get("id") in ids and entity.get("type") == "mention":
            names.add(_plain(_AT.sub(r"\1", entity.get("text") or "")) or mentioned.get("name"))
    return {n for n in names if n}


def _split_quotes(page: str, bot_names: set[str], bot_id: str | None) -> tuple[str, list[ThreadMessage]]:
    """The HTML without its quoted replies, and each quoted reply as a message."""
    quotes: list[ThreadMessage] = []

    def quote(m: re.Match[str]) -> str:
        inner = m[1]
        author = _AUTHOR.search(inner)
        body = _TIME.sub("", _AUTHOR.sub("", inner, count=1))
        links: list[tuple[str, str]] = []
        said = _html_text(body, bot_names, links)
        if said:
            who = _plain(author[2]) if author else None
            author_id = _ITEMID.search(author[1]) if author else None
            own = bool(author_id and bot_id and author_id[1].endswith(bot_id))
            quotes.append(ThreadMessage(text=said, links=tuple(links), author=who, own=own))
        return "\n"

    return _QUOTE.sub(quote, page), quotes


def _html_text(fragment: str, bot_names: set[str], links: list[tuple[str, str]]) -> str:
    """Teams message HTML as plain text: the bot's mention dropped, others as @name, links collected."""
    def at(m: re.Match[str]) -> str:
        name = _plain(m[1])
        return "" if name in bot_names else f"@{name}"

    def link(m: re.Match[str]) -> str:
        label, url = _plain(m[2]), html.unescape(m[1])
        links.append((label or url, url))
        return label or url

    out = _LINK.sub(link, _AT.sub(at, fragment))
    out = html.unescape(_TAG.sub("", _BREAK.sub("\n", out))).replace("\u00a0", " ")
    lines = [" ".join(line.split()) for line in out.split("\n")]
    return "\n".join(line for line in lines if line)


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", fragment)).split())


def card_message(attachment: Mapping[str, Any]) -> ThreadMessage:
    """A card attached to a message (Adaptive, connector or hero card) flattened to text, fields and links."""
    content = attachment.get("content") or {}
    if isinstance(content, str):
        return ThreadMessage(text=content, bot=True)
    parts: list[str] = []
    fields: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    if attachment.get("contentType") == ADAPTIVE:
        _walk_adaptive(content.get("body") or [], parts, fields, links)
        _walk_adaptive(content.get("actions") or [], parts, fields, links)
    else:
        _connector(content, parts, fields, links)
    return ThreadMessage(text="\n".join(p for p in parts if p), fields=tuple(fields), links=tuple(links), bot=True)


def _walk_adaptive(elements: Sequence[Any], parts: list[str], fields: list[tuple[str, str]],
                   links: list[tuple[str, str]]) -> None:
    for element in elements:
        if not isinstance(element, Mapping):
            continue
        kind = element.get("type")
        if kind == "TextBlock":
            parts.append(str(element.get("text") or ""))
        elif kind == "RichTextBlock":
            parts.append("".join(str(i.get("text") or "") for i in element.get("inlines") or []
                                 if isinstance(i, Mapping)))
        elif kind == "FactSet":
            fields += [(str(f.get("title") or ""), str(f.get("value") or "")) for f in element.get("facts") or []]
        elif kind == "Action.OpenUrl" and element.get("url"):
            links.append((str(element.get("title") or ""), str(element["url"])))
        for key in ("items", "columns", "actions"):
            _walk_adaptive(element.get(key) or [], parts, fields, links)
        if isinstance(element.get("card"), Mapping):  # Action.ShowCard
            _walk_adaptive(element["card"].get("body") or [], parts, fields, links)


def _connector(content: Mapping[str, Any], parts: list[str], fields: list[tuple[str, str]],
               links: list[tuple[str, str]]) -> None:
    """An Office 365 connector card (Alertmanager and Grafana webhooks) or a hero card."""
    parts += [str(content.get(k) or "") for k in ("title", "subtitle", "summary", "text")]
    for section in content.get("sections") or []:
        parts += [str(section.get(k) or "") for k in ("activityTitle", "activitySubtitle", "activityText", "text")]
        fields += [(str(f.get("name") or ""), str(f.get("value") or "")) for f in section.get("facts") or []]
    for action in (content.get("potentialAction") or []) + (content.get("buttons") or []):
        targets = action.get("targets") or [{"uri": action.get("value")}]
        links += [(str(action.get("name") or action.get("title") or ""), str(t.get("uri"))) for t in targets
                  if isinstance(t, Mapping) and str(t.get("uri") or "").startswith("http")]
