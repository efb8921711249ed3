"""The shell reader used when bashlex gives up (or for very long text): shlex tokens, one simple command at a time.

Backslash continuations and trailing pipes join lines, heredoc bodies are kept, variables set on the line
are still substituted and arrays (`__array__ name ...`, see guardrails.shell) still recorded.
"""

from __future__ import annotations

import re
import shlex

from guardrails.invocation import Invocation, program_name
from guardrails.resolve import Env, expand_value, expand_word

ARRAY = "__array__"  # name=(a b c) is read as the pseudo-command `__array__ name a b c` (bashlex has no arrays)
OUTPUT_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
             "esac", "!", "{", "}", "[[", "]]", "time", "function"}
_OPERATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "((", "))"}
_PUNCTUATION = re.compile(r"[();<>|&]+")
_OPERATOR_RUN = re.compile(r"&>>|<<<|<<-|&&|\|\||;;|\|&|>>|>&|<<|&>|>\||[();<>|&]")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1")
_FORK_BOMB = re.compile(r"([\w:.]+)\(\)\{\1\|\1&?\};?\1")


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
        if word in OUTPUT_REDIRECTS | {">&", "<", "<<", "<<-", "<<<"} and i + 1 < len(words):
            if word in OUTPUT_REDIRECTS:
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


def from_shlex(text: str) -> list[Invocation]:
    """Every simple command of a snippet, read line by line with shlex."""
    out: list[Invocation] = []
    env = Env()
    for line, body in logical_lines(text):
        if _FORK_BOMB.search(re.sub(r"\s+", "", line)):
            out.append(Invocation(program=":", detector="fork_bomb"))
        words: list[str] = []
        for token in _tokens(line) + [";"]:
            if token in _OPERATORS:
                resolved = _resolved(words, env)
                if resolved[:1] == [ARRAY] and len(resolved) > 1:
                    env.assign_array(resolved[1].rstrip("+"), resolved[2:], append=resolved[1].endswith("+"))
                    words = []
                    continue
                inv = _simple(resolved, body)
                if inv is not None:
                    out.append(inv)
                words = []
            else:
                words.append(token)
    return out
