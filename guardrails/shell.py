"""Shell command lines parsed into simple commands: bashlex first, shlex when bashlex gives up.

Quoted strings stay arguments (`echo "rm -rf /"` is one echo), comments are dropped, command
substitutions, pipelines, lists, loops and function bodies are walked. Words are resolved as far as
they can be statically (guardrails.resolve): quotes, escapes, variables set earlier on the line,
`$(echo ...)`, and the directory an earlier `cd` moved to. What a command reads from a pipe is kept
on it (guardrails.streams): the literal text of heredocs, here-strings and `echo ... |`, and where
the input comes from (fetched, decoded, a file, another program), so wrappers can look inside.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import replace
from typing import Any

import bashlex

from guardrails.invocation import Invocation
from guardrails.resolve import Env, expand_value, expand_word
from guardrails.streams import Stream, fetched_file, is_fetch, literal_output, output_of, verifies

MAX_BASHLEX_CHARS = 20_000
_OUTPUT_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
             "esac", "!", "{", "}", "[[", "]]", "time", "function"}
_OPERATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "((", "))"}
_PUNCTUATION = re.compile(r"[();<>|&]+")
_OPERATOR_RUN = re.compile(r"&>>|<<<|<<-|&&|\|\||;;|\|&|>>|>&|<<|&>|>\||[();<>|&]")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1")
_FORK_BOMB = re.compile(r"([\w:.]+)\(\)\{\1\|\1&?\};?\1")


def program_name(word: str) -> str:
    """The program a command word runs: its basename (/usr/bin/rm and \\rm are rm); unresolved words as written."""
    if word.startswith(("$", "<(", "`")) or "$(" in word:
        return word
    return word.lstrip("\\").rsplit("/", 1)[-1]


def parse_shell(text: str) -> list[Invocation]:
    """Every simple command in a shell snippet, outer ones first, its words resolved as far as statically known."""
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
    return _from_shlex(text)


# ---- bashlex ---------------------------------------------------------------------------------

def _children(node: Any) -> list[Any]:
    kids = list(getattr(node, "parts", None) or []) + list(getattr(node, "list", None) or [])
    command = getattr(node, "command", None)
    return kids + ([command] if command is not None and hasattr(command, "kind") else [])


def _heredoc_body(value: str) -> str:
    return value.rsplit("\n", 1)[0] if "\n" in value else ""


_ASSIGNING = frozenset({"export", "declare", "local", "readonly", "typeset"})


class _Walker:
    """Walks one bashlex tree in order, keeping the variables and directory the line has set so far."""

    def __init__(self, text: str, env: Env | None = None, depth: int = 0) -> None:
        self.text, self.env, self.depth = text, env or Env(), depth

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
        else:
            if kind == "for":  # the loop variable takes several values: unknown
                name = next((p.word for p in node.parts if getattr(p, "kind", "") == "word"), None)
                if name:
                    self.env.values[name] = None
            for child in _children(node):
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
        walker = _Walker(inner, Env(dict(self.env.values), self.env.cwd), self.depth + 1)
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
            if part.type == "<<<":
                inv.update(stdin=word, stdin_from="literal")
            elif part.type == "<":
                inv.update(stdin_from="remote" if any(is_fetch(i) for i in found) else "file")
            elif part.type in _OUTPUT_REDIRECTS:
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
        elif program == "alias":
            for arg in args:
                name, eq, value = arg.partition("=")
                if eq:
                    self.env.aliases[name] = value
        elif program in ("unset", "read", "mapfile", "readarray"):
            for name in args:
                self.env.values[name] = None

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
            text, env = self.env.functions[words[0]], replace(self.env, values={**self.env.values, **positional})
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
        target = fetched_file(inv)
        if target:
            self.env.fetched.add(posixpath.basename(target))
        elif verifies(inv):
            self.env.fetched.clear()

    def _pipeline(self, node: Any, out: list[Invocation]) -> None:
        previous: Stream | None = None
        for element in node.parts:
            if element.kind == "pipe":
                continue
            found: list[Invocation] = []
            self.walk(element, found)
            simple = bool(found) and element.kind == "command"
            if simple and previous is not None and found[0].stdin_from is None:
                found[0] = replace(found[0], stdin=previous.text, stdin_from=previous.origin)
            previous = output_of(found[0]) if simple else Stream(None, "program")
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


# ---- shlex fallback --------------------------------------------------------------------------

def logical_lines(text: str) -> list[tuple[str, str | None]]:
    """Lines with backslash continuations and trailing pipes joined, each with its heredoc body."""
    lines = text.splitlines()
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        while i < len(lines) and re.search(r"(\\|\||&&|\|\|)\s*$", line):
            line = f"{line}\n{lines[i]}"
            i += 1
        body = None
        match = _HEREDOC.search(line)
        if match and "<<<" not in line:
            end = next((j for j in range(i, len(lines)) if lines[j].strip() == match.group(2)), len(lines))
            body, i = "\n".join(lines[i:end]), end + 1
        out.append((line, body))
    return out


def _split_punctuation(token: str) -> list[str]:
    """shlex glues runs of punctuation (`));`, `&>>`): split them into known operators."""
    if not _PUNCTUATION.fullmatch(token):
        return [token]
    return _OPERATOR_RUN.findall(token)


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line.replace("\\\n", " "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return [part for token in lexer for part in _split_punctuation(token)]
    except ValueError:  # unbalanced quotes
        return line.split()


def _resolved(words: list[str], env: Env) -> list[str]:
    """Fallback words with known variables substituted (shlex has already removed the quotes)."""
    if words and all("=" in w and w.split("=", 1)[0].isidentifier() for w in words):
        for word in words:
            name, _, value = word.partition("=")
            env.values[name] = expand_value(value, env, lambda _: None)
        return []
    out: list[str] = []
    for word in words:
        out.extend(expand_word(word.replace("\\", "\\\\"), env, lambda _: None) if "$" in word else [word])
    return out


def _simple(words: list[str], stdin: str | None) -> Invocation | None:
    while words and words[0] in _KEYWORDS:
        words = words[1:]
    args: list[str] = []
    redirects: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _OUTPUT_REDIRECTS | {">&", "<", "<<", "<<-", "<<<"} and i + 1 < len(words):
            if word in _OUTPUT_REDIRECTS:
                redirects.append(words[i + 1])
            if args and args[-1].isdigit():
                args.pop()
            i += 2
            continue
        args.append(word)
        i += 1
    if not args and not redirects:
        return None
    program = program_name(args[0]) if args else ""
    has_heredoc = any(w.startswith("<<") and w != "<<<" for w in words)
    return Invocation(program=program, args=tuple(args[1:]), redirects=tuple(redirects),
                      stdin=stdin if has_heredoc else None, stdin_from="literal" if has_heredoc else None)


def _from_shlex(text: str) -> list[Invocation]:
    out: list[Invocation] = []
    env = Env()
    for line, body in logical_lines(text):
        if _FORK_BOMB.search(re.sub(r"\s+", "", line)):
            out.append(Invocation(program=":", detector="fork_bomb"))
        words: list[str] = []
        for token in _tokens(line) + [";"]:
            if token in _OPERATORS:
                inv = _simple(_resolved(words, env), body)
                if inv is not None:
                    out.append(inv)
                words = []
            else:
                words.append(token)
    return out
