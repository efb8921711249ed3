"""One simple command as the rules see it: program, arguments, redirects; and how to read its arguments."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

_NUMBER = re.compile(r"^-\d+$")
_GUARDED = re.compile(r"\$\{\w+:[?]")  # ${VAR:?} fails instead of expanding to nothing
# a literal cache or scratch directory after the variable ("$HOME/.cache/pip"): wrong or empty, it stays scratch
_SCRATCH_SUFFIX = re.compile(r"^[^/]*\$[^/]*(/(?!\.\.(/|$))[^$`/]+)*/(\.cache|cache|caches|tmp|\.tmp|__pycache__|"
                             r"\.pytest_cache)(/(?!\.\.(/|$))[^$`/*]+)*/?$"
                             r"|^\$\{(?:TMPDIR|TMP|TEMP|RUNNER_TEMP):-/tmp\}/[^/*]+/?$")  # ${TMPDIR:-/tmp}/job-$$
_REMOTE = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?=/(?!/))")
_HOME = re.compile(r"^(~[\w.-]*|\$HOME|\$\{HOME\}|/home/[\w.-]+|/Users/[\w.-]+|/root)(/\*?)?$")


def program_name(word: str) -> str:
    """The program a command word runs: its basename (/usr/bin/rm and \\rm are rm); unresolved words as written."""
    if word.startswith(("$", "<(", "`")) or "$(" in word:
        return word
    return word.lstrip("\\").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Invocation:
    """A simple command, or an SQL statement, or a structural pattern found by a detector."""

    program: str = ""
    args: tuple[str, ...] = ()
    redirects: tuple[str, ...] = ()  # targets of output redirections
    stdin: str | None = None  # literal input: heredoc, here-string, echo piped in
    dynamic: bool = False  # operands also come from input (xargs, find -exec)
    sql: frozenset[str] = frozenset()  # statement kinds when this is SQL
    detector: str = ""  # e.g. "fork_bomb", "remote_code"
    stdin_from: str | None = None  # where piped input comes from: literal, file, remote, decoded, program
    cwd: str | None = None  # working directory after an earlier `cd` on the line, when known
    fetched: frozenset[str] = frozenset()  # files downloaded earlier on the line (curl -o F), by base name
    feed: tuple[str, ...] = ()  # the command (program, args) whose output is piped in, when it is another program's
    # output or decoded (`base64 -d`, `zcat`)
    source: tuple[str, ...] = ()  # the command at the head of that pipe, through filters (grep, awk, cut, sort)


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


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """A path pattern as a regex: `*` stays in one component, `{a,b}` is either, a leading `**/` or trailing `/**`
    spans any depth."""
    head = pattern.startswith("**/")
    tail = pattern.endswith("/**")
    core = pattern[3 if head else 0:len(pattern) - 3 if tail else None]
    special = {"*": "[^/]*", "?": "[^/]", "{": "(?:", "}": ")", ",": "|"}
    body = "".join(special.get(c) or re.escape(c) for c in core)
    return re.compile(("(?:.*/)?" if head else "") + body + ("(?:/.*)?" if tail else ""))


def path_matches(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether a normalised absolute path matches one of the data path patterns."""
    return any(_glob(p).fullmatch(path) for p in patterns)


def _absolute(word: str, cwd: str | None) -> str:
    """A relative operand joined to the working directory an earlier `cd` set, when known."""
    if cwd is None or word.startswith(("/", "~", "$", "-")) or "`" in word:
        return word
    return posixpath.join(cwd, word)


def target_class(word: str, system_paths: frozenset[str], data_paths: tuple[str, ...] = (),
                 cwd: str | None = None) -> str:
    """The class of an operand: root, root_glob, home, system, data, wildcard, variable, dynamic, path (absolute,
    outside scratch areas), scratch (temporary files, caches, build output; a guarded variable) or relative."""
    if word in ("{}", "{+}"):
        return "dynamic"
    word = _absolute(_REMOTE.sub("", word), cwd)  # host:/path (rsync, scp): the path on that host
    if _HOME.match(word):
        return "home"
    if "$" in word or "`" in word:
        return "scratch" if _GUARDED.search(word) or _SCRATCH_SUFFIX.match(word) else "variable"
    stripped = word.rstrip("/") or "/"
    base = stripped
    if stripped.endswith(("/*", "/.*")):
        base = _normal(stripped.rsplit("/", 1)[0] or "/")
        if base == "/":
            return "root_glob"
        if base in system_paths:
            return "system"
        if base in (".", "..") or base.startswith("~"):  # (a cache under home is a cache: ~/.cache/pip/*)
            return "wildcard" if base in (".", "..") else "scratch" if _SCRATCH_PARTS.search(base) else "home"
    else:
        normal = _normal(stripped)
        if normal == "/":
            return "root"
        if normal in system_paths:
            return "system"
        if normal in (".", "..", "*", ".*", "./*") or re.fullmatch(r"[.*/]+", normal):
            return "wildcard"
        base = normal
    if base.startswith("/") and path_matches(base, data_paths):
        return "scratch" if _CACHE_IN_DATA.search(base) else "data"
    return place(base)


# Inside a datastore's or service's state, what it rebuilds by itself: its caches (Cassandra's saved_caches), a CI
# server's build workspaces. Not its temp files (InnoDB's temporary tablespace is in use while it runs).
_CACHE_IN_DATA = re.compile(r"(?i)(?:^|/)(?:[^/]*[._-])?caches?(?:/|$)|/jenkins/workspaces?(?:/|$)")


# a scratch area: temporary files, caches, build output and package lists, which tools rebuild
_SCRATCH_PARTS = re.compile(r"(?:^|/)(?:tmp|temp|\.tmp|te?mp[._-][^/]*|[^/]*[._-]te?mp|cache|caches|\.cache|_cacache"
                            r"|[^/]*[._-]caches?|cache[._-][^/]*|__pycache__|\.pytest_cache|pytest-of-[^/]*|node_modules"
                            r"|dist|\.next|coverage|intermediate|obj|coredump|crash|workspace|workspaces|[^/]*\.(?:pid|lock|sock)|build|build[._-][^/]*|\.gradle|\.m2|\.npm|spack-stage[^/]*"
                            r"|%te?mp%)(?:/|$)", re.IGNORECASE)
_SCRATCH_TREES = ("/var/lib/apt/lists", "/var/cache", "/var/tmp", "/tmp", "/dev/shm")
# D:\Data, \\share\dir; D:Data too: the shell reader drops unquoted backslashes
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|\\\\)")


def place(path: str) -> str:
    """path (absolute, outside scratch areas), scratch (temporary, cache or build output) or relative."""
    if _WINDOWS_ABSOLUTE.match(path):
        path = "/" + re.sub(r"^([A-Za-z]):(?![\\/])", r"\1:/", path).replace("\\", "/").lstrip("/")
    path = path.replace("\\", "/")
    if path.startswith("~/"):
        path = "/home/~" + path[1:]  # a path in a home directory is absolute: ~/.bitcoin/wallets, not ./
    if not path.startswith("/"):
        return "scratch" if _SCRATCH_PARTS.search(path) else "relative"
    if any(path == t or path.startswith(t + "/") for t in _SCRATCH_TREES) or _SCRATCH_PARTS.search(path):
        return "scratch"
    return "path"


# <pod-name>, <DB IP>: a word, or words of letters with single spaces between them (not `<in >out`).
_PLACEHOLDER = re.compile(r"<([A-Za-z][\w.:/-]*|[A-Za-z]\w*(?: [A-Za-z]\w*)+)>")


def mask_placeholders(text: str) -> str:
    """Turn runbook placeholders like <pod-name> into words of the same length (_pod-name_)."""
    return _PLACEHOLDER.sub(lambda m: f"_{m.group(1).replace(' ', '_')}_", text)
