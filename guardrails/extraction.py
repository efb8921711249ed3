"""Commands found in Markdown or plain text: code fences, inline code, `$ ` prompt lines.

Fenced shell blocks are split into top-level commands by bashlex (heredocs, continuations,
loops stay whole), line by line when bashlex gives up. SQL fences are split into statements.
Fences in other languages (yaml, json, promql, python, ...) are not commands and are skipped.
"""

from __future__ import annotations

import re
from typing import Any

import bashlex

from guardrails.fallback import logical_lines
from guardrails.invocation import mask_placeholders, program_name
from guardrails.shell import MAX_BASHLEX_CHARS
from guardrails.sql import looks_like_sql, split_statements

SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "zsh", "ksh", "console", "shell-session", "shellsession",
                         "terminal", "text", "txt", "plaintext", "plain", "none", "cli", "cmd", "session"})
PROMPT_LANGS = frozenset({"console", "shell-session", "shellsession", "terminal", "session"})
SQL_LANGS = frozenset({"sql", "psql", "pgsql", "postgresql", "postgres", "plpgsql", "mysql", "sqlite", "tsql"})
KNOWN_PROGRAMS = frozenset("""
rm rmdir mv cp dd mkfs mke2fs mkswap shred wipefs sgdisk blkdiscard fdisk parted chmod chown chgrp find
xargs sudo su doas ssh scp rsync bash sh zsh env nohup timeout watch eval exec kubectl oc helm kustomize
terraform tofu terragrunt aws gcloud gsutil az docker docker-compose podman crictl ctr nerdctl git
redis-cli valkey-cli etcdctl psql gitlab-psql mysql mariadb sqlite3 mongo mongosh clickhouse-client
cockroach systemctl service journalctl shutdown reboot halt poweroff init telinit iptables ip6tables nft
ufw kill killall pkill crontab df du ls cat tail head less grep egrep zgrep rg awk sed sort uniq wc top
htop free vmstat iostat iotop ps pgrep lsof netstat ss ip ifconfig ping dig nslookup host curl wget
openssl tcpdump traceroute mtr nc telnet promtool amtool jq yq truncate tee echo printf mount umount
lsblk blkid dmesg uptime sysctl strace perf patronictl pg_dump pg_restore pg_ctl pg_basebackup
pg_ctlcluster gitlab-ctl gitlab-rake gitlab-rails consul vault nomad argocd flux istioctl velero stern
cmctl ansible ansible-playbook salt knife rake gitlab-rake bundle apt apt-get yum dnf gzip tar base64 touch
mkdir ln stat chroot
nsenter coredumpctl growpart resize2fs xfs_growfs lvextend ncdu kubeadm eksctl tsh gsutil
""".split())
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_INLINE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_PROMPT = re.compile(r"^[ \t]*(?:[\w.-]+@[\w.-]+(?::[^$#\n]*)?)?\$[ \t]+(?P<cmd>\S.*)$")
_DIR_PROMPT = re.compile(r"^[ \t]*[\w.~/-]+ ?\$[ \t]+(?P<cmd>\S.*)$")  # chef-repo $ knife ...
_ROOT_PROMPT = re.compile(r"^[ \t]*(?:[\w.-]+@[\w.-]+(?::[^$#\n]*)?)?[#%][ \t]+(?P<cmd>\S.*)$")


def _fences(text: str) -> tuple[list[tuple[str, str]], str]:
    """(language, body) of each fenced block, and the text outside fences."""
    blocks: list[tuple[str, str]] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if not opening:
            prose.append(lines[i])
            i += 1
            continue
        fence, indent = opening.group("fence"), len(opening.group("indent"))
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), len(lines))
        body = "\n".join(_dedent(line, indent) for line in lines[i + 1:end])
        blocks.append(((opening.group("info").split() or [""])[0].lower(), body))
        prose.append("")
        i = end + 1
    return blocks, "\n".join(prose)


def _dedent(line: str, indent: int) -> str:
    strip = len(line) - len(line.lstrip(" \t"))
    return line[min(strip, indent):]


def _span(node: Any) -> tuple[int, int]:
    start, end = getattr(node, "pos", (10**9, -1))
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            s, e = _span(child)
            start, end = min(start, s), max(end, e)
    for attr in ("command", "heredoc", "output"):
        child = getattr(node, attr, None)
        if hasattr(child, "kind"):
            s, e = _span(child)
            start, end = min(start, s), max(end, e)
    return start, end


def split_script(script: str) -> list[str]:
    """Top-level commands of a shell script (comments and blank lines dropped)."""
    if len(script) <= MAX_BASHLEX_CHARS:
        try:
            nodes = bashlex.parse(mask_placeholders(script))
            return [script[s:e].strip() for s, e in map(_span, nodes) if script[s:e].strip()]
        except Exception:  # bashlex fails on some valid shell; fall back to lines
            pass
    out = []
    for line, body in logical_lines(script):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.strip() if body is None else f"{line.strip()}\n{body}\n{_delimiter(line)}")
    return out


def _delimiter(line: str) -> str:
    match = re.search(r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1", line)
    return match.group(2) if match else "EOF"


def _prompt(line: str) -> re.Match[str] | None:
    """A `$ ` prompt line; `dir $ cmd` only when cmd starts with a known program."""
    match = _PROMPT.match(line)
    if match is None and (match := _DIR_PROMPT.match(line)):
        first = match.group("cmd").split()[0]
        return match if program_name(first) in KNOWN_PROGRAMS or first == "sudo" else None
    return match


def _prompt_commands(body: str, root_prompt: bool) -> list[str]:
    """Commands of a console transcript: prompt lines (with their continuations); output skipped."""
    out: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        match = _prompt(lines[i]) or (_ROOT_PROMPT.match(lines[i]) if root_prompt else None)
        i += 1
        if not match:
            continue
        command = match.group("cmd")
        while command.rstrip().endswith("\\") and i < len(lines):
            command += "\n" + re.sub(r"^\s*>\s?", "", lines[i])
            i += 1
        out.extend(split_script(command))
    return out


def _block_commands(lang: str, body: str) -> list[str]:
    if lang in SQL_LANGS:
        return split_statements(body)
    if lang not in SHELL_LANGS:
        return []
    prompted = any(_prompt(line) for line in body.splitlines())
    if lang in PROMPT_LANGS or prompted:
        return _prompt_commands(body, root_prompt=lang in PROMPT_LANGS)
    return split_script(body)


def _is_command(snippet: str, min_words: int = 2) -> bool:
    """Whether an inline code span or a bare line reads as a command rather than a name or a path."""
    words = snippet.split()
    if words and words[0] in ("sudo", "$"):
        words = words[1:]
    if not words:
        return False
    if words[0].startswith(":(){") or words[0].startswith(":()"):
        return True
    if len(words) < min_words:
        return False
    first = program_name(words[0])
    if first in KNOWN_PROGRAMS or first.startswith(("kafka-", "mkfs.")) or words[0].startswith("./"):
        return True
    return words[0].isupper() and looks_like_sql(" ".join(words))


def _inline(prose: str) -> list[str]:
    spans = (m.group(2) for m in _INLINE.finditer(prose) if "\n\n" not in m.group(2))
    spans = (re.sub(r"[ \t]*\n[ \t]*", " ", s).strip() for s in spans)  # a code span's line ends are spaces
    return [s for s in spans if _is_command(s)]


def extract_commands(text: str) -> list[str]:
    """Commands found in Markdown or plain text, in order of appearance within each kind."""
    blocks, prose = _fences(text)
    commands = [c for lang, body in blocks for c in _block_commands(lang, body)]
    prompted = [c for line in prose.splitlines() if (m := _prompt(line)) for c in split_script(m.group("cmd"))]
    inline = _inline(prose)
    if blocks or prompted or _INLINE.search(prose):
        return commands + prompted + inline
    return [line for line in split_script(prose) if _is_command(line, min_words=1)]
