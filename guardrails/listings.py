"""Deleting whatever a listing returns: `docker volume rm $(docker volume ls -q)`, `docker ps -aq | xargs docker rm -f`.

An operand is `listed` when it is the output of the same tool listing a whole kind of object with no filter:
a command substitution, or (through xargs) the command piped in. A filter (`-f status=exited`, `--filter`,
`-l app=x`, `--field-selector`, `grep`) narrows the listing to a chosen few, so it is not `listed`; column
selection (`-q`, `-o name`, `awk '{print $1}'`, `cut`, `tail -n +2`) is not a filter. Redis lists every key with
`KEYS *` or `--scan` without a pattern.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from guardrails.invocation import Invocation
from guardrails.shell import parse_shell, program_name

LISTS = frozenset({"ls", "list", "ps", "get", "images", "ids"})
LIST_PREFIXES = ("list-", "describe-")
FILTERS = ("--filter*", "--filters*", "-l", "-l=*", "--selector*", "--field-selector*", "--name*", "--status*",
           "--tag*", "--label*", "--where*", "--prefix*", "--query*", "--search*", "--regex*")
PRIVILEGE = frozenset({"sudo", "doas"})
_COLUMN_AWK = re.compile(r"\s*(?:NR\s*>\s*1\s*)?\{\s*print\s+\$\d+\s*\}\s*")  # awk '{print $1}', 'NR>1 {print $1}'
_SUBSTITUTION = re.compile(r"^(?:\$\((?P<a>.*)\)|`(?P<b>.*)`)$", re.DOTALL)


def _selects_columns(inv: Invocation) -> bool:
    """A filter-free transform of a listing: cut, tr, awk printing a column, tail -n +2, sed 1d."""
    if inv.program in ("cut", "tr", "sort", "uniq"):
        return True
    if inv.program in ("awk", "gawk", "mawk"):
        code = [a for a in inv.args if not a.startswith("-")]
        return bool(code) and bool(_COLUMN_AWK.fullmatch(code[0]))
    if inv.program == "tail":
        return any(a in ("+2", "-n+2") for a in inv.args) or "-n +2" in " ".join(inv.args)
    return inv.program == "sed" and inv.args[-1:] == ("1d",)


def _every_key(args: tuple[str, ...]) -> bool | None:
    """redis-cli KEYS PATTERN / --scan [--pattern P]: whether every key is listed; None when it lists no keys."""
    lowered = [a.lower() for a in args]
    if "keys" in lowered:
        return lowered[lowered.index("keys") + 1:lowered.index("keys") + 2] == ["*"]
    if "--scan" in lowered:
        at = lowered.index("--pattern") + 1 if "--pattern" in lowered else None
        return at is None or lowered[at:at + 1] == ["*"]
    return None


# Tools whose objects another tool lists: Slurm's, PBS' and LSF's job queues, Exim's mail queue; and the
# options that narrow those listings (a user's jobs, a partition's, one sender's mail, frozen bounces).
PAIRED_LISTINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "scancel": {"squeue": ("-u", "--user*", "-p", "--partition*", "-j", "--jobs*", "-w", "--nodelist*", "-A",
                           "--account*", "-n", "--name*", "-q", "--qos*", "--me", "-t", "--states*", "-r")},
    "qdel": {"qstat": ("-u", "-q")}, "bkill": {"bjobs": ("-u", "-q", "-J", "-m")},
    "exim": {"exiqgrep": ("-f", "-r", "-s", "-y", "-o", "-z", "-x"), "mailq": ()},
}


def _paired_listing(words: tuple[str, ...], program: str) -> bool:
    """`squeue -h -o %i` feeding scancel, `exiqgrep -i` feeding exim -Mrm: the whole queue, unfiltered."""
    narrowing = PAIRED_LISTINGS.get(program, {}).get(program_name(words[0]))
    if narrowing is None:
        return False
    return not any(fnmatchcase(a, f) for a in words[1:] for f in narrowing)


def lists_everything(words: tuple[str, ...], program: str) -> bool:
    """Whether a command (program and arguments) is `program` listing every object of a kind, unfiltered."""
    while words and program_name(words[0]) in PRIVILEGE:
        words = words[1:]
    if words and _paired_listing(words, program):
        return True
    if not words or program_name(words[0]) != program:
        return False
    args = words[1:]
    keys = _every_key(args)
    if keys is not None:
        return keys
    positionals = [a for a in args if not a.startswith("-")]
    if not any(p in LISTS or p.startswith(LIST_PREFIXES) for p in positionals):
        return False
    filtered = any(fnmatchcase(a, f) for a in args for f in FILTERS)
    return not filtered and not any("=" in p for p in positionals)  # status=exited, dangling=true: a filter


def _substitution_lists(word: str, program: str) -> bool:
    match = _SUBSTITUTION.match(word.strip())
    if match is None:
        return False
    found = parse_shell(match.group("a") if match.group("a") is not None else match.group("b"))
    if not found or not all(_selects_columns(inv) for inv in found[1:]):
        return False
    return lists_everything((found[0].program, *found[0].args), program)


def listed(inv: Invocation) -> bool:
    """Whether the command acts on everything a listing of its own tool returns (substituted or piped through xargs)."""
    if inv.dynamic and inv.feed and lists_everything(inv.feed, inv.program):
        return True
    return any(_substitution_lists(arg, inv.program) for arg in inv.args if "$(" in arg or "`" in arg)
