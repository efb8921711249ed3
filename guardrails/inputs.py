"""A user's question cleaned before it reaches retrieval or a model: Slack markup, control characters, length."""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 2000
_SLACK = re.compile(r"<([^<>\n]+)>")
_KEEP = {"\n", "\t"}


@dataclass(frozen=True)
class Question:
    """A normalised question; `empty` when nothing is left to answer."""

    text: str
    empty: bool
    truncated: bool


def _slack_token(inner: str, bot_user_id: str | None) -> str:
    """Plain text for one Slack `<...>` token (mentions, channels, links, special mentions)."""
    target, _, label = inner.partition("|")
    if target.startswith("@"):
        user = target[1:]
        return "" if user == bot_user_id else f"@{label or user}"
    if target.startswith("#"):
        return f"#{label or target[1:]}"
    if target.startswith("!"):
        if target.startswith("!subteam^"):
            return label or "@group"
        return label if target.startswith("!date") else ""
    if re.match(r"^(?:[a-z][a-z0-9+.-]*:)", target, re.I):
        shown = target[7:] if target.startswith("mailto:") else target
        return f"{label} ({shown})" if label and label != shown else shown
    return f"<{inner}>"  # not Slack markup (e.g. a <placeholder>): keep it


def _strip_controls(text: str) -> str:
    return "".join(c for c in text if c in _KEEP or unicodedata.category(c) not in ("Cc", "Cf"))


def _collapse(text: str) -> str:
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _truncate(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars * 0.8 else cut).rstrip(), True


def normalise_question(text: str, max_chars: int = DEFAULT_MAX_CHARS, *, bot_user_id: str | None = None) -> Question:
    """Slack markup resolved, HTML entities decoded, control characters dropped, whitespace collapsed, length capped."""
    text = _SLACK.sub(lambda m: _slack_token(m.group(1), bot_user_id), text or "")
    text = html.unescape(text)
    text = _collapse(_strip_controls(text.replace("\r\n", "\n").replace("\r", "\n")))
    text, truncated = _truncate(text, max_chars)
    return Question(text=text, empty=not text, truncated=truncated)
