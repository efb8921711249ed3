"""Code in languages the shell reader does not speak: PowerShell, Tcl, Groovy; and one-liners that decode or fetch.

PowerShell cmdlets become the POSIX commands with the same effect (`Remove-Item -Recurse -Force P` is
`rm -r -f P`, `iwr URL | iex` is `curl URL | sh`, `Format-Volume` is `mkfs`, `Stop-Computer` is
`poweroff`), so the same rules apply. Tcl's `exec CMD ARGS` and `open "|CMD"` and Groovy's `"CMD".execute()` run a
command; Tcl's `file delete -force P` is `rm -r -f P`. awk's pipes run commands too: `"CMD" | getline` and
`print ... | "CMD"`; printing into a shell runs the printed text (remote code when it was read from a download).
In any interpreter, code that runs what it decodes (`exec(b64decode(...))`, `system(pack("H*", ...))`) is
encoded code, and code that evaluates what it downloads (`eval(file_get_contents("https://..."))`,
`load(io.popen("curl URL"):read("a"))()`) is remote code.
"""

from __future__ import annotations

import re
from dataclasses import replace

from guardrails.invocation import Invocation
from guardrails.shell import parse_shell
from guardrails.streams import is_fetch

_RUNS = re.compile(r"\b(?:exec|eval|system|execute|shell_exec|passthru|popen|spawn|execSync|instance_eval"
                   r"|Invoke-Expression|iex)\b", re.IGNORECASE)
_DECODES = re.compile(r"\b(?:b64decode|a85decode|b32decode|decodebytes|decode_base64|base64_decode|Base64\.decode"
                      r"|decode64|unpack1?|atob|fromhex|unhexlify|bytes\.fromhex|gzinflate|gzuncompress|str_rot13"
                      r"|codecs\.decode|FromBase64String|Buffer\.from)\b|\bpack\s*\(\s*[\"']H\*", re.IGNORECASE)
# code installed or sourced straight from a repository or URL: R's source("https://..."), install_github,
# julia's Pkg.add(url=...), pip's git+https://
_SOURCES_REMOTE = re.compile(r"\bsource\s*\(\s*[\"']https?://|\binstall_(?:github|gitlab|url|git)\s*\("
                             r"|\bPkg\.(?:add|develop)\s*\(\s*(?:url\s*=|[\"']https?://)", re.IGNORECASE)
_FETCHES = re.compile(r"\b(?:file_get_contents|fopen|readfile|open-uri|URI\.open|Net::HTTP|LWP|getstore|get|geturl"
                      r"|request|urlopen)\s*[(\s]\s*[\"']?https?://|\bfetch\s*\(\s*[\"']https?://"
                      r"|\bhttps?://\S+\)\s*\.read", re.IGNORECASE)
# code evaluated from a string: eval, Lua's load/loadstring, Tcl's uplevel (not a method: json.load is not code)
_EVALUATES = re.compile(r"(?<![.\w])(?:eval|load|loadstring|dostring|instance_eval|uplevel)\s*[(\[\s]")
# a downloader run as a command inside the code: io.popen("curl -s URL"), [exec wget -qO- URL]
_FETCH_COMMAND = re.compile(r"""["'`\[{]\s*(?:exec\s+)?(?:curl|wget|fetch|http|GET)\s[^"'`\]}]*https?://""")

# PowerShell: cmdlet (or alias) -> the POSIX program with that effect
_PS_PROGRAMS = {
    "remove-item": "rm", "ri": "rm", "rmdir": "rm", "del": "rm", "erase": "rm", "rd": "rm",
    "invoke-webrequest": "curl", "iwr": "curl", "invoke-restmethod": "curl", "irm": "curl", "wget": "curl",
    "curl": "curl", "invoke-expression": "sh", "iex": "sh", "format-volume": "mkfs", "clear-disk": "wipefs",
    "initialize-disk": "wipefs", "stop-computer": "poweroff", "restart-computer": "reboot",
    "stop-service": "systemctl-stop", "restart-service": "systemctl-restart",
    "remove-partition": "wipefs",
}
_PS_FLAGS = {"-recurse": "-r", "-force": "-f", "-r": "-r"}
_CMD_FLAGS = {"/s": "-r", "/q": "-f", "/f": "-f"}  # cmd.exe's del and rd: /s the tree, /q and /f no questions
_CMD_BUILTINS = {"del": "rm", "erase": "rm", "rd": "rm", "rmdir": "rm", "format": "mkfs"}
_CMDLET = re.compile(r"^[A-Za-z]+-[A-Za-z]+$")
_WINDOWS_ARG = re.compile(r"^(?:/[A-Za-z]{1,2}(?::\S*)?|[A-Za-z]:(?:[\\/].*)?)$")  # /s, /FS:NTFS, C:, D:\Data


def windows_command(inv: Invocation) -> Invocation | None:
    """A PowerShell cmdlet (`Set-MpPreference`, `Format-Volume`, `Remove-Item`) or a cmd.exe builtin
    given Windows arguments (`del /s /q C:\\*`, `format D: /Q`) written directly, as the POSIX command
    with the same effect; None for anything else (`rmdir /tmp/x` is the POSIX rmdir)."""
    name = inv.program.lower()
    if _CMDLET.match(inv.program):  # also gitlab-psql, gitlab-ctl: unchanged, with their input
        found = _ps_command([inv.program, *inv.args])
        return replace(found, stdin=inv.stdin, stdin_from=inv.stdin_from, redirects=inv.redirects, cwd=inv.cwd,
                       fetched=inv.fetched, dynamic=inv.dynamic, feed=inv.feed, source=inv.source)
    if name in ("net", "net.exe", "sc", "sc.exe") and len(inv.args) >= 2:  # net stop W3SVC, sc.exe \\HOST stop X
        words = [a for a in inv.args if not a.startswith("\\")]  # the host
        if words and words[0].lower() == "stop":
            return Invocation(program="systemctl", args=("stop", *words[1:]))
    if name in _CMD_BUILTINS and any(_WINDOWS_ARG.match(a) for a in inv.args):
        args = [_CMD_FLAGS.get(a.lower(), a) for a in inv.args]
        program = _CMD_BUILTINS[name]
        return Invocation(program=program, args=tuple(_volumes(args) if program == "mkfs" else args))
    return None


_PS_DOWNLOAD = re.compile(r"\.Download(?:String|Data|File)\s*\(|Net\.WebClient|Invoke-(?:WebRequest|RestMethod)"
                          r"|\b(?:iwr|irm)\b", re.IGNORECASE)
_PS_EVAL = re.compile(r"\b(?:iex|Invoke-Expression)\b|\[scriptblock\]::Create|&\s*\(", re.IGNORECASE)
# a statement: up to a ; or a line break that no quote holds ('...' is literal, "..." escapes with `)
_PS_STATEMENT = re.compile(r"""(?:'[^']*'?|"(?:`.|[^"`])*"?|[^;\n'"])+""")
TCL_EXEC = re.compile(r"\b(?:exec|spawn)\s+((?:[^\]\n;]+))")
TCL_SEND = re.compile(r'\bsend\s+(?:-\w+\s+)*"((?:\\.|[^"\\])*)"')  # expect: keys typed into the spawned shell
TCL_BRACES = re.compile(r"\{([^{}]*)\}")  # {...} quotes a Tcl word
TCL_OPEN_PIPE = re.compile(r"""\bopen\s+["{]\|([^"}]+)["}]""")  # open "|CMD": a pipe to a command
TCL_DELETE = re.compile(r"\bfile\s+delete\s+((?:-force\s+|--\s+)*)([^\]\n;]+)")
GROOVY_EXEC = re.compile(r"""(["'])((?:\\.|(?!\1).)*)\1\s*\.execute\s*\(""")


def decoded_or_fetched(code: str) -> list[Invocation]:
    """A detector finding when interpreter code runs what it decodes or downloads; empty otherwise."""
    if _SOURCES_REMOTE.search(code):
        return [Invocation(program="<code>", detector="remote_code")]
    runs, evaluates = _RUNS.search(code), _EVALUATES.search(code)
    if (runs and _FETCHES.search(code)) or (evaluates and _FETCH_COMMAND.search(code)):
        return [Invocation(program="<code>", detector="remote_code")]
    if (runs or evaluates) and _DECODES.search(code):
        return [Invocation(program="<code>", detector="encoded_code")]
    return []


def _ps_command(words: list[str]) -> Invocation:
    """One PowerShell command as the POSIX command with the same effect."""
    name = words[0].lower()
    if re.search(r"[\\/]", name):  # a program run by its path (`& $env:windir\system32\inetsrv\appcmd.exe`): its name
        name = _file_base(name)
    program = _PS_PROGRAMS.get(name, name)
    args = [_PS_FLAGS.get(w.lower(), w) for w in words[1:]]
    if program in ("systemctl-stop", "systemctl-restart"):
        return Invocation(program="systemctl", args=(program.split("-")[1], *args))
    if program in ("poweroff", "reboot") and "-f" in args:
        return Invocation(program=program, args=("-f",))
    if program == "rm":
        args = [a for a in args if a.lower() not in ("-path", "-literalpath", "-confirm:$false")]
        args = [_TEMP.sub("/tmp", a) for a in args]  # the temp folder is scratch, as /tmp is
    if program in ("mkfs", "wipefs"):
        args = _volumes(args)
    return Invocation(program=program, args=tuple(args))


_TEMP = re.compile(r"^(?:\$env:(?:TEMP|TMP)|%TEMP%|%TMP%)(?=[\\/]|$)", re.IGNORECASE)
_VOLUME_OPTIONS = ("-driveletter", "-number", "-disknumber", "-partitionnumber", "-path", "-objectid", "-uniqueid")
_DRIVE = re.compile(r"^([A-Za-z]):\\?$")


def _volumes(args: list[str]) -> list[str]:
    """A Windows volume or disk named as a device: `-DriveLetter D` and `D:` are /dev/volume-D, `-Number 1`
    /dev/disk-1, so the rules for devices (mkfs, wipefs) see a device."""
    out: list[str] = []
    for n, arg in enumerate(args):
        drive = _DRIVE.match(arg)
        if drive:
            out.append(f"/dev/volume-{drive.group(1).upper()}")
        elif n and args[n - 1].lower() in _VOLUME_OPTIONS:
            out.append(f"/dev/disk-{arg}")
        else:
            out.append(arg)
    return out


def powershell(code: str, depth: int = 0) -> list[Invocation]:
    """What a PowerShell command line runs or deletes, as POSIX-equivalent invocations. Script blocks
    (`Invoke-Command -ScriptBlock { Stop-Computer -Force }`, `ForEach-Object { ... }`) are code too,
    and `Get-ChildItem P -Recurse | Remove-Item -Recurse` removes what the listing returns: P."""
    if _PS_DOWNLOAD.search(code) and _PS_EVAL.search(code):
        return [Invocation(program="powershell", detector="remote_code")]
    out: list[Invocation] = []
    blocks = _PS_BLOCK.findall(code)
    if depth < 3:
        for block in blocks:
            out += powershell(block, depth + 1)
    code = _PS_BLOCK.sub(" ", code)
    for m in _DOTNET_DELETE.finditer(code):  # [IO.Directory]::Delete('D:\\Data', $true) is rm -rf D:\\Data
        recursive = m.group(1).lower() == "directory" and m.group(3) is not None
        out.append(Invocation(program="rm", args=("-r", "-f", m.group(2)) if recursive else ("-f", m.group(2))))
    downloaded: set[str] = set()  # files an earlier statement saved from the network (-OutFile F)
    for statement in _PS_STATEMENT.findall(code):
        listed: str | None = None
        # PowerShell's \ is a path separator, not an escape; its ( ) group, they do not start a subshell
        text = statement.replace("`", "").replace("\\", "\\\\").replace("(", " ").replace(")", " ")
        for inv in parse_shell(text):
            if not inv.program:
                continue
            # what single quotes kept doubled, written once again
            found = _ps_command([inv.program, *(a.replace("\\\\", "\\") for a in inv.args)])
            if listed and listed.lower().endswith((".log", ".log*", ".txt", ".tmp", ".etl")) and _AGED.search(statement):
                listed = None  # old log files aged out (Where-Object LastWriteTime -lt (Get-Date).AddDays(-30)): rotation
            if found.program == "rm" and listed and not [a for a in found.args if not a.startswith("-")]:
                found = Invocation(program="rm", args=(*found.args, listed))  # what the listing returns: P's entries
            listed = _listed_path(inv) or listed
            if _file_base(inv.program) in downloaded or (inv.program.lower() in ("start-process", "saps", "start")
                                                        and any(_file_base(a) in downloaded for a in inv.args)):
                out.append(Invocation(program="powershell", detector="remote_code"))  # iwr URL -OutFile F; & F
            saved = _out_file(found)
            if saved:
                downloaded.add(_file_base(saved))
            out.append(found)
            if depth and found.program == inv.program.lower() != inv.program:  # Clear-MgDevice... in a block:
                out.append(Invocation(program=inv.program, args=found.args))  # its verb is read from its own case
    return out


_PS_BLOCK = re.compile(r"\{([^{}]*)\}")
_PS_LISTS = frozenset({"get-childitem", "gci", "ls", "dir"})
_DOTNET_DELETE = re.compile(r"\[(?:System\.)?IO\.(Directory|File)\]::Delete\(\s*['\"]([^'\"]+)['\"]\s*(,\s*\$true)?",
                            re.IGNORECASE)
_PS_STATIC_CALL = re.compile(r"^\s*\[[A-Za-z][\w.]*\]::\w")  # [Convert]::FromBase64String(...): .NET from PowerShell
# PowerShell's call operator running a program by a quoted or variable path (`& $env:windir\system32\x.exe`,
# `& "C:\Program Files\x.exe"`): a line no POSIX shell would start with `&`.
_PS_CALL_LINE = re.compile(r"^\s*(?:&\s*(?:[\"']|\$env:|\$\w+[\\/]|[A-Za-z]:\\|\\\\)"
                           r"|\"?[A-Za-z]:\\[^\"\n]*?\.(?:exe|bat|cmd|ps1|com)\"?(?:\s|$))")  # (or `C:\...\x.exe` alone)
_PS_CMDLET_LINE = re.compile(r"^\s*(?:\$\s+|PS [^>]*>\s*)?(?:[A-Z][a-z]+-[A-Z][A-Za-z]+)(?:\s|$)")


def _listed_path(inv: Invocation) -> str | None:
    """What a Get-ChildItem lists: the entries of its path (-Path P, or its first positional word), as a
    wildcard under it (P then * or, with -Filter *.log, *.log); the path itself when it names a wildcard."""
    if inv.program.lower() not in _PS_LISTS:
        return None
    args = list(inv.args)
    path = next((args[n + 1] for n, a in enumerate(args[:-1]) if a.lower() in ("-path", "-literalpath")), None)
    path = path or next((a for n, a in enumerate(args) if not a.startswith("-") and (
        n == 0 or args[n - 1].lower() not in _PS_VALUED)), None)
    if path is None or "*" in path:
        return path
    pattern = next((args[n + 1] for n, a in enumerate(args[:-1]) if a.lower() in ("-filter", "-include")), "*")
    return path.rstrip("\\/") + ("\\" if "\\" in path or re.match(r"^[A-Za-z]:", path) else "/") + pattern


_AGED = re.compile(r"(?i)(?:LastWriteTime|CreationTime|LastAccessTime)\S*\s+-lt\b")
_PS_VALUED = frozenset({"-filter", "-include", "-exclude", "-depth", "-attributes"})


def _file_base(path: str) -> str:
    """A path's file name, Windows or POSIX separators alike."""
    return re.split(r"[\\/]", path.strip("'\""))[-1].lower()


def _out_file(inv: Invocation) -> str | None:
    """The file a PowerShell download saves to (Invoke-WebRequest URL -OutFile F, Start-BitsTransfer -Destination F)."""
    if inv.program != "curl" and not inv.program.lower().startswith("start-bitstransfer"):
        return None
    names = ("-outfile", "-destination", "-o")
    return next((inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a.lower() in names), None)


def looks_like_powershell(text: str) -> bool:
    """A command line written in PowerShell: it starts with a cmdlet (Verb-Noun) and pipes or nests
    more PowerShell (`Get-ChildItem ... | Remove-Item`, `Invoke-Command -ScriptBlock { ... }`), or with a
    .NET static call (`[IO.File]::Delete(...)`)."""
    return (bool(_PS_CMDLET_LINE.match(text)) and ("|" in text or "{" in text or "\\" in text)) or bool(
        _PS_STATIC_CALL.match(text)) or bool(_PS_CALL_LINE.match(text))


def tcl(code: str) -> list[Invocation]:
    """Tcl/expect: `exec CMD ARGS`, `spawn CMD`, `open "|CMD"` and expect's `send "CMD\\r"` run a command;
    `file delete [-force] P...` deletes (-force: the tree)."""
    out = [inv for m in TCL_EXEC.finditer(code) for inv in parse_shell(TCL_BRACES.sub(r"'\1'", m.group(1)))]
    out += [inv for m in TCL_SEND.finditer(code) if "$" not in m.group(1)  # $var: a password or a prompt answer
            for inv in parse_shell(re.sub(r"\\[rn]", "\n", m.group(1)))]
    out += [inv for m in TCL_OPEN_PIPE.finditer(code) for inv in parse_shell(m.group(1))]
    for m in TCL_DELETE.finditer(code):
        flags = ("-r", "-f") if "-force" in m.group(1) else ("-f",)
        paths = [w.strip("{}\"") for w in m.group(2).split()]
        out.append(Invocation(program="rm", args=(*flags, *[p for p in paths if p])))
    return out


def groovy(code: str) -> list[Invocation]:
    """Groovy: `"CMD ARGS".execute()` runs a command (split on spaces, no shell)."""
    return [inv for m in GROOVY_EXEC.finditer(code) for inv in parse_shell(m.group(2))]


def awk_bind(code: str, assignments: dict[str, str]) -> str:
    """awk code with `-v NAME=VALUE` variables written in as string literals (`"rm -rf " d` -> `"rm -rf " "/x"`)."""
    for name, value in assignments.items():
        code = re.sub(rf'(?<![\w"$]){re.escape(name)}(?![\w"])', '"' + value.replace('"', '\\"') + '"', code)
    joined = re.sub(r'"((?:\\.|[^"\\])*)"\s+"((?:\\.|[^"\\])*)"', r'"\1\2"', code)  # string concatenation
    return joined if joined == code else awk_bind(joined, {})


_AWK_STRING = r'"(?:\\.|[^"\\])*"'
_AWK_ASSIGN = re.compile(rf"(?<![\w$])([A-Za-z_]\w*)\s*=\s*({_AWK_STRING})\s*(?=[;}}\n]|$)")
_AWK_GETLINE = re.compile(rf"({_AWK_STRING}|[A-Za-z_]\w*)\s*\|\s*getline\b")
_AWK_PRINT_TO = re.compile(rf"\bprintf?\b([^;}}\n|]*)\|\s*({_AWK_STRING}|[A-Za-z_]\w*)")
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "/bin/sh", "/bin/bash", "/usr/bin/bash"})


def _awk_text(token: str, strings: dict[str, str]) -> str | None:
    """The command text of an awk pipe end: a string literal, or a variable assigned one."""
    if token.startswith('"'):
        return token[1:-1].replace('\\"', '"')
    return strings.get(token)


def awk_pipes(code: str) -> list[Invocation]:
    """awk's `"CMD" | getline` and `print ... | "CMD"`: the commands run; printing into a shell runs what is printed."""
    strings = {m.group(1): m.group(2)[1:-1].replace('\\"', '"') for m in _AWK_ASSIGN.finditer(code)}
    out: list[Invocation] = []
    fetched = False
    for m in _AWK_GETLINE.finditer(code):
        text = _awk_text(m.group(1), strings)
        found = parse_shell(text) if text else []
        fetched = fetched or any(is_fetch(inv) for inv in found)
        out += found
    for m in _AWK_PRINT_TO.finditer(code):
        text = _awk_text(m.group(2), strings)
        target = parse_shell(text) if text else []
        if not target or target[0].program.rsplit("/", 1)[-1] not in _SHELL_NAMES or target[0].args:
            out += target
            continue
        printed = re.fullmatch(rf"\s*\(?\s*({_AWK_STRING})\s*\)?\s*", m.group(1))
        if fetched:
            out.append(Invocation(program="awk", detector="remote_code"))
        elif printed:
            out += parse_shell(printed.group(1)[1:-1])
        else:
            out.append(Invocation(program="awk", detector="opaque_command"))
    return out
