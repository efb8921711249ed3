"""One-liners in other interpreters (python -c, perl -e, ruby -e, node -e, php -r, lua -e, awk, R, julia, elixir,
osascript, erl) read for their effects.

What the code runs or deletes becomes ordinary invocations, so the same rules apply:
`os.system("rm -rf /")` and `system("rm -rf /")` become the shell command they run,
`subprocess.run(["rm", "-rf", "/"])` its argv, and tree deletions (`shutil.rmtree(P)`,
`FileUtils.rm_rf(P)`, `remove_tree(P)`, `fs.rmSync(P, {recursive: true})`) become `rm -r -f P`
(`rm -r -f ${expr}` when P is not a literal, so it reads as a variable path).
Python is read with `ast`; the others by their calls with string-literal arguments (with or without
parentheses: `exec "reboot", "-f"`; option objects like node's `{stdio: 'inherit'}` are ignored). A shell-out
whose command is not a literal cannot be known and is reported as an opaque command; python that
exec()s what it downloads (`exec(urlopen(URL).read())`) is remote code. PowerShell's -EncodedCommand is decoded
(UTF-16 base64) and read, and reported as encoded code.
"""

from __future__ import annotations

import ast
import base64
import binascii
import re
from dataclasses import dataclass

from guardrails.foreign import awk_bind, awk_pipes, decoded_or_fetched, groovy, powershell, tcl
from guardrails.invocation import Invocation
from guardrails.shell import parse_shell

_PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*)$")
LANGUAGES = ("python", "perl", "ruby", "node", "php", "lua", "awk", "tcl", "groovy", "powershell", "r", "julia",
             "elixir", "erlang", "applescript")
_CODE_FLAGS = {"python": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"),
               "php": ("-r",), "lua": ("-e",), "awk": ("--source",), "tcl": ("-c",), "groovy": ("-e",),
               "powershell": (), "r": ("-e", "--expr"), "julia": ("-e", "--eval", "-E", "--print"),
               "elixir": ("-e", "--eval"), "erlang": ("-eval",), "applescript": ("-e",)}
_VALUE_FLAGS = {"python": ("-W", "-X", "-m"), "perl": ("-I", "-M", "-m", "-x"), "ruby": ("-r", "-I", "-C"),
                "node": ("-r", "--require", "--import"), "php": ("-d", "-c"), "lua": ("-l",),
                "awk": ("-F", "-v", "--assign", "--field-separator"), "tcl": ("-encoding",), "groovy": ("-cp",),
                "powershell": (), "r": ("-f", "--file"), "julia": ("-L", "--load", "-t", "--threads", "-p"),
                "elixir": ("-r", "--require", "-pa", "-pz"), "erlang": ("-pa", "-pz", "-s", "-sname", "-name",
                                                                        "-setcookie"),
                "applescript": ("-l",)}
_NAMES = {"perl": "perl", "ruby": "ruby", "jruby": "ruby", "node": "node", "nodejs": "node", "bun": "node",
          "deno": "node", "php": "php", "lua": "lua", "luajit": "lua", "awk": "awk", "gawk": "awk", "mawk": "awk",
          "nawk": "awk", "tclsh": "tcl", "wish": "tcl", "expect": "tcl", "jimsh": "tcl", "groovy": "groovy",
          "pwsh": "powershell", "powershell": "powershell", "powershell.exe": "powershell", "pwsh.exe": "powershell",
          "pwsh-preview": "powershell", "Rscript": "r", "R": "r", "julia": "julia", "elixir": "elixir",
          "erl": "erlang", "osascript": "applescript"}
_VERSIONED = re.compile(r"^(perl|ruby|php|lua|tclsh|wish|node|pwsh)[0-9][0-9.]*$")  # php8.1, lua5.4, tclsh8.6
# PowerShell parameters (any unambiguous prefix, - or /): -Command, -EncodedCommand, -File, and those taking a value
_PS_VALUES = ("executionpolicy", "ep", "ex", "windowstyle", "w", "outputformat", "of", "inputformat", "if",
              "workingdirectory", "wd", "configurationname", "config", "settingsfile", "psconsolefile", "version", "v")
PY_EXEC = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
PY_FETCH = re.compile(r"\b(?:urlopen|urlretrieve|requests\.(?:get|post)|httpx\.get|urllib3|http\.client)\b")
PY_SHELL = frozenset({"os.system", "os.popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
                      "subprocess.check_output", "subprocess.Popen", "subprocess.getoutput", "commands.getoutput",
                      "pty.spawn", "os.execvp", "os.execv"})
PY_TREE = frozenset({"shutil.rmtree"})
PY_FILE = frozenset({"os.remove", "os.unlink"})
_STRING = re.compile(r"""(["'])((?:\\.|(?!\1).)*)\1""", re.DOTALL)
_SHELL_CALL = re.compile(r"\b(?:system|exec|execute|execSync|execFileSync|spawnSync|spawn|execFile|shell_exec|passthru"
                         r"|popen|system2|System\.cmd|os[.:]cmd"
                         r"|capture2e?|capture3|popen3)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_BACKTICK = re.compile(r"`([^`]+)`|\bqx\s*[({\[/](.+?)[)}\]/]|%x[({\[](.+?)[)}\]]", re.DOTALL)
_TREE_CALL = re.compile(r"\b(?:rmtree|remove_tree|rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rimraf(?:\.sync)?"
                        r"|rmSync|rmdirSync|promises\.rm|fs\.rm|Deno\.removeSync|Deno\.remove)!?\s*"
                        r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_BARE_CALL = re.compile(r"""\b(?:system|exec|spawn|do shell script)\s+((?:(["'])(?:\\.|(?!\2).)*\2\s*,?\s*)+)""")
# R's unlink(P, recursive = TRUE), julia's rm(P, recursive=true)
_RECURSIVE_CALL = re.compile(r"""\b(?:unlink|rm)\s*\(\s*(["'])((?:\\.|(?!\1).)*)\1\s*,\s*"""
                             r"recursive\s*=\s*(?:TRUE|true|T)\b")
# single files deleted: perl's unlink, php's unlink, lua's os.remove, ruby's File.delete, node's unlinkSync
_FILE_CALL = re.compile(r"\b(?:unlink|os\.remove|File\.(?:delete|unlink)|FileUtils\.rm(?:_f)?|unlinkSync"
                        r"|fs\.unlink|Deno\.remove)\s*\(?\s*(?:glob\s*\(\s*)?" r"""(["'])((?:\\.|(?!\1).)*)\1""")
# a tree walked (os.walk, perl's File::Find, ruby's Dir.glob, php's glob, node's readdirSync) while files are deleted:
# every file under the walked path goes, as with rm -rf
_WALK = re.compile(r"""\b(?:os\.walk|find|Dir\.glob|Dir\[|glob(?:\.glob|\.iglob)?|rglob|iglob|readdirSync|scandir"""
                   r"""|listdir|walkSync)\s*\(?\s*(?:sub\s*\{[^}]*\}\s*,\s*)?(["'])((?:\\.|(?!\1).)*)\1""")
_DELETES = re.compile(r"\b(?:os\.remove|os\.unlink|unlink|File\.delete|File\.unlink|FileUtils\.rm\w*|unlinkSync"
                      r"|fs\.unlink|fs\.rmSync)\b")
# a process killed by signal from code: ruby's Process.kill(:KILL, ...), perl's kill 9, ...
_KILL_CALL = re.compile(r"\b(?:Process\.kill|process\.kill|posix\.kill|kill)\s*\(?\s*" r"""[:'"]?(?:KILL|9|SIGKILL|TERM"""
                        r"|15|SIGTERM)\b")
# code that forks forever: perl's `fork while 1`, python's `[os.fork() for _ in iter(int, 1)]`
_FORK_LOOP = re.compile(r"\bfork\b(?:\(\))?\s*(?:while|until)\s*(?:1|true)\b|\bwhile\s*\(?\s*(?:1|true|True)\s*\)?\s*"
                        r"[:{]?\s*(?:os\.)?fork\s*\(|(?:os\.)?fork\s*\(\)\s*for\s+\w+\s+in\s+(?:iter\(|itertools\.count)")
_OPTIONS = re.compile(r"\{[^{}]*\}")  # node's {stdio: 'inherit'}, ruby's {chdir: '/'}: not part of the command
FOREIGN = {"tcl": tcl, "groovy": groovy, "powershell": powershell}
_NODE_NONRECURSIVE = re.compile(r"\b(?:rmSync|rmdirSync|promises\.rm|fs\.rm|Deno\.removeSync|Deno\.remove)\s*\(")


@dataclass(frozen=True)
class Program:
    """The code an interpreter runs: a -c/-e string, its stdin (`-` or no script), or a script file."""

    language: str
    code: str | None = None
    reads_stdin: bool = False
    script: str | None = None
    encoded: bool = False  # the code was given encoded (pwsh -EncodedCommand): what runs cannot be read as written


def language(program: str) -> str | None:
    """The interpreter family of a program name (python3.11 is python, tclsh8.6 is tcl), or None."""
    if _PYTHON.match(program):
        return "python"
    versioned = _VERSIONED.match(program)
    return _NAMES.get(versioned.group(1) if versioned else program)


def _utf16(encoded: str) -> str | None:
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-16-le")
    except (binascii.Error, ValueError):
        return None


def _powershell(args: tuple[str, ...]) -> Program:
    """pwsh/powershell: -Command CODE (the rest of the line), -EncodedCommand B64, -File SCRIPT, or a script."""
    i = 0
    while i < len(args):
        token = args[i]
        name = token.lstrip("-/").lower() if token[:1] in "-/" and len(token) > 1 else ""
        if not name:
            break
        if name in ("c", "command") or (len(name) >= 3 and "command".startswith(name)):
            rest = args[i + 1:]
            return Program("powershell", reads_stdin=True) if rest == ("-",) else Program("powershell", " ".join(rest))
        if name in ("e", "ec") or (len(name) >= 2 and "encodedcommand".startswith(name)):
            return Program("powershell", _utf16(args[i + 1]) if i + 1 < len(args) else None, encoded=True)
        if name in ("f", "file") or (len(name) >= 2 and "file".startswith(name)):
            return Program("powershell", script=args[i + 1] if i + 1 < len(args) else "-")
        i += 2 if name in _PS_VALUES else 1
    rest = args[i:]
    return Program("powershell", script=rest[0]) if rest else Program("powershell", reads_stdin=True)


def program_of(lang: str, args: tuple[str, ...]) -> Program:
    """Which code an interpreter invocation runs, from its arguments."""
    if lang == "powershell":
        return _powershell(args)
    if lang == "node" and args[:1] == ("eval",):  # deno eval CODE
        return Program(lang, " ".join(args[1:2]))
    if lang == "node" and args[:1] == ("run",):  # deno run [options] SCRIPT
        args = args[1:]
    code: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token in _CODE_FLAGS[lang] or (lang == "perl" and re.fullmatch(r"-[a-zA-DF-Z0-9]*[eE]", token)):
            code.extend(args[i + 1:i + 2])
            i += 2
            continue
        if token.startswith("--eval=") or (lang == "python" and token == "-m"):
            return Program(lang, token.partition("=")[2] if token.startswith("--eval=") else None)
        if token in _VALUE_FLAGS[lang]:
            i += 2
            continue
        if token == "-" or not token.startswith("-"):
            break
        if lang == "awk" and token == "-f":
            return Program(lang, script=args[i + 1] if i + 1 < len(args) else "-")
        i += 1
    if lang == "awk":  # awk 'PROGRAM' FILE...: the first operand is the code; stdin is data
        program = "\n".join(code) if code else (args[i] if i < len(args) else None)
        return Program(lang, awk_bind(program, _awk_assignments(args)) if program else None)
    if code:
        return Program(lang, "\n".join(code))
    rest = args[i:]
    if not rest or rest[0] == "-":
        return Program(lang, reads_stdin=True)
    return Program(lang, script=rest[0])


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call) and _dotted(node.func) == "__import__" and node.args:
        first = node.args[0]
        return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else "?"
    return "?"


def _strings(node: ast.AST) -> list[str] | None:
    """A string constant, or a list/tuple of them, as words; None when not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        words = [_strings(e) for e in node.elts]
        return None if any(w is None or len(w) != 1 for w in words) else [w[0] for w in words]  # type: ignore[index]
    if isinstance(node, ast.Call) and _dotted(node.func).endswith("Path") and node.args:
        return _strings(node.args[0])
    return None


def _awk_assignments(args: tuple[str, ...]) -> dict[str, str]:
    """awk's -v NAME=VALUE (and --assign) variables."""
    pairs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-v", "--assign")]
    pairs += [a[2:] for a in args if a.startswith("-v") and len(a) > 2]
    return dict(p.split("=", 1) for p in pairs if "=" in p and p.split("=", 1)[0].isidentifier())


def _command(words: list[str] | None, as_string: bool) -> list[Invocation]:
    if words is None:
        return [Invocation(program="<code>", detector="opaque_command")]
    if as_string:
        return parse_shell(words[0])
    return [Invocation(program=words[0], args=tuple(words[1:]))] if words else []


def _imports(tree: ast.AST) -> dict[str, str]:
    """Local names bound by imports: `import subprocess as s` gives s, `from shutil import rmtree` rmtree."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return names


def _python(code: str) -> list[Invocation] | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    out: list[Invocation] = []
    imported = _imports(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        head, dot, rest = _dotted(node.func).partition(".")
        name = imported.get(head, head) + dot + rest
        words = _strings(node.args[0])
        if name in PY_EXEC:
            if PY_FETCH.search(ast.unparse(node.args[0])):
                out.append(Invocation(program="python", detector="remote_code"))
            elif words and isinstance(node.args[0], ast.Constant):
                out += _python(words[0]) or []
        elif name in PY_SHELL:
            out += _command(words, as_string=words is not None and len(words) == 1 and isinstance(
                node.args[0], ast.Constant))
        elif name in PY_TREE | PY_FILE:
            target = words[0] if words else f"${{{ast.unparse(node.args[0])}}}"  # not literal: a variable path
            out.append(Invocation(program="rm", args=(("-r", "-f") if name in PY_TREE else ("-f",)) + (target,)))
    return out


def _literal_args(text: str) -> list[str]:
    return [m.group(2) for m in _STRING.finditer(text)]


def _script(code: str) -> list[Invocation]:
    """perl, ruby, node, php and unparseable python: calls with string-literal arguments."""
    out: list[Invocation] = []
    for match in _SHELL_CALL.finditer(code):
        inner = _OPTIONS.sub("", match.group(1))
        words = _literal_args(inner)
        array = "[" in inner
        out += _command(words or None, as_string=len(words) == 1 and not array)
    for match in _BARE_CALL.finditer(_SHELL_CALL.sub("", code)):
        words = _literal_args(match.group(1))
        out += _command(words, as_string=len(words) == 1)
    for match in _BACKTICK.finditer(code):
        out += parse_shell(next(g for g in match.groups() if g))
    for match in _RECURSIVE_CALL.finditer(code):
        out.append(Invocation(program="rm", args=("-r", "-f", match.group(2))))
    for match in _TREE_CALL.finditer(code):
        words = _literal_args(match.group(1)) or [f"${{{match.group(1).strip()}}}"]  # not literal: a variable path
        recursive = not _NODE_NONRECURSIVE.match(match.group()) or "recursive" in match.group(1)
        if recursive:
            out.append(Invocation(program="rm", args=("-r", "-f", words[0])))
    return out + process_effects(code, files=True)


def _walk_delete(call: str, pattern: str) -> Invocation:
    """Files deleted over a walk (`os.walk(P)`, `find(sub{unlink}, P)`, `glob("P/**/*")`): rm -rf of where it
    starts; over a one-level glob (`glob("/var/lib/mysql/*.ibd")`): rm -f of the pattern."""
    if not re.match(r"\W*(?:os\.walk|find|rglob|walkSync)\b", call) and "**" not in pattern:
        return Invocation(program="rm", args=("-f", pattern))
    parts = pattern.split("/")
    fixed = parts[:next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), len(parts))]
    return Invocation(program="rm", args=("-r", "-f", "/".join(fixed) or "/"))


def process_effects(code: str, *, files: bool) -> list[Invocation]:
    """What any interpreter's code does to files and processes: a file deleted (`unlink("/etc/passwd")`,
    `os.remove(...)` in lua) is `rm -f`, a process killed is `kill -9`, a fork loop a fork bomb."""
    out = [Invocation(program="rm", args=("-f", m.group(2))) for m in _FILE_CALL.finditer(code)] if files else []
    if _DELETES.search(code):  # deleting while walking a tree: the tree's files go; over a glob: what it matches
        out += [_walk_delete(m.group(0), m.group(2)) for m in _WALK.finditer(code)]
    if _KILL_CALL.search(code):
        out.append(Invocation(program="kill", args=("-9", "$(code)")))
    if _FORK_LOOP.search(code):
        out.append(Invocation(program="<code>", detector="fork_bomb"))
    return out


def code_invocations(lang: str, code: str) -> list[Invocation]:
    """What a piece of interpreter code runs or deletes, as invocations."""
    if lang == "powershell":
        return powershell(code)
    hidden = decoded_or_fetched(code)
    if hidden:
        return hidden
    if lang in FOREIGN:
        return FOREIGN[lang](code)
    if lang == "awk":
        return _script(code) + awk_pipes(code)
    found = _python(code) if lang == "python" else None
    found = _script(code) if found is None else found + process_effects(code, files=False)
    return found + _api_deletes(code)


# An SDK call named for deleting what it is called on: Django's `.objects.all().delete()`, `wandb.Api().run(x).delete()`,
# MLflow's `delete_registered_model(...)`, `bucket.delete_blobs(...)`. Judged by the verb detector as `api.<method>`.
# (`remove`, `drop` and `discard` are also list, set and dataframe operations in memory.)
_API_DELETE = re.compile(r"(?<!File)(?<!FileUtils)(?<!Dir)(?<!fs)(?<!os)(?<!path)(?<!Path)(?<!Files)(?<!shutil)"
                         r"(?:\.|->)((?:delete|destroy|purge|truncate|wipe)(?:_\w+|[A-Z]\w*)?)\s*\(")  # (file APIs: the path rules)


def _api_deletes(code: str) -> list[Invocation]:
    return [Invocation(program=f"api.{name}") for name in dict.fromkeys(_API_DELETE.findall(code))]
