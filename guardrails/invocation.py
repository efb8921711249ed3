"""One simple command as the rules see it: program, arguments, redirects; and how to read its arguments."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

_NUMBER = re.compile(r"^-\d+$")
_GUARDED = re.compile(r"\$\{\w+:[?]")  # ${VAR:?} fails instead of expanding to nothing
_HOME = re.compile(r"^(~[\w.-]*|\$HOME|\$\{HOME\})(/\*?)?$")


@dataclass(frozen=True)
class Invocation:
    """A simple command, or an SQL statement, or a structural pattern found by a detector."""

    program: str = ""
    args: tuple[str, ...] = ()
    redirects: tuple[str, ...] = ()  # targets of output redirections
    stdin: str | None = None  # literal input: heredoc, here-string, echo piped in
    dynamic: bool = False  # operands also come from input (xargs, find -exec)
    sql: frozenset[str] = frozenset()  # statement kinds when this is SQL
    detector: str = ""  # e.g. "fork_bomb"


@dataclass(frozen=True)
class ArgView:
    """Arguments split into flags (normalised) and positional words."""

    flags: frozenset[str]
    positionals: tuple[str, ...]


def read_args(args: tuple[str, ...], aliases: Mapping[str, str], value_options: frozenset[str]) -> ArgView:
    """Split arguments into flags and positionals, mapping aliases and consuming option values."""
    flags: set[str] = set()
    positionals: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            positionals.extend(args[i:])
            break
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        name, eq, value = token.partition("=")
        canonical = aliases.get(name, name)
        flags.add(canonical)
        if eq:
            flags.add(f"{canonical}={value}")
        elif name in value_options and i < len(args):
            flags.add(f"{canonical}={args[i]}")
            i += 1
        elif not name.startswith("--") and len(name) > 2 and not _NUMBER.match(name):
            flags.update(aliases.get(f"-{c}", f"-{c}") for c in name[1:])
    return ArgView(frozenset(flags), tuple(positionals))


def _normal(path: str) -> str:
    path = re.sub(r"/+", "/", path)
    if not path.startswith("/"):
        return path
    return posixpath.normpath(path) if path not in ("/", "//") else "/"


def target_class(word: str, system_paths: frozenset[str]) -> str:
    """The class of an operand: root, root_glob, home, system, wildcard, variable, dynamic or path."""
    if word in ("{}", "{+}"):
        return "dynamic"
    if _HOME.match(word):
        return "home"
    if "$" in word or "`" in word:
        return "path" if _GUARDED.search(word) else "variable"
    stripped = word.rstrip("/") or "/"
    if stripped.endswith("/*") or stripped.endswith("/.*"):
        base, glob = stripped.rsplit("/", 1)
        base = _normal(base or "/")
        if base == "/":
            return "root_glob"
        if base in system_paths:
            return "system"
        if base in (".", "..") or base.startswith("~"):
            return "wildcard" if base in (".", "..") else "home"
        return "path"
    normal = _normal(stripped)
    if normal == "/":
        return "root"
    if normal in system_paths:
        return "system"
    if normal in (".", "..", "*", ".*", "./*") or re.fullmatch(r"[.*/]+", normal):
        return "wildcard"
    return "path"


_PLACEHOLDER = re.compile(r"<([A-Za-z][\w.:/-]*)>")


def mask_placeholders(text: str) -> str:
    """Turn runbook placeholders like <pod-name> into words of the same length (_pod-name_)."""
    return _PLACEHOLDER.sub(lambda m: f"_{m.group(1)}_", text)
