"""Prompt injection in retrieved text: instruction-like phrases, fake roles and tool calls, hidden characters.

`scan` reports what it finds; `neutralise` removes invisible characters and replaces each
offending span with a visible marker, leaving the rest of the text intact. Offsets of
`invisible` hits refer to the input; all others to the text with invisible characters removed
(that is the text the phrases are searched in, so `ig<ZWSP>nore previous instructions` is caught).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

HitKind = Literal["invisible", "instruction", "role-marker", "tool-call"]
MARKERS: dict[str, str] = {
    "instruction": "[removed: instruction-like text]",
    "role-marker": "[removed: role marker]",
    "tool-call": "[removed: tool-call-like text]",
}
_INVISIBLE = re.compile(  # soft hyphen, zero-width, bidi controls, word joiners, BOM, Unicode tags
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]+")
_END = r"[^\n]*?(?:[.!?](?=\s|$)|$)"  # the rest of the sentence or line
_INSTRUCTIONS = [
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|foregoing|system|original|initial|developer)\s+"
    r"(?:instructions?|prompts?|rules|directions|directives|context|messages?|guidelines|guardrails)",
    r"\bdisregard\s+(?:everything|all|anything|the)\s*(?:above|before|previously|said)",
    r"\bignore\s+(?:everything|all)\s+(?:above|before|previously)",
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(?:safety|security|guard\s*rails?|content|usual)\s+(?:rules|guidelines|polic(?:y|ies)|restrictions|checks|"
    r"filters|instructions)",
    r"\bforget\s+(?:everything|all|anything)\s+(?:above|before|previously|so\s+far|(?:you\s+)?(?:were|have\s+been)\s+"
    r"told|said|else)",
    r"\byou\s+are\s+now\s+(?:a|an|the|my|in\s+developer|dan\b|no\s+longer|free|unrestricted|jailbroken|acting)",
    r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:are|will|must|should)|(?:only\s+)?(?:answer|reply|respond|output|say|"
    r"print|always|never|only))",
    # The same in the languages runbooks and chats are most often written in besides English.
    r"\b(?:ignorier(?:e|en\s+sie)|vergiss|vergessen\s+sie)\s+(?:alle\s+|die\s+|deine\s+|ihre\s+)*"
    r"(?:vorherigen|obigen|bisherigen|vorigen|früheren|system)?\s*(?:anweisungen|instruktionen|regeln|vorgaben)",
    r"\bvergiss\s+alles\s+(?:oben|vorher|bisher|davor|was)",
    r"\bab\s+(?:jetzt|sofort)\s+(?:antwortest|bist|sollst|musst|wirst|gibst)\s+du",
    r"\bignorez?\s+(?:toutes\s+)?(?:les\s+)?instructions\s+(?:précédentes|ci-dessus|antérieures)",
    r"\bignora\s+(?:todas\s+)?(?:las\s+)?instrucciones\s+(?:anteriores|previas)",
    r"\b(?:new|updated|real)\s+(?:system\s+)?instructions\s*:",
    r"\bpretend\s+(?:to\s+be|you\s+are)",
    r"\b(?:call|invoke|run|use|execute)\s+(?:the\s+)?`?\w+`?\s+(?:tool\s+|function\s+)?(?:on|for|against)\s+"
    r"(?:every|all|each)\s+(?:the\s+)?(?:documents?|runbooks?|files?|chunks?|sources?|results?)",
    r"\b(?:print|reveal|show|output|repeat|display|leak|dump|disclose|tell\s+me|give\s+me|share|send)\s+"
    r"(?:me\s+|us\s+)?(?:your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|initial\s+|exact\s+)*"
    r"(?:system\s+prompt|system\s+message|hidden\s+instructions|initial\s+prompt|instructions\s+above|prompt)",
]
_INSTRUCTION = re.compile("(?:" + "|".join(_INSTRUCTIONS) + ")" + _END, re.I | re.M)
_ROLE = re.compile(
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id)\|>"
    r"(?:\s*(?:system|assistant|user|developer|tool)\b)?(?:<\|end_header_id\|>)?"
    r"|\[/?INST\]|<</?SYS>>"
    r"|^[ \t]*#{1,6}[ \t]*(?:system|assistant|developer|instructions?)[ \t]*:"
    # A role label in running text that goes on to give orders ("System: new rules follow.").
    r"|\b(?:system|assistant|developer)(?:\s+(?:message|prompt))?[ \t]*:[ \t]*(?=(?:new|updated|the\s+following|"
    r"ignore|disregard|forget|you\s|from\s+now|rules|instructions|override|always|never|only)\b)",
    re.I | re.M,
)
_TOOL_KEYS = ({"tool_calls"}, {"function_call"}, {"tool_call"}, {"name", "arguments"}, {"name", "parameters"},
              {"tool", "arguments"}, {"recipient_name", "parameters"})


@dataclass(frozen=True)
class InjectionHit:
    """Something in a text that tries to steer the model, or hides characters from a reader."""

    kind: HitKind
    start: int
    end: int
    text: str  # the matched text; for invisible tag characters, the ASCII they spell


def _invisible(text: str) -> list[InjectionHit]:
    hits = []
    for m in _INVISIBLE.finditer(text):
        tags = "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E)
        hits.append(InjectionHit("invisible", m.start(), m.end(), tags or m.group().encode("unicode_escape").decode()))
    return hits


def _tool_calls(text: str) -> list[InjectionHit]:
    """JSON objects shaped like tool calls, found with a real JSON decoder."""
    decoder, hits, i = json.JSONDecoder(), [], 0
    while (i := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(value, dict) and any(keys <= value.keys() for keys in _TOOL_KEYS):
            hits.append(InjectionHit("tool-call", i, end, text[i:end]))
            i = end
        else:
            i += 1
    return hits


def _visible_hits(text: str) -> list[InjectionHit]:
    hits = [InjectionHit("instruction", m.start(), m.end(), m.group()) for m in _INSTRUCTION.finditer(text)]
    hits += [InjectionHit("role-marker", m.start(), m.end(), m.group()) for m in _ROLE.finditer(text)]
    hits += _tool_calls(text)
    return sorted(hits, key=lambda h: (h.start, -h.end))


def strip_invisible(text: str) -> str:
    """The text without zero-width, bidi-override and Unicode tag characters."""
    return _INVISIBLE.sub("", text)


def scan(text: str) -> list[InjectionHit]:
    """Every injection-like thing in a text: invisible characters first, then phrases, roles, tool calls."""
    return _invisible(text) + _visible_hits(strip_invisible(text))


def neutralise(text: str) -> tuple[str, list[InjectionHit]]:
    """The text with invisible characters removed and each offending span replaced by a marker."""
    invisible = _invisible(text)
    clean = strip_invisible(text)
    visible = _visible_hits(clean)
    out, last = [], 0
    for hit in visible:
        if hit.start < last:  # overlaps a span already replaced: swallow its tail too
            last = max(last, hit.end)
            continue
        out += [clean[last:hit.start], MARKERS[hit.kind]]
        last = hit.end
    out.append(clean[last:])
    return "".join(out), invisible + visible
