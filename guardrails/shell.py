"""Shell command lines parsed into simple commands: bashlex first, shlex when bashlex gives up.

Quoted strings stay arguments (`echo "rm -rf /"` is one echo), comments are dropped, command
substitutions, pipelines, lists, loops and function bodies are walked. Words are resolved as far as
they can be statically (guardrails.resolve): quotes, escapes, variables set earlier on the line,
`$(echo ...)`, arrays (`t=(/a /b)`, `set -- /a /b`), and the directory an earlier `cd` moved to. A loop over
known values (`for d in /a /b`, `printf '%s\n' /a | while read d`) walks its body once per value.
What a command reads from a pipe is kept on it (guardrails.streams): the literal text of heredocs,
here-strings and `echo ... |`, where the input comes from (fetched, decoded, a file, another program),
and which program wrote it, so wrappers can look inside. The shlex reader is guardrails.fallback.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import replace
from typing import Any

import bashlex

from guardrails.fallback import ARRAY, OUTPUT_REDIRECTS, from_shlex, logical_lines
from guardrails.invocation import Invocation, program_name
from guardrails.resolve import Env, closing, expand_value, expand_word
from guardrails.streams import CLONED, Stream, cloned_dir, decodes, fetched_file, is_fetch, literal_output, output_of, verifies

MAX_BASHLEX_CHARS = 20_000
_ARRAY_START = re.compile(r"(?:(?:declare|local|typeset|readonly|export)\s+(?:-[A-Za-z]+\s+)*)?"
                          r"([A-Za-z_][A-Za-z0-9_]*\+?)=\(")
MAX_LOOP_VALUES = 16


def _arrays_as_commands(text: str) -> str:
    """Array assignments (`t=(/a "b c")`, `declare -a t=(...)`) rewritten as `__array__ t /a "b c"`."""
    if "=(" not in text:
        return text
    out, i, quote = [], 0, ""
    while i < len(text):
        c = text[i]
        start = _ARRAY_START.match(text, i) if not quote and (i == 0 or text[i - 1] in " \t\n;&|(") else None
        if start:
            end = closing(text, start.end(), "(", ")")
            elements = text[start.end():end - 1]
            elements = "" if elements.lstrip().startswith("[") else elements  # an associative array: unknown
            out.append(f"{ARRAY} {start.group(1)} {elements.replace(chr(10), ' ')}")
            i = end
            continue
        if c == "\\" and quote != "'":
            out.append(text[i:i + 2])
            i += 2
            continue
        quote = ("" if c == quote else quote) if quote else (c if c in "'\"" else "")
        out.append(c)
        i += 1
    return "".join(out)


def parse_shell(text: str) -> list[Invocation]:
    """Every simple command in a shell snippet, outer ones first, its words resolved as far as statically known."""
    text = _arrays_as_commands(text)
    if len(text) <= MAX_BASHLEX_CHARS:
        try:
            nodes = bashlex.parse(text)
        except Exception:  # bashlex raises many kinds of errors on input it does not support
            nodes = None
        if nodes is not None:
            walker = _Walker(text)
            out: list[Invocation] = []
            for node in nodes:
                walker.walk(node, out)
            return out
    return from_shlex(text)


# ---- bashlex ---------------------------------------------------------------------------------

def _children(node: Any) -> list[Any]:
    kids = list(getattr(node, "parts", None) or []) + list(getattr(node, "list", None) or [])
    command = getattr(node, "command", None)
    return kids + ([command] if command is not None and hasattr(command, "kind") else [])


def _heredoc_body(value: str) -> str:
    return value.rsplit("\n", 1)[0] if "\n" in value else ""


_ASSIGNING = frozenset({"export", "declare", "local", "readonly", "typeset"})
_READ_VALUES = frozenset({"-d", "-p", "-n", "-N", "-t", "-u", "-i"})


def _read_names(args: tuple[str, ...]) -> list[str]:
    """The variables `read` sets (none for read -a, whose one name is an array)."""
    names: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "-a":
            return []
        if token in _READ_VALUES:
            i += 2
            continue
        if not token.startswith("-"):
            names.append(token)
        i += 1
    return names


class _Walker:
    """Walks one bashlex tree in order, keeping the variables and directory the line has set so far."""

    def __init__(self, text: str, env: Env | None = None, depth: int = 0) -> None:
        self.text, self.env, self.depth = text, env or Env(), depth
        self.loop_input: str | None = None  # literal text piped or redirected into the next compound command

    def walk(self, node: Any, out: list[Invocation]) -> None:
        """Append the invocations under a node to out."""
        kind = getattr(node, "kind", "")
        if kind == "command":
            out.extend(self._command(node))
        elif kind == "pipeline":
            self._pipeline(node, out)
        elif kind == "function":
            self._function(node, out)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command, out)
        elif kind == "for":
            self._for(node, out)
        elif kind in ("while", "until"):
            self._while(node, out)
        elif kind == "compound" and getattr(node, "redirects", None):
            self._redirected_compound(node, out)
        else:
            for child in _children(node):
                self.walk(child, out)

    def _for(self, node: Any, out: list[Invocation]) -> None:
        """A for loop: its body once per value when the values are known words, else once with the variable unknown."""
        parts = list(node.parts)
        words = [p for p in parts if getattr(p, "kind", "") == "word"]
        keywords = [getattr(p, "word", "") for p in parts]
        body = parts[keywords.index("do") + 1:] if "do" in keywords else parts
        name = words[0].word if words else None
        values: list[str] | None = None
        if name and "in" in keywords:
            listed = [p for p in parts[keywords.index("in") + 1:] if getattr(p, "kind", "") == "word"]
            values = [v for p in listed for v in self._words(p)]
            for p in listed:
                self._substitutions(p, out)
            if len(values) > MAX_LOOP_VALUES or any("$" in v or "`" in v for v in values):
                values = None
        for value in values or [None]:
            if name:
                self.env.values[name] = value
            for child in body:
                self.walk(child, out)

    def _redirected_compound(self, node: Any, out: list[Invocation]) -> None:
        """`while read d; do ...; done <<< TEXT` (or a heredoc): the loop reads the literal text."""
        fields: dict[str, Any] = {"redirects": [], "stdin": None, "stdin_from": None}
        for redirect in node.redirects:
            self._redirect(redirect, fields, out)
        if fields["stdin_from"] == "literal":
            self.loop_input = fields["stdin"]
        for child in _children(node):
            self.walk(child, out)
        self.loop_input = None

    def _while(self, node: Any, out: list[Invocation]) -> None:
        """`... | while read VAR; do BODY; done`: BODY once per line of known input, VAR bound; else walked once."""
        parts = list(node.parts)
        keywords = [getattr(p, "word", "") for p in parts]
        condition = [p for p in parts[:keywords.index("do")] if getattr(p, "kind", "") != "reservedword"] \
            if "do" in keywords else []
        body = parts[keywords.index("do") + 1:] if "do" in keywords else parts
        text, self.loop_input = self.loop_input, None
        tested: list[Invocation] = []
        for child in condition:
            self.walk(child, tested)
        names = _read_names(tested[0].args) if len(tested) == 1 and tested[0].program == "read" else []
        if text is None or not names:
            out.extend(tested)
            for child in body:
                self.walk(child, out)
            return
        for line in [line for line in text.splitlines() if line.strip()][:MAX_LOOP_VALUES]:
            words = line.split(None, len(names) - 1)
            self.env.values.update({name: (words[n] if n < len(words) else "") for n, name in enumerate(names)})
            for child in body:
                self.walk(child, out)

    def evaluate(self, inner: str) -> str | None:
        """The output of a command substitution when it is echo or printf of known words."""
        if self.depth >= 4:
            return None
        try:
            nodes = bashlex.parse(inner)
        except Exception:  # not parseable: unknown output
            return None
        found: list[Invocation] = []
        walker = _Walker(inner, Env(dict(self.env.values), self.env.cwd, arrays=dict(self.env.arrays)), self.depth + 1)
        for node in nodes:
            walker.walk(node, found)
        if len(found) != 1 or found[0].redirects:
            return None
        text = literal_output(found[0])
        return None if text is None else text.rstrip("\n")

    def _words(self, part: Any) -> list[str]:
        start, end = part.pos
        return expand_word(self.text[start:end], self.env, self.evaluate)

    def _substitutions(self, node: Any, out: list[Invocation]) -> None:
        for child in getattr(node, "parts", None) or []:
            if getattr(child, "kind", "") in ("commandsubstitution", "processsubstitution"):
                self.walk(child.command, out)
            else:
                self._substitutions(child, out)

    def _assign(self, raw: str) -> None:
        name, _, value = raw.partition("=")
        if name.isidentifier():
            self.env.values[name] = expand_value(value, self.env, self.evaluate)

    def _redirect(self, part: Any, inv: dict[str, Any], nested: list[Invocation]) -> None:
        target = part.output if hasattr(part.output, "kind") else None
        if getattr(part, "heredoc", None) is not None:
            inv.update(stdin=_heredoc_body(part.heredoc.value), stdin_from="literal")
        elif target is not None:
            word = " ".join(self._words(target))
            found: list[Invocation] = []
            self._substitutions(target, found)
            nested.extend(found)
            if part.type == "<<<":  # a here-string of fetched or decoded text: its origin, not its words
                origin = "remote" if any(is_fetch(i) for i in found) else (
                    "decoded" if any(decodes(i) for i in found) else "literal")
                inv.update(stdin=word, stdin_from=origin)
            elif part.type == "<":
                inv.update(stdin_from="remote" if any(is_fetch(i) for i in found) else "file")
            elif part.type in OUTPUT_REDIRECTS or part.type == ">&":  # >& FILE (not 2>&1: no word)
                inv["redirects"].append(word)

    def _builtin(self, program: str, args: list[str]) -> None:
        """Follow what a builtin does to the line's state: export X=1, cd DIR, unset X, read X."""
        if program in _ASSIGNING:
            for arg in args:
                name, eq, value = arg.partition("=")
                if eq and name.isidentifier():
                    self.env.values[name] = None if "$" in value or "`" in value else value
        elif program in ("cd", "pushd"):
            operands = [a for a in args if not a.startswith("-") or a == "-"]
            self.env.change_dir(operands[0] if operands else "~")
            into = posixpath.basename((operands[0] if operands else "").rstrip("/"))
            if into and CLONED + into in self.env.fetched:
                self.env.fetched.add(CLONED + ".")  # the working directory is the clone: what runs here is its code
        elif program == "alias":
            for arg in args:
                name, eq, value = arg.partition("=")
                if eq:
                    self.env.aliases[name] = value
        elif program in ("unset", "read", "mapfile", "readarray"):
            for name in args:
                self.env.values[name] = None
                self.env.arrays.pop(name, None)
        elif program == "set" and "--" in args:  # set -- a b: the positional parameters
            values = args[args.index("--") + 1:]
            self.env.values.update({str(n): v for n, v in enumerate(values[:9], start=1)})
            self.env.assign_array("@", list(values))
        elif program == ARRAY and args:
            self.env.assign_array(args[0].rstrip("+"), list(args[1:]), append=args[0].endswith("+"))

    def _command(self, node: Any) -> list[Invocation]:
        words: list[str] = []
        assignments: list[str] = []
        fields: dict[str, Any] = {"redirects": [], "stdin": None, "stdin_from": None}
        nested: list[Invocation] = []
        for part in node.parts:
            if part.kind == "word":
                words.extend(self._words(part))
                self._substitutions(part, nested)
            elif part.kind == "assignment":
                assignments.append(self.text[part.pos[0]:part.pos[1]])
                self._substitutions(part, nested)
            elif part.kind == "redirect":
                self._redirect(part, fields, nested)
        if not words:
            for raw in assignments:
                self._assign(raw)
        program = program_name(words[0]) if words else ""
        self._builtin(program, words[1:])
        if program == ARRAY:
            return nested
        called = self._call(words)
        if called is not None:
            return [*called, *nested]
        head = Invocation(program=program, args=tuple(words[1:]), redirects=tuple(fields["redirects"]),
                          stdin=fields["stdin"], stdin_from=fields["stdin_from"], cwd=self.env.cwd,
                          fetched=frozenset(self.env.fetched))
        self._downloads(head)
        return [head, *nested]

    def _call(self, words: list[str]) -> list[Invocation] | None:
        """What calling a function or alias defined earlier on the line runs (its body, $1... bound); else None."""
        if not words or self.depth >= 4:
            return None
        quoted = " ".join(shlex.quote(w) for w in words[1:])
        if words[0] in self.env.aliases:
            text, env = f"{self.env.aliases[words[0]]} {quoted}", self.env
        elif words[0] in self.env.functions:
            positional = {str(n): w for n, w in enumerate(words[1:10], start=1)} | {"@": " ".join(words[1:])}
            text, env = self.env.functions[words[0]], replace(self.env, values={**self.env.values, **positional},
                                                              arrays={**self.env.arrays, "@": list(words[1:])})
        else:
            return None
        try:
            nodes = bashlex.parse(text)
        except Exception:  # not parseable: read the call as an ordinary command
            return None
        found: list[Invocation] = []
        walker = _Walker(text, replace(env, aliases={k: v for k, v in env.aliases.items() if k != words[0]}),
                         self.depth + 1)
        for node in nodes:
            walker.walk(node, found)
        return found

    def _downloads(self, inv: Invocation) -> None:
        """Remember files a download wrote; a checksum or signature check vouches for them."""
        target, clone = fetched_file(inv), cloned_dir(inv)
        unpacked = inv.program in ("tar", "unzip", "bsdtar", "7z") and any(
            posixpath.basename(a) in self.env.fetched for a in inv.args if not a.startswith("-"))
        if target:
            self.env.fetched.add(posixpath.basename(target))
        elif unpacked:  # wget fix.tar.gz && tar xzf fix.tar.gz && cd fix && sudo ./install.sh: what it unpacked
            self.env.fetched.add(UNPACKED)
        elif clone:
            self.env.fetched.add(CLONED + clone)
        elif verifies(inv):
            self.env.fetched.clear()

    def _pipeline(self, node: Any, out: list[Invocation]) -> None:
        previous: Stream | None = None
        feed: tuple[str, ...] = ()  # the command writing to the pipe, when its output is another program's
        source: tuple[str, ...] = ()  # the command at the head of the pipe, through filters
        for element in node.parts:
            if element.kind == "pipe":
                continue
            found: list[Invocation] = []
            if element.kind == "compound" and previous is not None and previous.origin == "literal":
                self.loop_input = previous.text  # printf ... | while read d; do ...; done
            self.walk(element, found)
            self.loop_input = None
            simple = bool(found) and element.kind == "command"
            if simple and previous is not None and found[0].stdin_from is None:
                found[0] = replace(found[0], stdin=previous.text, stdin_from=previous.origin,
                                   feed=feed if previous.origin in ("program", "decoded") else (),
                                   source=source if previous.origin == "program" else ())
            previous = output_of(found[0]) if simple else _group_output(found)
            feed = (found[0].program, *found[0].args) if simple else ()
            source = (found[0].source or feed) if simple and found[0].program in PASS_THROUGH else feed
            out.extend(found)

    def _function(self, node: Any, out: list[Invocation]) -> None:
        name = node.name.word
        start, end = node.body.pos
        self.env.functions[name] = self.text[start:end]
        body: list[Invocation] = []
        self.walk(node.body, body)
        if sum(1 for inv in body if inv.program == name) >= 2:
            out.append(Invocation(program=name, detector="fork_bomb"))
        out.extend(body)


__all__ = ["MAX_BASHLEX_CHARS", "logical_lines", "parse_shell", "program_name"]  # program_name: re-exported


UNPACKED = "\0unpacked"  # in the fetched set: an archive downloaded on the line was unpacked; its ./files are its


# Programs that pass a listing on, narrowed or reshaped: what comes out is still the head command's objects.
PASS_THROUGH = frozenset({"grep", "egrep", "fgrep", "rg", "awk", "gawk", "sed", "cut", "sort", "uniq", "head", "tail",
                          "tr", "jq", "column"})


def _group_output(found: list[Invocation]) -> Stream:
    """What a group of commands writes to a pipe: `(echo select disk 1; echo clean) | diskpart` feeds
    the echoed lines, as literal as one echo's; anything else in the group is another program's."""
    texts = [literal_output(inv) if inv.program in ("echo", "printf") else None for inv in found]
    if found and all(t is not None for t in texts):
        return Stream("\n".join(t for t in texts if t is not None), "literal")
    return Stream(None, "program")
