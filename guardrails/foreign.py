"""Code in languages the shell reader does not speak: PowerShell, Tcl, Groovy; and one-liners that decode or fetch.

PowerShell cmdlets become the POSIX commands with the same effect (`Remove-Item -Recurse -Force P` is
`rm -r -f P`, `iwr URL | iex` is `curl URL | sh`, `Format-Volume` is `mkfs`, `Stop-Computer` is
`poweroff`), so the same rules apply. Tcl's `exec CMD ARGS` and Groovy's `"CMD".execute()` run a command.
In any interpreter, code that runs what it decodes (`exec(b64decode(...))`, `system(pack("H*", ...))`) is
encoded code, and code that evaluates what it downloads (`eval(file_get_contents("https://..."))`) is remote code.
"""

from __future__ import annotations

import re

from guardrails.invocation import Invocation
from guardrails.shell import parse_shell

_RUNS = re.compile(r"\b(?:exec|eval|system|execute|shell_exec|passthru|popen|spawn|execSync|instance_eval"
                   r"|Invoke-Expression|iex)\b", re.IGNORECASE)
_DECODES = re.compile(r"\b(?:b64decode|a85decode|b32decode|decodebytes|decode_base64|base64_decode|Base64\.decode"
                      r"|decode64|unpack1?|atob|fromhex|unhexlify|bytes\.fromhex|gzinflate|gzuncompress|str_rot13"
                      r"|codecs\.decode|FromBase64String|Buffer\.from)\b|\bpack\s*\(\s*[\"']H\*", re.IGNORECASE)
_FETCHES = re.compile(r"\b(?:file_get_contents|fopen|readfile|open-uri|URI\.open|Net::HTTP|LWP|getstore|get)\s*"
                      r"[(\s]\s*[\"']https?://|\bfetch\s*\(\s*[\"']https?://|\bhttps?://\S+\)\s*\.read",
                      re.IGNORECASE)

# PowerShell: cmdlet (or alias) -> the POSIX program with that effect
_PS_PROGRAMS = {
    "remove-item": "rm", "ri": "rm", "rmdir": "rm", "del": "rm", "erase": "rm", "rd": "rm",
    "invoke-webrequest": "curl", "iwr": "curl", "invoke-restmethod": "curl", "irm": "curl", "wget": "curl",
    "curl": "curl", "invoke-expression": "sh", "iex": "sh", "format-volume": "mkfs", "clear-disk": "wipefs",
    "initialize-disk": "wipefs", "stop-computer": "poweroff", "restart-computer": "reboot",
    "stop-service": "systemctl-stop", "remove-partition": "wipefs",
}
_PS_FLAGS = {"-recurse": "-r", "-force": "-f", "-r": "-r"}
_PS_DOWNLOAD = re.compile(r"\.Download(?:String|Data|File)\s*\(|Net\.WebClient|Invoke-(?:WebRequest|RestMethod)"
                          r"|\b(?:iwr|irm)\b", re.IGNORECASE)
_PS_EVAL = re.compile(r"\b(?:iex|Invoke-Expression)\b|\[scriptblock\]::Create|&\s*\(", re.IGNORECASE)
_PS_STATEMENTS = re.compile(r"[;\n]")
TCL_EXEC = re.compile(r"\bexec\s+((?:[^\]\n;]+))")
GROOVY_EXEC = re.compile(r"""(["'])((?:\\.|(?!\1).)*)\1\s*\.execute\s*\(""")


def decoded_or_fetched(code: str) -> list[Invocation]:
    """A detector finding when interpreter code runs what it decodes or downloads; empty otherwise."""
    if not _RUNS.search(code):
        return []
    if _FETCHES.search(code):
        return [Invocation(program="<code>", detector="remote_code")]
    if _DECODES.search(code):
        return [Invocation(program="<code>", detector="encoded_code")]
    return []


def _ps_command(words: list[str]) -> Invocation:
    """One PowerShell command as the POSIX command with the same effect."""
    name = words[0].lower()
    program = _PS_PROGRAMS.get(name, name)
    args = [_PS_FLAGS.get(w.lower(), w) for w in words[1:]]
    if program == "systemctl-stop":
        return Invocation(program="systemctl", args=("stop", *args))
    if program in ("poweroff", "reboot") and "-f" in args:
        return Invocation(program=program, args=("-f",))
    if program == "rm":
        args = [a for a in args if a.lower() not in ("-path", "-literalpath", "-confirm:$false")]
    return Invocation(program=program, args=tuple(args))


def powershell(code: str) -> list[Invocation]:
    """What a PowerShell command line runs or deletes, as POSIX-equivalent invocations."""
    if _PS_DOWNLOAD.search(code) and _PS_EVAL.search(code):
        return [Invocation(program="powershell", detector="remote_code")]
    out: list[Invocation] = []
    for statement in _PS_STATEMENTS.split(code):
        for inv in parse_shell(statement.replace("`", "")):
            if inv.program:
                out.append(_ps_command([inv.program, *inv.args]))
    return out


def tcl(code: str) -> list[Invocation]:
    """Tcl/expect: `exec CMD ARGS` runs a command."""
    return [inv for m in TCL_EXEC.finditer(code) for inv in parse_shell(m.group(1))]


def groovy(code: str) -> list[Invocation]:
    """Groovy: `"CMD ARGS".execute()` runs a command (split on spaces, no shell)."""
    return [inv for m in GROOVY_EXEC.finditer(code) for inv in parse_shell(m.group(2))]


def awk_bind(code: str, assignments: dict[str, str]) -> str:
    """awk code with `-v NAME=VALUE` variables written in as string literals (`"rm -rf " d` -> `"rm -rf " "/x"`)."""
    for name, value in assignments.items():
        code = re.sub(rf'(?<![\w"$]){re.escape(name)}(?![\w"])', '"' + value.replace('"', '\\"') + '"', code)
    joined = re.sub(r'"((?:\\.|[^"\\])*)"\s+"((?:\\.|[^"\\])*)"', r'"\1\2"', code)  # string concatenation
    return joined if joined == code else awk_bind(joined, {})
