"""z/OS commands carried by a Unix tool: TSO and RACF commands (`tsocmd "DELETE 'PRD.X' PURGE"`, `zowe zos-tso
issue command "PERMIT ..."`) and operator console commands (`opercmd "Z EOD"`, `zowe zos-console issue command
"P CICSPRD"`). Each becomes one Invocation whose program is TSO or MVS and whose arguments are the command's
words, so the rules in policy.yaml judge them as they judge any command. A job submitted from a file
(`zowe zos-jobs submit local-file fix.jcl`) runs JCL the line does not show.
"""

from __future__ import annotations

import re

from guardrails.invocation import Invocation

_CARRIERS = {"tsocmd": "TSO", "tso": "TSO", "opercmd": "MVS", "oprcmd": "MVS"}
_ZOWE = {("zos-tso", "issue", "command"): "TSO", ("zos-tso", "issue", "cmd"): "TSO",
         ("zos-console", "issue", "command"): "MVS", ("zos-console", "issue", "cmd"): "MVS"}
_WORDS = re.compile(r"'[^']*'|[^\s,]+\([^)]*\)|[^\s,]+")  # 'PRD.X.Y', ID(*), ACCESS(ALTER), words


def zos_command(inv: Invocation) -> list[Invocation] | None:
    """The TSO or console command a carrier runs, or a job run from a file; None when the tool carries none."""
    kind, text = _CARRIERS.get(inv.program), None
    words = [a for a in inv.args if not a.startswith("-")]
    spoken = [a for a in inv.args if " " in a.strip()]  # the command, quoted: "-DB2P STOP DB2" starts with a dash
    if kind is not None and (spoken or words):
        text = spoken[0] if spoken else " ".join(words)
    elif inv.program == "zowe":
        for path, found in _ZOWE.items():
            if tuple(words[:3]) == path and (len(words) > 3 or spoken):  # "-DB2P STOP DB2": spoken, dash first
                kind, text = found, spoken[0] if spoken else words[3]
        if tuple(words[:2]) == ("zos-jobs", "submit") and words[2:3] and words[2] in (
                "local-file", "lf", "data-set", "ds", "uss-file", "uf"):
            return [Invocation(program=inv.program, detector="unseen_script")]
    if kind is None or not text:
        return None
    tokens = _console_words(text) if kind == "MVS" else _WORDS.findall(text.strip())
    return [Invocation(program=kind, args=tuple(tokens))] if tokens else None


def _console_words(text: str) -> list[str]:
    """A console command's words: `-DB2P STOP DB2` is the subsystem's STOP DB2 (the prefix dropped), JES2's
    `$PJES2,ABEND` is $P JES2 ABEND and `$DJ1234` is $D J1234."""
    tokens = _WORDS.findall(text.strip())
    if tokens and tokens[0].startswith("$"):
        return [tokens[0][:2], *([tokens[0][2:]] if tokens[0][2:] else []), *tokens[1:]]
    return tokens[1:] if tokens and tokens[0].startswith("-") else tokens


# The same commands typed bare, as a runbook for the mainframe lists them: upper case throughout (quoted data set
# names aside), led by a TSO/RACF/DFSMShsm verb or by an operator console command (`V 0A80,OFFLINE`, `Z EOD`,
# `$PJES2,ABEND`, `-DB2P STOP DATABASE(X)`, `F CICSPRD,CEMT ...`).
_TSO_VERBS = frozenset({"PERMIT", "PE", "ALTDSD", "ALD", "ALTUSER", "ALU", "ADDUSER", "AU", "DELUSER", "DU", "DELDSD",
                        "DD", "SETROPTS", "SETR", "RVARY", "RALTER", "RALT", "RDEFINE", "RDEF", "RDELETE", "RDEL",
                        "CONNECT", "CO", "REMOVE", "DELGROUP", "DG", "HDELETE", "HDEL", "HBDELETE", "HBDEL", "HMIGRATE",
                        "DELETE", "DEL", "LISTDS", "LISTCAT", "LISTUSER", "LU", "LISTGRP", "LG", "RLIST", "RL", "SEARCH"})
_CONSOLE = re.compile(r"^(?:\$[A-Z]|-[A-Z][A-Z0-9@#$]{0,7}\s|(?:V|VARY|Z|HALT|C|CANCEL|F|MODIFY|P|STOP|S|START|D|DISPLAY"
                      r"|K|FORCE|SETPROG|SETSMS|ROUTE|RO)[ ,]\S)")
_LOWER = re.compile(r"[a-z]")


def bare_zos(text: str) -> list[Invocation] | None:
    """A TSO/RACF or console command typed as it is on the mainframe, or None when the line is not one."""
    line = text.strip()
    if not line or "\n" in line or _LOWER.search(re.sub(r"'[^']*'", "", line)):
        return None
    first = line.split(None, 1)[0]
    if first in _TSO_VERBS and len(line.split()) > 1:
        return [Invocation(program="TSO", args=tuple(_WORDS.findall(line)))]
    if _CONSOLE.match(line):
        tokens = _console_words(line)
        return [Invocation(program="MVS", args=tuple(tokens))] if tokens else None
    return None
