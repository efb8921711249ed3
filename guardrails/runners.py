"""Programs that run code given to them: shells, source, at, and interpreters (python, perl, ruby, node, php).

Where the code is known (a -c string, a heredoc, `echo ... |`, a decoded literal) it is parsed and checked
like any command. Where it is not, the invocation becomes a detector finding about its origin:
`remote_code` (fetched from the network: `curl | sh`, `sh <(curl)`, `bash -c "$(curl)"`,
`curl -o f URL && sh f` with no checksum check between),
`encoded_code` (decoded before it runs: `base64 -d | sh`), `opaque_command` (the program or script
is an unresolved variable, or another program's output: `eval "$CMD"`, `... | sed ... | sh`) and
`unseen_script` (read from a file the line does not show: `bash -s < fix.sh`, `psql < hotfix.sql`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import replace

from guardrails.interpreters import Program, code_invocations, language, program_of
from guardrails.invocation import Invocation
from guardrails.resolve import is_parameter
from guardrails.shell import UNPACKED, parse_shell, program_name
from guardrails.streams import decodes, is_fetch, output_of
from guardrails.verbs import COMMAND_OPTIONS, READ_PROGRAMS, READS, STATEMENT_READERS, leading_words, parts

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "fish", "csh", "tcsh", "ksh93",
                    "qsh"})  # (IBM i's QShell)
SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
SOURCES = frozenset({"source", "."})
SCHEDULERS = frozenset({"at", "batch"})
# Variables that conventionally hold an optional prefix (`$SUDO systemctl ...`): the rest is the command.
PREFIX_VARIABLES = frozenset({"sudo", "maybe_sudo", "sudo_cmd", "doas", "sudo_prefix"})
# Programs whose output is meant to be eval'ed: shell environment setup (eval "$(ssh-agent -s)").
ENV_SETUP = frozenset({"ssh-agent", "gpg-agent", "keychain", "direnv", "pyenv", "rbenv", "nodenv", "goenv", "jenv",
                       "plenv", "conda", "mamba", "micromamba", "brew", "dircolors", "minikube", "docker-machine",
                       "starship", "zoxide", "fnm", "mise", "rtx", "asdf", "opam", "thefuck", "resize", "dbus-launch",
                       "luarocks", "register-python-argcomplete", "printf", "echo"})
SETUP_WORDS = frozenset({"completion", "init", "env", "shellenv", "hook", "activate", "docker-env", "podman-env",
                         "-s", "--sh", "path"})
STDIN_PATHS = frozenset({"-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"})
_URL = re.compile(r"(?i)^(?:https?|ftp)://")  # deno run https://..., a script run straight from the network


_VARIABLE = re.compile(r"\$\{?[A-Za-z_@*]|%[A-Za-z_]\w*%|\$\(|`")  # (or another command's output: $(date +%a)_step.sh)
_SCRIPT_SUFFIX = re.compile(r"(?i)\.(?:sh|bash|py|rb|pl|ps1|bat|cmd|sql|js|exe)$")


def unknown_name(path: str) -> bool:
    """Whether which program or script a path names is in a variable: `$CMD`, `/scripts/$STEP.sh`,
    `"$DIR/$ACTION.sh"` (`$KAFKA_HOME/bin/kafka-topics.sh` names its program)."""
    name = re.sub(r"^%\w+%", "", re.split(r"[/\\]", path)[-1])  # %windir%\system32\x.exe: the folder is the variable
    if is_parameter(path):
        return True
    looks_like_a_file = name != path or bool(_SCRIPT_SUFFIX.search(name))  # not PowerShell's $_.Status
    return looks_like_a_file and bool(_VARIABLE.search(name)) and not name.endswith("$")  # not $body$ quoting


def detector(inv: Invocation, name: str) -> Invocation:
    """A finding-only invocation: this command runs code of this kind."""
    return Invocation(program=inv.program, detector=name)


def fetches(word: str) -> bool:
    """Whether a word is (or contains) a substitution that downloads: `$(curl URL)`, `<(wget -qO- URL)`."""
    if "$(" not in word and "<(" not in word and "`" not in word:
        return False
    return any(is_fetch(inv) for inv in parse_shell(word))


_LOCAL_SCRIPT = re.compile(r"\.(?:sh|py|pl|run|bin)$|^(?:install|setup|installer|bootstrap)$")  # what an archive ships


def downloaded(inv: Invocation, path: str) -> bool:
    """Whether a script was downloaded earlier on the line and not verified (curl -o f URL && sh f), or shipped in
    an archive downloaded and unpacked on the line (wget X.tar.gz && tar xzf X.tar.gz && ./install.sh)."""
    return posixpath.basename(path) in inv.fetched or (UNPACKED in inv.fetched and (
        path.startswith("./") or bool(_LOCAL_SCRIPT.search(posixpath.basename(path)))))


def _bind_positionals(code: str, params: tuple[str, ...]) -> str:
    """sh -c CODE ARG0 ARG1...: $0, $1, ... and "$@" in CODE are those literal words."""
    if not params or any("$" in p or "`" in p for p in params):
        return code
    values = {str(n): shlex.quote(p) for n, p in enumerate(params)}
    code = re.sub(r'"?\$\{?([0-9])\}?"?', lambda m: values.get(m.group(1), m.group(0)), code)
    return re.sub(r'"?\$[@*]"?', " ".join(shlex.quote(p) for p in params[1:]), code)


def shell_program(args: tuple[str, ...]) -> Program:
    """Which code a shell runs: its -c string, its stdin (no script, `-s` or `-`), or a script file;
    with -n (noexec) nothing: the shell only checks the syntax."""
    i = 0
    while i < len(args):
        token = args[i]
        if token.startswith("-") and not token.startswith("--") and "n" in token[1:] and "c" not in token[1:]:
            return Program("sh", code="")  # bash -n SCRIPT, curl ... | bash -n: read, never run
        if token.startswith(("-", "+")) and token not in ("-", "--"):
            letters = token.lstrip("-+")
            if token.startswith("-") and not token.startswith("--") and "c" in letters:
                code = args[i + 1] if i + 1 < len(args) else ""
                return Program("sh", code=_bind_positionals(code, args[i + 2:]))
            if "s" in letters and not token.startswith("--"):
                return Program("sh", reads_stdin=True)
            i += 2 if token in SHELL_VALUES or (token[1:2] != "-" and letters[-1:] in ("o", "O")) else 1
            continue
        break
    rest = args[i + 1:] if args[i:i + 1] == ("--",) else args[i:]
    if not rest or rest[0] == "-":
        return Program("sh", reads_stdin=True)
    return Program("sh", script=rest[0])


def _code(lang: str, code: str) -> list[Invocation]:
    return parse_shell(code) if lang == "sh" else code_invocations(lang, code)


def _from_stdin(inv: Invocation, lang: str) -> list[Invocation]:
    """The code a runner reads on stdin, by where the stdin comes from."""
    origin = inv.stdin_from
    if origin == "remote":
        return [detector(inv, "remote_code")]
    if origin == "literal" and inv.stdin and is_parameter(inv.stdin.strip(), positional=True):
        return [detector(inv, "opaque_command")]  # python3 - <<< "$CODE"
    found = _code(lang, inv.stdin) if inv.stdin else []
    if origin == "decoded":
        return [detector(inv, "encoded_code"), *found]
    if origin == "program":
        return [detector(inv, "opaque_command")]
    if origin == "file":  # ssh db 'bash -s' < fix.sh, python3 - < "$PATCH": code the line does not show
        return [detector(inv, "unseen_script")]
    return found


def _setup(inner: list[Invocation]) -> bool:
    """Whether the last of some commands prints shell environment setup (`ssh-agent -s`, `kubectl completion bash`)."""
    return bool(inner) and (inner[-1].program in ENV_SETUP or bool(SETUP_WORDS & set(inner[-1].args)))


def _generated(script: str) -> bool:
    """A script that is another program's output (`source <(kubectl get cm hooks -o jsonpath=...)`), not
    environment setup (`source <(kubectl completion bash)`)."""
    return script.startswith(("<(", "$(", "`")) and not _setup(parse_shell(script))


def run(inv: Invocation, program: Program) -> list[Invocation]:
    """What a runner runs, given which code it was handed."""
    if program.encoded:  # pwsh -EncodedCommand: reported, and read when it decodes
        return [detector(inv, "encoded_code"), *(_code(program.language, program.code) if program.code else [])]
    if program.code is not None:
        if program.language != "sh" and fetches(program.code):  # a shell's code is parsed: see unresolved()
            return [detector(inv, "remote_code")]
        code = program.code.strip()
        if re.fullmatch(r"(?:\$\((?:cat\s+|<\s*)[^()]+\)|`cat\s+[^`]+`)", code):
            return [detector(inv, "unseen_script")]  # perl -e "$(cat /tmp/oneliner)": a file's contents
        if (program.language != "sh" and is_parameter(code)) or is_parameter(code.strip("'\""), positional=True) \
                or (inv.dynamic and code in ("{}", "{+}")):
            return [detector(inv, "opaque_command")]  # the code is a variable, or xargs' input
        return _code(program.language, program.code)
    if program.script is not None:
        if fetches(program.script) or downloaded(inv, program.script) or _URL.match(program.script):
            return [detector(inv, "remote_code")]
        if unknown_name(program.script) or _generated(program.script):
            return [detector(inv, "opaque_command")]
        return _from_stdin(inv, program.language) if program.script in STDIN_PATHS else []
    return _from_stdin(inv, program.language) if program.reads_stdin else []


def unresolved(inv: Invocation) -> list[Invocation] | None:
    """Findings for a command whose own name is unknown or fetched; None when the name is a real program."""
    if inv.detector:
        return []
    if fetches(inv.program) or downloaded(inv, inv.program):
        return [detector(inv, "remote_code")]
    if "$(" in inv.program or "`" in inv.program:  # the command is another command's output
        inner = parse_shell(inv.program)
        if any(decodes(i) for i in inner):  # run what a literal decodes to, too (echo B64 | base64 -d)
            text = output_of(inner[-1]).text
            return [detector(inv, "encoded_code"), *(parse_shell(text) if text else [])]
        if not inv.args and inv.program.startswith("$(") and inner and not _setup(inner):  # eval "$(kubectl get cm ...)"
            return [detector(inv, "opaque_command")]
    if is_parameter(inv.program):
        if inv.args and inv.program.strip("${}").lower() in PREFIX_VARIABLES:
            return [replace(inv, program=program_name(inv.args[0]), args=inv.args[1:])]  # $SUDO CMD: runs CMD
        if not inv.args or not inv.program.islower():  # $HOOK --target prod: set outside the line, unknown
            return [detector(inv, "opaque_command")]  # (lower-case names are loop or local variables)
    elif unknown_name(inv.program):  # /scripts/$STEP.sh: the script's own name is in a variable
        return [detector(inv, "opaque_command")]
    elif inv.dynamic and inv.program in ("{}", "{+}"):
        return [detector(inv, "opaque_command")]  # find ... -exec {} \;: whatever files it finds
    return None


def _scheduled(args: tuple[str, ...]) -> Program:
    """at/batch: the job is read from stdin, or from -f FILE; -l, -r, -c only list, remove or show jobs."""
    if any(a in ("-l", "-r", "-d", "-c") for a in args):
        return Program("sh")
    script = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-f"), None)
    return Program("sh", script=script) if script else Program("sh", reads_stdin=True)


def runner(inv: Invocation) -> list[Invocation] | None:
    """What a shell, source, at or an interpreter runs; None when the invocation is not one of those."""
    if inv.program in SHELLS:
        return run(inv, shell_program(inv.args))
    if inv.program in SOURCES:
        return run(inv, Program("sh", script=inv.args[0] if inv.args else "-"))
    if inv.program in SCHEDULERS:
        return run(inv, _scheduled(inv.args))
    lang = language(inv.program)
    return run(inv, program_of(lang, inv.args)) if lang else None


# A variable named for code or a command (`$AST_CMD`, `$PHP_SNIPPET`, `$SQL_FILE`, `$1`): handed to a tool's console
# (`asterisk -rx "$AST_CMD"`, `drush php:eval "$PHP_SNIPPET"`, `echo "$BCMD" | bconsole`), what runs is unknown.
_CODE_VARIABLE = re.compile(r"(?i)^[\"']?\$\{?(?:\w*?(?:CMD|COMMANDS?|SCRIPT|SNIPPET|SQL|STMT|STATEMENT|CODE|JS|LUA|PHP"
                            r"|GROOVY|EXPR|ROUTINE|ACTION|VERB|OPERATION|ARGS|_OP|PROC|MANIFESTS?|PATCH|YAML)(?:_?(?:FILE|TEXT|STR|BODY|S))?"
                            r")\}?[\"']?$")
_POSITIONAL = re.compile(r"^[\"']?\$\{?[1-9@*]\}?[\"']?$")  # `su - app -c "$1"`: the script's argument, as code
_CODE_OPTION = re.compile(r"(?i)^[\w.-]*(?:script|code|command|cmd|exec|execute|eval|query|sql)=(.+)$")  # script=$SCRIPT
# Words that say a console reads what it is fed as commands: `wp shell < x.php`, `jenkins-cli groovy = < fix.groovy`.
_CONSOLE_WORDS = re.compile(r"(?i)(?:^|[-_.])(?:shell|console|session|repl|groovy|eval|tinker|script)(?:$|[-_.])")
# Programs whose arguments are text they print, log or match, never commands they run.
_TEXT_PROGRAMS = frozenset({"echo", "printf", "logger", "grep", "egrep", "fgrep", "rg", "sed", "awk", "jq", "yq", "tr",
                            "cut", "printenv", "export", "declare", "local", "readonly", "test", "[", "[[", "read",
                            "wall", "notify-send", "mail", "mailx", "sendmail", "base64", "xxd", "wc", "tee", "set"})
_CHECKERS = frozenset({"shellcheck", "less", "more", "vi", "vim", "nano", "view", "notepad", "code", "bat", "file",
                       "stat", "ls", "sha256sum", "md5sum", "diff", "php-l", "pylint", "yamllint", "ansible-lint"})
_POWERSHELL_OUTPUT = ("write-", "out-", "format-", "convertto-", "convertfrom-", "get-", "test-", "select-", "measure-")


def code_in_variable(inv: Invocation) -> str | None:
    """`opaque_command` when a tool is handed code or a command in a variable, `unseen_script` when a console
    is fed a file; None otherwise (the tool's own rules and verbs judge it)."""
    program = inv.program.lower()
    if program in ("/import", "import") and any(a.startswith("file-name=") for a in inv.args):
        return "unseen_script"  # RouterOS runs the script file's commands
    if program in _TEXT_PROGRAMS | READ_PROGRAMS | _CHECKERS or inv.program in SHELLS or language(inv.program) \
            or program.startswith(_POWERSHELL_OUTPUT):
        return None  # shells and interpreters: run() reads their code
    if any(READS.intersection(parts(w)) for w in leading_words(inv)[1:]):
        return None  # `kea-shell ... config-test < new.json`, `az monitor ... list --resource $SQL_ID`
    for n, arg in enumerate(inv.args):
        option = _CODE_OPTION.match(arg)
        if _CODE_VARIABLE.match(arg) or (option and _CODE_VARIABLE.match(option.group(1))):
            return "opaque_command"
        if n and inv.args[n - 1] in COMMAND_OPTIONS and _POSITIONAL.match(arg):
            return "opaque_command"
    if inv.stdin_from == "literal" and inv.stdin and _CODE_VARIABLE.match(inv.stdin.strip()):
        return "opaque_command"  # echo "$BCMD" | bconsole, qcon <<< "$Q_EXPR"
    if inv.stdin_from == "decoded" and program in ("kubectl", "oc") and {"apply", "create", "replace"} & set(inv.args):
        return "opaque_command"  # echo "$PATCH_B64" | base64 -d | kubectl apply -f -: the manifest is not shown
    if inv.stdin_from == "remote" and program in STATEMENT_READERS:
        return "remote_code"  # curl -s https://.../fix.js | mongosh "$URI": statements from the network
    if inv.stdin_from == "decoded" and program in STATEMENT_READERS and inv.feed[:1] in (("base64",), ("openssl",)):
        return "encoded_code"  # echo "$B64" | base64 -d | mongosh "$URI": statements in an encoding (not zcat dump.gz)
    if inv.stdin_from == "file" and any(_CONSOLE_WORDS.search(w) for w in (inv.program, *inv.args[:3])):
        return "unseen_script"  # bconsole < "$SCRIPT", csession PROD < fix.mac
    return None
