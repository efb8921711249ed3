"""Secrets kept out of what the bot shows or sends: redaction of credentials, and system-prompt leaks.

Only shapes that are credentials are redacted (vendor token prefixes, private keys, JWTs,
`password=...`, URL passwords); digests, commit hashes and UUIDs are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MARKER = "[redacted]"
MIN_KNOWN_CHARS = 4
_WHOLE = [re.compile(p, f) for p, f in [
    (r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
     r"|[ \t]*\n(?:[ \t]*[A-Za-z0-9+/=:-]{16,}[ \t]*(?:\n|\Z))+)", re.S),  # a whole block, or a truncated one
    (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b", 0),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
    (r"\bxapp-\d-[A-Za-z0-9-]{10,}", 0),
    (r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+", 0),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}", 0),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", 0),
    (r"\bgl(?:pat|rt|dt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}", 0),
    (r"\bsk-(?=[A-Za-z0-9_-]*\d)(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}", 0),
    (r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    (r"(?<=\b[Bb]earer )[A-Za-z0-9._~+/-]{16,}=*", 0),
]]
TOKEN_SHAPES = tuple(_WHOLE[1:])  # credentials by their shape alone (vendor prefixes, keys, JWTs), not key blocks
_KEY_VALUE = re.compile(
    r"(?P<key>\b[\w.-]*?(?P<word>password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|auth))(?P<sep>[\"']?[ \t]*[:=][ \t]*|[ \t]+(?=[\"']))"
    r"(?P<q>[\"']?)(?P<value>[^\s\"'`,;{}\[\]]+)",
    re.I,
)
_URL = re.compile(r"(?P<prefix>\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)(?P<value>[^\s@/]+)(?=@)", re.I)
_PLACEHOLDER = re.compile(r"^(?:<.*>|\$.*|\{\{.*\}\}|%.*%|\*+|x{3,}|\.{3}|changeme|redacted|\[redacted\]|null|none"
                          r"|true|false|required|optional|string|example|yourpassword|password)$", re.I)
_PATH = re.compile(r"^(?:/|\./|~/|file:|[\w.-]+\.(?:key|pem|crt|p12|json|ya?ml|txt)$)")
_WORD = re.compile(r"\w+")


def _value_is_secret(m: re.Match[str]) -> bool:
    word, sep, value = m.group("word").lower(), m.group("sep"), m.group("value")
    flag = m.string[max(0, m.start() - 2):m.start()] == "--"
    if value == MARKER or _PLACEHOLDER.match(value) or _PATH.match(value) or value.startswith("-") or "(" in value:
        return False
    if not any(c in sep for c in ":=") and not (flag or word.startswith("pass")):
        return False  # `secret "name" not found` is prose; `--token 'x'` and SQL `PASSWORD 'x'` are not
    return len(value) >= (3 if word.startswith("pass") else 8)


def redact(text: str, known: Sequence[str] = ()) -> tuple[str, int]:
    """The text with known secret values and credential-shaped strings replaced by [redacted], and how many."""
    count = 0
    for value in sorted({k for k in known if k and len(k) >= MIN_KNOWN_CHARS}, key=len, reverse=True):
        count += text.count(value)
        text = text.replace(value, MARKER)
    for pattern in _WHOLE:
        text, n = pattern.subn(MARKER, text)
        count += n

    def keep_key(m: re.Match[str]) -> str:
        nonlocal count
        if not _value_is_secret(m):
            return m.group()
        count += 1
        return m.group()[: m.start("value") - m.start()] + MARKER

    text = _KEY_VALUE.sub(keep_key, text)

    def keep_user(m: re.Match[str]) -> str:
        nonlocal count
        if _PLACEHOLDER.match(m.group("value")) or m.group("value") == MARKER:
            return m.group()
        count += 1
        return m.group("prefix") + MARKER

    return _URL.sub(keep_user, text), count


def leaks_prompt(answer_text: str, system_prompt: str, *, shingle: int = 12) -> bool:
    """True when the answer repeats the system prompt: any run of `shingle` consecutive words (case-insensitive)."""
    prompt = _WORD.findall(system_prompt.lower())
    answer = _WORD.findall(answer_text.lower())
    n = min(shingle, len(prompt))
    if n < 6 or len(answer) < n:
        return False
    seen = {tuple(answer[i:i + n]) for i in range(len(answer) - n + 1)}
    return any(tuple(prompt[i:i + n]) in seen for i in range(len(prompt) - n + 1))
