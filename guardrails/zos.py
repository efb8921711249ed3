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
    tokens = _WORDS.findall(text.strip())
    if kind == "MVS" and tokens and tokens[0].startswith("-"):  # -DB2P STOP DB2: a subsystem's command prefix,
        tokens = tokens[1:]  # then the subsystem's own command (STOP, TERM, CLEAR, DISPLAY)
    return [Invocation(program=kind, args=tuple(tokens))] if tokens else None
