"""Commands run once per input item: xargs and GNU parallel.

What they are handed literally (`printf '%s\\0' /a /b | xargs -0 rm -rf`, `xargs -I{} rm -rf {} <<< /a`,
`parallel rm -rf ::: /a /b`) becomes their command's operands, split the way the tool splits it (NUL with -0,
-d's delimiter, lines with -I, else words). Input from a file or another program is unknown: the command's
operands are then `dynamic`.
"""

from __future__ import annotations

import shlex
from dataclasses import replace

from guardrails.carriers import as_command, command_start, option_values
from guardrails.invocation import Invocation
from guardrails.resolve import ansi_c
from guardrails.shell import parse_shell

MAX_ITEMS = 16  # xargs -I / parallel: the command is read once per item, for this many items at most
PARALLEL_VALUES = frozenset("-j --jobs -S --sshlogin --sshloginfile --slf -a --arg-file --joblog --delay --timeout "
                            "--retries -d --delimiter -I --colsep -C --results --tmpdir --tagstring -n --max-args -N "
                            "-L --max-lines --halt --memfree --load --nice --workdir --wd -E".split())


def _items(options: tuple[str, ...], text: str, lines: bool) -> list[str]:
    """What xargs reads: NUL-separated with -0, split at -d's delimiter, lines with -I, else words (quotes kept)."""
    delimiter = option_values(options, frozenset({"-d", "--delimiter"}))
    if "-0" in options or "--null" in options or "\0" in text:
        items = text.split("\0")
    elif delimiter or lines:
        items = text.split(ansi_c(delimiter[-1]) if delimiter else "\n")
    else:
        try:
            items = shlex.split(text)
        except ValueError:  # unbalanced quotes: plain words
            items = text.split()
    return [item for item in items if item.strip()][:MAX_ITEMS]


def _replace_string(options: tuple[str, ...]) -> str | None:
    """xargs -I R (-IR, -i, --replace[=R]): the string replaced by each input line; None without it."""
    for i, token in enumerate(options):
        if token == "-I":
            return options[i + 1] if i + 1 < len(options) else "{}"
        if token.startswith(("-I", "-i")):
            return token[2:] or "{}"
        if token.startswith("--replace"):
            return token.partition("=")[2] or "{}"
    return None


_SCRATCH = ("/tmp/", "/var/tmp/", "/dev/shm/")


def _scratch_listing(feed: tuple[str, ...]) -> tuple[str, ...]:
    """The paths a listing names (`ls -d /tmp/jenkins-*`, `find /var/tmp/build -mtime +3`), when every one is in
    scratch: what it lists is there too."""
    words = feed[1:] if feed[:1] == ("sudo",) else feed
    if words[:1] == ("ls",):  # (full paths only with -d or a glob: `ls /tmp` prints bare names, rm'd where it runs)
        paths = tuple(w for w in words[1:] if not w.startswith("-"))
        if not any(w.startswith("-") and "d" in w.lstrip("-") and not w.startswith("--") or w == "--directory"
                   for w in words[1:]) and not all("*" in p for p in paths):
            return ()
    elif words[:1] == ("find",):
        paths = tuple(w for w in words[1:][:next((n for n, w in enumerate(words[1:]) if w[:1] in "-(!"), None)])
    else:
        return ()
    return paths if paths and all((p.rstrip("/") + "/").startswith(_SCRATCH) and ".." not in p for p in paths) else ()


def _finds(feed: tuple[str, ...]) -> bool:
    """The feed is a find (or Lustre's `lfs find`) listing files."""
    return bool(feed) and (feed[0] == "find" or feed[:2] == ("lfs", "find"))


def xargs(inv: Invocation, start: int) -> list[Invocation]:
    """xargs CMD: CMD with what it reads as operands; literal input (echo, printf, here-strings) is known."""
    options, words = inv.args[:start], inv.args[start:] or ("echo",)
    if inv.stdin_from != "literal" or not inv.stdin or {"-a", "--arg-file"} & set(options):
        found = as_command(words, inv, dynamic=True)
        scratch = _scratch_listing(inv.feed)
        if found and found[0].program in ("rm", "unlink", "shred") and scratch:  # ls -d /tmp/x-* | xargs rm -rf
            return [replace(found[0], args=(*found[0].args, *scratch), dynamic=False), *found[1:]]
        if found and found[0].program in ("rm", "unlink", "shred") and _finds(inv.feed):
            # find P ... | xargs rm: the same as find P ... -delete, and judged as that
            find = inv.feed[1:] if inv.feed[0] == "find" else inv.feed[2:]
            found.insert(0, Invocation(program="find", args=(*find, "-delete"), cwd=inv.cwd))
        if found and found[0].program in ("kubectl", "oc"):
            found[0] = _listed_kind(found[0], inv.source)
        return found
    plain = replace(inv, stdin=None, stdin_from=None)
    placeholder = _replace_string(options)
    items = _items(options, inv.stdin, lines=placeholder is not None)
    if placeholder is None:
        return as_command(words + tuple(items), plain)
    return [c for item in items for c in as_command(tuple(w.replace(placeholder, item) for w in words), plain)]


def _listed_kind(inv: Invocation, source: tuple[str, ...]) -> Invocation:
    """`kubectl get ns -o name | grep -v kube- | xargs kubectl delete`: the names are `namespace/...`, so the
    deletion is of namespaces; the kind the listing asked for is put on the command line it feeds."""
    positionals = [a for a in inv.args if not a.startswith("-")]
    if positionals[:1] != ["delete"] or len(positionals) > 1 or not source or source[0] not in ("kubectl", "oc"):
        return inv
    listed = [a for a in source[1:] if not a.startswith("-")]
    if len(listed) < 2 or listed[0] != "get" or "/" in listed[1]:
        return inv
    return replace(inv, args=(*inv.args, listed[1].split(",")[0] + "/listed"))


def parallel(inv: Invocation) -> list[Invocation]:
    """GNU parallel CMD ::: ARGS (or ARGS on stdin): CMD once per argument, through a shell; no CMD: ARGS run."""
    args = inv.args
    marks = [i for i, a in enumerate(args) if a.startswith(":::")]
    head = args[:marks[0]] if marks else args
    command = " ".join(head[command_start(head, PARALLEL_VALUES):])
    if marks and args[marks[0]] in (":::", ":::+"):
        items = [a for a in args[marks[0] + 1:] if not a.startswith(":::")][:MAX_ITEMS]
    elif not marks and inv.stdin_from == "literal" and inv.stdin:
        items = _items((), inv.stdin, lines=True)
    else:  # arguments from a file or another program: unknown
        found = parse_shell(command)
        return [replace(found[0], dynamic=True), *found[1:]] if found else []
    if not command:
        return [c for item in items for c in parse_shell(item)]
    texts = [command.replace("{}", shlex.quote(item)) if "{}" in command else f"{command} {shlex.quote(item)}"
             for item in items]
    return [c for text in texts for c in parse_shell(text)]
