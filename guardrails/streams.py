"""What a command writes to a pipe: its literal text when knowable, and where the bytes come from.

Origins: `literal` (echo, printf, cat <<EOF: the text is known), `remote` (curl/wget to stdout),
`decoded` (base64 -d and decompressors: the text is known only when a literal was decoded),
`file` (cat FILE: a local file) and `program` (any other program's output). Pass-through
filters (tee, cat without files, pv) keep the origin of their input.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from guardrails.invocation import Invocation
from guardrails.resolve import ansi_c

_ECHO_FLAGS = re.compile(r"-[neE]+")
_PRINTF_SPEC = re.compile(r"%(%|[-+ #0]*\d*(?:\.\d+)?[sbdiouxXcfgeE])")
DECOMPRESSORS = frozenset({"gunzip", "zcat", "bunzip2", "bzcat", "xzcat", "unxz", "zstdcat", "uudecode"})
PASS_THROUGH = frozenset({"tee", "cat", "pv", "buffer", "dos2unix"})


@dataclass(frozen=True)
class Stream:
    """Bytes on a pipe: their text when known, and their origin."""

    text: str | None
    origin: str


def _printf(args: tuple[str, ...]) -> str:
    """printf FORMAT ARGS: %s-like specifiers take the arguments in turn; the format repeats while any remain."""
    if not args:
        return ""
    fmt, rest = args[0], list(args[1:])
    out = []
    while True:
        used = 0

        def one(m: re.Match[str]) -> str:
            nonlocal used
            if m.group(1) == "%":
                return "%"
            used += 1
            return rest.pop(0) if rest else ""
        out.append(ansi_c(_PRINTF_SPEC.sub(one, fmt)))
        if not used or not rest:
            return "".join(out)


def literal_output(inv: Invocation) -> str | None:
    """The text echo, printf or `cat <<EOF` writes, when the command is one of those."""
    if inv.program == "echo":
        words = list(inv.args)
        while words and _ECHO_FLAGS.fullmatch(words[0]):
            words.pop(0)
        return " ".join(words).replace("\\n", "\n")
    if inv.program == "printf":
        return _printf(inv.args)
    if inv.program == "cat" and inv.stdin is not None and inv.stdin_from == "literal" and not inv.args:
        return inv.stdin
    if inv.program.startswith("@") and inv.program.endswith("@") and "\n" in inv.program and not inv.args:
        return inv.program.strip("@").strip("\n")  # a PowerShell here-string: @"\nselect disk 1\nclean\n"@ | diskpart
    if " " in inv.program.strip() and all(a.endswith(",") for a in (inv.program, *inv.args[:-1])):
        # PowerShell writes an array of strings one per line: "select disk 0", "clean all" | diskpart
        return "\n".join(w.rstrip(",").strip() for w in (inv.program, *inv.args))
    return None


def _short_flags(args: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(i, a[1:]) for i, a in enumerate(args) if a.startswith("-") and not a.startswith("--") and len(a) > 1]


def _curl_to_stdout(args: tuple[str, ...]) -> bool:
    for i, token in enumerate(args):
        if token in ("--remote-name", "--remote-name-all", "-O"):
            return False
        if token in ("-o", "--output") and i + 1 < len(args):
            return args[i + 1] == "-"
        if token.startswith("--output="):
            return token == "--output=-"
    for i, letters in _short_flags(args):
        if "O" in letters:
            return False
        if "o" in letters:
            after = letters[letters.index("o") + 1:] or (args[i + 1] if i + 1 < len(args) else "-")
            return after == "-"
    return True


def _wget_to_stdout(args: tuple[str, ...]) -> bool:
    for i, token in enumerate(args):
        if token.startswith("--output-document="):
            return token.endswith("=-")
        if token == "--output-document":
            return args[i + 1:i + 2] == ("-",)
    for i, letters in _short_flags(args):
        if "O" in letters:
            after = letters[letters.index("O") + 1:] or (args[i + 1] if i + 1 < len(args) else "")
            return after == "-"
    return False


def is_fetch(inv: Invocation) -> bool:
    """Whether the command downloads something and writes it to stdout (curl URL, wget -qO- URL, http URL)."""
    if inv.program == "curl":
        return _curl_to_stdout(inv.args)
    if inv.program == "wget":
        return _wget_to_stdout(inv.args)
    return inv.program in ("http", "https") and any("://" in a or a.startswith(":") for a in inv.args)


def _url_name(args: tuple[str, ...]) -> str | None:
    url = next((a for a in args if "://" in a), None)
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or None if url else None


def _value(args: tuple[str, ...], names: tuple[str, ...], short: str) -> str | None:
    """The value of an output option: -o F, --output F, --output=F, -oF, -fsSLo F."""
    for i, token in enumerate(args):
        name, eq, value = token.partition("=")
        if name in names and (eq or i + 1 < len(args)):
            return value if eq else args[i + 1]
    for i, letters in _short_flags(args):
        if short in letters:
            return letters[letters.index(short) + 1:] or (args[i + 1] if i + 1 < len(args) else None)
    return None


CLONED = "clone:"  # in an Invocation's `fetched`: a directory cloned from a public repository earlier on the line
_PUBLIC_GIT = re.compile(r"^(?:https?://|git@)(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org"
                         r"|gist\.github\.com)[/:]")


def cloned_dir(inv: Invocation) -> str | None:
    """The directory `git clone URL [DIR]` of a public host's repository writes (someone else's code), or None."""
    if inv.program != "git" or "clone" not in inv.args:
        return None
    words = [a for a in inv.args[inv.args.index("clone") + 1:] if not a.startswith("-")]
    if not words or not _PUBLIC_GIT.match(words[0]):
        return None
    target = words[1] if len(words) > 1 else words[0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return target.rstrip("/").rsplit("/", 1)[-1] or None


def fetched_file(inv: Invocation) -> str | None:
    """The file a download writes (curl -o F, curl -O URL, wget URL, wget -O F), or None."""
    if inv.program == "curl" and not _curl_to_stdout(inv.args):
        named = _value(inv.args, ("-o", "--output"), "o")
        return named if named and named != "-" else _url_name(inv.args)
    if inv.program == "wget" and not _wget_to_stdout(inv.args):
        return _value(inv.args, ("-O", "--output-document"), "O") or _url_name(inv.args)
    if inv.program.lower() in ("certutil", "certutil.exe", "bitsadmin", "bitsadmin.exe") and any(
            a.lower() in ("-urlcache", "/urlcache", "/transfer") for a in inv.args):  # Windows: ... URL FILE
        url = next((i for i, a in enumerate(inv.args) if "://" in a), None)
        return inv.args[url + 1] if url is not None and url + 1 < len(inv.args) else None
    if inv.program in ("aria2c", "axel", "fetch") and any("://" in a for a in inv.args):  # -o F (aria2c: --out)
        named = _value(inv.args, ("-o", "--out", "--output"), "o")
        return named if named and named != "-" else (None if named == "-" else _url_name(inv.args))
    return None


def verifies(inv: Invocation) -> bool:
    """Whether the command checks a checksum or signature (sha256sum -c, gpg --verify, cosign verify)."""
    checks = {"-c", "--check"} & set(inv.args)
    return bool((inv.program.startswith("sha") or inv.program == "md5sum") and checks) or (
        inv.program in ("gpg", "gpgv", "cosign", "minisign") and any("verify" in a or a == "-V" for a in inv.args))


def decodes(inv: Invocation) -> bool:
    """Whether the command decodes or decompresses (base64 -d, xxd -r, openssl enc -d, gunzip)."""
    args = inv.args
    if inv.program == "base64":
        return any(a in ("-d", "-D", "--decode") or (a.startswith("-") and not a.startswith("--") and "d" in a)
                   for a in args)
    if inv.program == "openssl":
        return bool(args) and args[0] in ("base64", "enc") and "-d" in args
    if inv.program == "xxd":
        return any(a.startswith("-r") for a in args)
    if inv.program in ("gzip", "bzip2", "xz", "zstd"):
        return any(a in ("-d", "--decompress") or (a.startswith("-") and "d" in a[1:]) for a in args)
    return inv.program in DECOMPRESSORS


def _operands(inv: Invocation) -> list[str]:
    return [a for a in inv.args if not a.startswith("-")]


def _base64(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return base64.b64decode("".join(text.split()), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def output_of(inv: Invocation) -> Stream:
    """What the command writes to a pipe, given what it reads (inv.stdin / inv.stdin_from)."""
    text = literal_output(inv)
    if text is not None:
        return Stream(text, "literal")
    if is_fetch(inv):
        return Stream(None, "remote")
    if decodes(inv):
        if inv.stdin_from == "remote":
            return Stream(None, "remote")
        base64_text = inv.program == "base64" or (inv.program == "openssl" and {"base64", "-base64", "-a"} & set(inv.args))
        literal = bool(base64_text) and inv.stdin_from == "literal" and len(_operands(inv)) <= 1
        return Stream(_base64(inv.stdin) if literal else None, "decoded")
    if inv.program in PASS_THROUGH and (inv.program == "tee" or _operands(inv) in ([], ["-"])):
        return Stream(inv.stdin, inv.stdin_from or "program")
    if inv.program == "cat":
        return Stream(None, "file")
    return Stream(None, "program")
