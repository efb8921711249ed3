"""Static shell word expansion: what a word becomes when the line runs, as far as can be known without running it.

Quotes and backslash escapes are removed (`r''m`, `\\rm` and `"rm"` are rm), `$'\\x72m'` is decoded,
variables and arrays assigned earlier on the line are substituted (`RM=rm; $RM`, `t=(/a /b); "${t[@]}"`, one
field per element), and command substitutions are
replaced by their output when the caller can evaluate them (`$(echo rm)`). Unquoted substitutions are
split into fields (`CMD="rm -rf /"; $CMD` runs rm). Whatever cannot be known is kept as written
(`$DIR`, `${DIR:?}`, `$(date)`), so later checks still see a variable or a substitution there.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

Evaluator = Callable[[str], "str | None"]  # the output of a command substitution's text, or None
# Variables that name a program by convention; what they usually hold is harmless.
CONVENTIONS = {"EDITOR": "vi", "VISUAL": "vi", "PAGER": "less", "SHELL": "sh"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = re.compile(r"[0-9@*]")  # $1, $@: known inside a function called on the line
_ELEMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*]|[0-9]+)\]\}")  # ${name[@]}, ${name[0]}
_ALL_POSITIONAL = re.compile(r"\$@|\$\{@\}")  # "$@": the positional parameters, one field each
# One variable, as a shell (`$CMD`, `${CMD}`, `$1`, `$@`), cmd.exe (`%FIX%`) or PowerShell (`$env:FIX`) writes it.
_SIMPLE_PARAM = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\}|[@*]|\{[@*]\}"
                           r"|env:[A-Za-z_][A-Za-z0-9_]*)|%[A-Za-z_][A-Za-z0-9_]*%")
_POSITIONAL_PARAM = re.compile(r"\$(?:[0-9]|\{[0-9]+\})")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "v": "\v",
         "f": "\f", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_CODE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)", re.DOTALL)


@dataclass
class Env:
    """What the line has set so far: variables (None: value unknown), the directory after cd, downloads,
    functions and aliases."""

    values: dict[str, str | None] = field(default_factory=dict)
    cwd: str | None = None
    fetched: set[str] = field(default_factory=set)  # files downloaded earlier on the line, not yet verified
    functions: dict[str, str] = field(default_factory=dict)  # name() { body }: the body's text
    aliases: dict[str, str] = field(default_factory=dict)  # alias name="text"
    arrays: dict[str, list[str] | None] = field(default_factory=dict)  # name=(a b c); None: elements unknown

    def lookup(self, name: str) -> str | None:
        """The variable's value when it is known (an array's first element)."""
        if name in self.values:
            return self.values[name]
        if name in self.arrays:
            elements = self.arrays[name]
            return elements[0] if elements else None
        return CONVENTIONS.get(name)

    def assign_array(self, name: str, elements: list[str] | None, append: bool = False) -> None:
        """Follow `name=(a b c)` (or `name+=(...)`); an element left unresolved makes the array unknown."""
        if elements is not None and any("$" in e or "`" in e for e in elements):
            elements = None
        if append:
            before = self.arrays.get(name, [])
            elements = None if before is None or elements is None else before + elements
        self.values.pop(name, None)
        self.arrays[name] = elements

    def change_dir(self, target: str | None) -> None:
        """Follow `cd target` (None or `-`: the directory is no longer known)."""
        if target is None or target == "-" or "$" in target or "`" in target:
            self.cwd = None
        elif target.startswith(("/", "~")):
            self.cwd = posixpath.normpath(target) if target.startswith("/") else target
        else:
            self.cwd = posixpath.normpath(posixpath.join(self.cwd, target)) if self.cwd else None


def is_parameter(word: str, positional: bool = False) -> bool:
    """Whether a word is exactly one unresolved variable (`$CMD`, `${CMD}`, `$@`, `%CMD%`, `$env:CMD`): its
    content is unknown. With positional, `$1` too: code handed over as an argument (`sh -c "$1"`); as a
    program name it is mostly a prepared statement's `($1)` in pasted SQL."""
    return bool(_SIMPLE_PARAM.fullmatch(word) or (positional and _POSITIONAL_PARAM.fullmatch(word)))


def closing(text: str, start: int, opening: str, closer: str) -> int:
    """Index just past the bracket that closes the one opened before `start` (quotes respected)."""
    depth, i, quote = 1, start, ""
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == opening:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def ansi_c(body: str) -> str:
    """The text of a $'...' string (\\n, \\x72, \\0155 and friends decoded)."""
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
        return _ANSI.get(code, "\\" + code)
    return _ANSI_CODE.sub(one, body)


class _Pieces:
    """Collects (text, split) pieces: split pieces are unquoted expansion results, subject to field splitting."""

    def __init__(self) -> None:
        self.items: list[tuple[str, bool]] = []

    def add(self, text: str, split: bool = False) -> None:
        self.items.append((text, split))

    def fields(self, ifs: str | None = None) -> list[str]:
        """The words the pieces make, unquoted expansions split on whitespace and the IFS characters."""
        out: list[str] = []
        current: str | None = None
        separators = re.compile("[" + re.escape(ifs or "") + r"\s]+")
        for text, split in self.items:
            if not split:
                current = (current or "") + text
                continue
            words = [w for w in separators.split(text) if w]
            if separators.match(text[:1]) and current is not None:
                out.append(current)
                current = None
            for n, word in enumerate(words):
                if n and current is not None:
                    out.append(current)
                    current = None
                current = (current or "") + word
            if separators.match(text[-1:]) and current is not None:
                out.append(current)
                current = None
        return out + ([current] if current is not None else [])


def _parameter(text: str, i: int, env: Env) -> tuple[str | None, int]:
    """The value of the $NAME or ${...} at i (None when unknown) and the index after it."""
    if text.startswith("${", i):
        end = closing(text, i + 2, "{", "}")
        inner = text[i + 2:end - 1]
        name = _NAME.match(inner) or _POSITIONAL.match(inner)
        if name is None:
            return None, end
        rest, value = inner[name.end():], env.lookup(name.group())
        if rest == "":
            return value, end
        if rest.startswith((":-", ":=", ":?", ":+")) and value:  # a known, non-empty value is used as is
            return (value if rest[1] != "+" else None), end
        return None, end
    name = _NAME.match(text, i + 1) or _POSITIONAL.match(text, i + 1)
    if name is None:
        return None, i + (2 if i + 1 < len(text) else 1)  # $?, $$ ...
    return env.lookup(name.group()), name.end()


def _dollar(text: str, i: int, env: Env, evaluate: Evaluator, quoted: bool, out: _Pieces) -> int:
    """Expand the $-construct at i into out; return the index after it."""
    if text.startswith("$'", i) and not quoted:
        end = i + 2
        while end < len(text) and text[end] != "'":
            end += 2 if text[end] == "\\" else 1
        out.add(ansi_c(text[i + 2:end]))
        return end + 1
    if text.startswith("$((", i):
        end = closing(text, i + 3, "(", ")")
        end = end + 1 if text[end:end + 1] == ")" else end
        out.add(text[i:end])
        return end
    if text.startswith("$(", i):
        end = closing(text, i + 2, "(", ")")
        value = evaluate(text[i + 2:end - 1])
        out.add(text[i:end] if value is None else value, split=value is not None and not quoted)
        return end
    element = _ELEMENT.match(text, i)
    if element and env.arrays.get(element.group(1)) is not None:
        return _array(env.arrays[element.group(1)] or [], element.group(2), quoted, out, element.end())
    every = _ALL_POSITIONAL.match(text, i)
    if every and env.arrays.get("@") is not None:
        return _array(env.arrays["@"] or [], "@", quoted, out, every.end())
    value, end = _parameter(text, i, env)
    out.add(text[i:end] if value is None else value, split=value is not None and not quoted)
    return end


def _array(values: list[str], index: str, quoted: bool, out: _Pieces, end: int) -> int:
    """Expand ${name[@]} (one field per element, even quoted), ${name[*]} or ${name[N]} into out; return end."""
    if index.isdigit():
        chosen = values[int(index):int(index) + 1]
        out.add(chosen[0] if chosen else "", split=not quoted)
    elif index == "*" and quoted:
        out.add(" ".join(values))
    else:
        for n, value in enumerate(values):
            if n:
                out.add(" ", split=True)  # a field boundary
            out.add(value, split=not quoted)
    return end


def _expand(text: str, env: Env, evaluate: Evaluator) -> _Pieces:
    out, i, quoted = _Pieces(), 0, False
    literal: list[str] = []

    def flush() -> None:
        if literal:
            out.add("".join(literal))
            literal.clear()

    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if not quoted or nxt in '$`"\\\n':
                literal.append("" if nxt == "\n" else nxt)
                i += 2
                continue
        if c == "'" and not quoted:
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            literal.append(text[i + 1:end])
            out.add("")  # '' still makes a (possibly empty) word
            i = end + 1
        elif c == '"':
            quoted = not quoted
            flush()
            out.add("")
            i += 1
        elif c == "$" and i + 1 < len(text):
            flush()
            i = _dollar(text, i, env, evaluate, quoted, out)
        elif c == "`":
            flush()
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end
            value = evaluate(text[i + 1:end])
            out.add(text[i:end + 1] if value is None else value, split=value is not None and not quoted)
            i = end + 1
        else:
            literal.append(c)
            i += 1
    flush()
    return out


def expand_word(raw: str, env: Env, evaluate: Evaluator) -> list[str]:
    """The fields a word becomes: quotes removed, known variables and substitutions expanded, then split."""
    return _expand(raw, env, evaluate).fields(env.values.get("IFS"))


def expand_value(raw: str, env: Env, evaluate: Evaluator) -> str | None:
    """An assignment's value (no field splitting), or None when any part of it is unknown."""
    value = "".join(text for text, _ in _expand(raw, env, evaluate).items)
    return None if "$" in value or "`" in value else value
