"""Tool calls that a model wrote into its message text instead of the API's tool_calls field.

Small local models often do: a bare `{"name": "hybrid_search", "arguments": {...}}`, the same in a
```json fence or `<tool_call>` tags, several objects or a list of them, and sometimes every brace
doubled (`{{"name": ...}}`, copied from a template that escapes braces). This module finds them;
the agent decides what they mean."""

from __future__ import annotations

import json
import re
from typing import Any

from bot.llm import ToolCall

_FENCE = re.compile(r"```(?:json|tool_call|tool)?\s*(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def text_tool_calls(content: str) -> list[ToolCall]:
    """The tool calls written in a reply's text (none when it holds an answer or prose)."""
    text = content.strip()
    if not text:
        return []
    pieces = [m.group(1) for m in _TAGGED.finditer(text)] or [m.group(1) for m in _FENCE.finditer(text)] or [text]
    calls: list[ToolCall] = []
    for piece in pieces:
        for candidate in (piece, piece.replace("{{", "{").replace("}}", "}")):  # doubled braces, read as single
            found = [c for value in json_values(candidate) for c in (value if isinstance(value, list) else [value])]
            found_calls = [call for item in found if (call := _as_call(item, len(calls))) is not None]
            if found_calls:
                calls += [c.model_copy(update={"id": f"text_call_{len(calls) + n}"}) for n, c in enumerate(found_calls)]
                break
    return calls


def json_values(text: str) -> list[Any]:
    """Every JSON object or array that decodes in the text, outermost first; where an outer one is
    broken, the whole ones inside it."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    i = 0
    while i < len(text):
        start = min((p for p in (text.find("{", i), text.find("[", i)) if p >= 0), default=-1)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        out.append(value)
        i = end
    return out


def _as_call(item: Any, n: int) -> ToolCall | None:
    """A {"name": ..., "arguments": {...}} object (also "parameters", or OpenAI's "function" wrapper)."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name or ("summary" in item or "steps" in item):
        return None
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        raw = args
    else:
        raw = json.dumps(args if isinstance(args, dict) else {})
    return ToolCall(id=f"text_call_{n}", name=name.strip(), arguments=raw)
