"""Shell command lines parsed into simple commands: bashlex first, shlex when bashlex gives up.

Quoted strings stay arguments (`echo "rm -rf /"` is one echo), comments are dropped, command
substitutions, pipelines, lists, loops and function bodies are walked. Literal input (heredocs,
here-strings, `echo ... |`) is kept on the command that reads it, so wrappers can look inside.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import Any

import bashlex

from guardrails.invocation import Invocation

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
    """The program a command word runs: its basename (/usr/bin/rm and \\rm are rm)."""
    return word.lstrip("\\").rsplit("/", 1)[-1]


def parse_shell(text: str) -> list[Invocation]:
    """Every simple command in a shell snippet, outer ones first."""
    if len(text) <= MAX_BASHLEX_CHARS:
        try:
            out: list[Invocation] = []
            for node in bashlex.parse(text):
                _walk(node, out)
            return out
        except Exception:  # bashlex raises many kinds of errors on input it does not support
            pass
    return _from_shlex(text)


# ---- bashlex ---------------------------------------------------------------------------------

def _children(node: Any) -> list[Any]:
    kids = list(getattr(node, "parts", None) or []) + list(getattr(node, "list", None) or [])
    command = getattr(node, "command", None)
    return kids + ([command] if command is not None and hasattr(command, "kind") else [])


def _walk(node: Any, out: list[Invocation]) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        out.extend(_command(node))
    elif kind == "pipeline":
        _pipeline(node, out)
    elif kind == "function":
        _function(node, out)
    elif kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, out)
    else:
        for child in _children(node):
            _walk(child, out)


def _substitutions(node: Any, out: list[Invocation]) -> None:
    for child in getattr(node, "parts", None) or []:
        if getattr(child, "kind", "") in ("commandsubstitution", "processsubstitution"):
            _walk(child.command, out)
        else:
            _substitutions(child, out)


def _heredoc_body(value: str) -> str:
    return value.rsplit("\n", 1)[0] if "\n" in value else ""


def _command(node: Any) -> list[Invocation]:
    words: list[str] = []
    redirects: list[str] = []
    stdin: str | None = None
    nested: list[Invocation] = []
    for part in node.parts:
        if part.kind == "word":
            words.append(part.word)
            _substitutions(part, nested)
        elif part.kind == "assignment":
            _substitutions(part, nested)
        elif part.kind == "redirect":
            target = part.output if hasattr(part.output, "kind") else None
            if getattr(part, "heredoc", None) is not None:
                stdin = _heredoc_body(part.heredoc.value)
            elif part.type == "<<<" and target is not None:
                stdin = target.word
            elif part.type in _OUTPUT_REDIRECTS and target is not None:
                redirects.append(target.word)
            if target is not None:
                _substitutions(target, nested)
    head = Invocation(program=program_name(words[0]) if words else "", args=tuple(words[1:]),
                      redirects=tuple(redirects), stdin=stdin)
    return [head, *nested]


def piped_text(producer: Invocation) -> str | None:
    """The literal text a command writes to a pipe, when it is knowable (echo, printf, cat <<EOF)."""
    if producer.program in ("echo", "printf"):
        words = [a for a in producer.args if not re.fullmatch(r"-[neE]+", a)]
        return " ".join(words).replace("\\n", "\n")
    if producer.program == "cat" and producer.stdin is not None and not producer.args:
        return producer.stdin
    return None


def _pipeline(node: Any, out: list[Invocation]) -> None:
    literal: str | None = None
    for element in node.parts:
        if element.kind == "pipe":
            continue
        found: list[Invocation] = []
        _walk(element, found)
        if found and literal is not None and element.kind == "command" and found[0].stdin is None:
            found[0] = replace(found[0], stdin=literal)
        literal = piped_text(found[0]) if found and element.kind == "command" else None
        out.extend(found)


def _function(node: Any, out: list[Invocation]) -> None:
    name = node.name.word
    body: list[Invocation] = []
    _walk(node.body, body)
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


def _simple(words: list[str], stdin: str | None) -> Invocation | None:
    while words and words[0] in _KEYWORDS:
        words = words[1:]
    args, redirects, i = [], [], 0
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
                      stdin=stdin if has_heredoc else None)


def _from_shlex(text: str) -> list[Invocation]:
    out: list[Invocation] = []
    for line, body in logical_lines(text):
        if _FORK_BOMB.search(re.sub(r"\s+", "", line)):
            out.append(Invocation(program=":", detector="fork_bomb"))
        words: list[str] = []
        for token in _tokens(line) + [";"]:
            if token in _OPERATORS:
                inv = _simple(words, body)
                if inv is not None:
                    out.append(inv)
                words = []
            else:
                words.append(token)
    return out
