"""IBM i control language (CL): `DLTLIB LIB(CREWPROD)`, `ENDSBS SBS(*ALL) OPTION(*IMMED)`, `CHGSYSVAL ...`.

A CL command is an upper-case name of a verb and an object (DLT-LIB, CLR-PFM, END-SBS, PWRDWN-SYS) and keyword
parameters in parentheses. The shell reader cannot read them (the parentheses are shell syntax), so a line in CL
syntax becomes one Invocation per command: the program is the command's name and each argument a `KEYWORD(value)`,
upper-cased, for the rules in policy.yaml. Commands that carry another command or SQL are opened: `SBMJOB
CMD(...)` submits the CL in CMD, `RUNSQL SQL('...')` runs the statement; PASE's `system "CL"` runs CL too.
"""

from __future__ import annotations

import re

from guardrails.invocation import Invocation
from guardrails.sql import sql_invocations

_PARAM = r"[A-Z][A-Z0-9]*\((?:[^()']|'[^']*'|\((?:[^()']|'[^']*')*\))*\)"
_CL = re.compile(rf"^\s*([A-Z][A-Z0-9]{{2,9}})((?:\s+{_PARAM})*)\s*$")
_PARAMS = re.compile(_PARAM)


def looks_like_cl(text: str) -> bool:
    """A CL command with at least one keyword parameter, or a CL command word alone that only CL has."""
    found = _CL.match(text)
    return bool(found and (found.group(2) or found.group(1) in _BARE))


_BARE = frozenset({"PWRDWNSYS", "ENDSYS", "ENDTCP", "ENDSBS", "WRKACTJOB", "DSPLIB", "WRKSYSVAL"})


def cl_invocations(text: str, depth: int = 0) -> list[Invocation]:
    """The commands a CL line runs: itself, and what SBMJOB's CMD or RUNSQL's SQL carries."""
    found = _CL.match(text)
    if not found or depth > 3:
        return []
    name, params = found.group(1), [p.upper() if not p.upper().startswith("SQL(") else p
                                    for p in _PARAMS.findall(found.group(2))]
    out = [Invocation(program=name, args=tuple(params))]
    for param in params:
        key, value = param.split("(", 1)
        value = value[:-1]
        if key == "CMD" and looks_like_cl(value):
            out += cl_invocations(value, depth + 1)
        elif key == "SQL" and name == "RUNSQL":
            out += sql_invocations(value.strip().strip("'").replace("''", "'"))
    return out
