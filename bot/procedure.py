"""A runbook's procedure as steps, read from its Markdown (pure functions, no retrieval).

A runbook says what an alert means, what it breaks, and then what to do: the sections under
headings such as Diagnosis, Mitigation, Resolution, Troubleshooting, or numbered headings
("## 1. Review the errors"). Their list items and paragraphs become steps in the runbook's order,
the commands in the code blocks that follow a step become its commands (sample output is left
out), and a sub-heading names the steps under it. A runbook without such headings is read from
the sections a search matched."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from retrieval.analyzer import analyze

MAX_INSTRUCTION_CHARS = 320
LONG_RUNBOOK_SECTIONS = 6  # above: steps come from the sections the search matched, not the whole runbook
_LINK_DEFINITION = re.compile(r"^\s*\[[^\]]+\]:\s*\S+")  # [1080]: https://... (a Markdown link reference)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s+(.*)$")
_NUMBERED_HEADING = re.compile(r"^(?:step\s*)?\d+[.):]?\s+\S", re.IGNORECASE)
_TABLE = re.compile(r"^\s*\|")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
# Heading words, as the analyzer stems them: what to do, and what only describes.
_DOING = frozenset(analyze(
    "diagnosis diagnose diagnostics mitigation mitigate resolution resolve remediation remediate troubleshooting "
    "troubleshoot investigation investigate fix fixing procedure steps actions respond response recovery recover "
    "restore workaround solution debugging debug handling handle runbook playbook checks verify rollback "
    "what to do how to"))
_DESCRIBING = frozenset(analyze(
    "meaning impact overview summary background description context symptoms about references links "
    "see also related further reading dashboards glossary prerequisites alert details"))
_SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh", "powershell", "ps", "cmd", "sql", "psql", "promql", "ruby",
                "rb", "python", "py", "text", ""}
_OUTPUT_LANGS = {"json", "yaml", "yml", "log", "output", "toml", "ini", "xml", "diff"}
_COMMAND_WORD = re.compile(
    r"^(?:\$|#|>|sudo|kubectl|k|helm|etcdctl|oc|docker|crictl|systemctl|journalctl|curl|wget|ssh|scp|psql|mysql|"
    r"redis-cli|gitlab-rails|gitlab-ctl|gitlab-rake|knife|chef-client|gcloud|aws|az|terraform|ansible|git|"
    r"cat|less|tail|head|grep|egrep|awk|sed|find|ls|du|df|free|top|htop|ps|kill|pkill|lsof|netstat|ss|ip|"
    r"ping|dig|nslookup|host|traceroute|mtr|tcpdump|openssl|vault|consul|nomad|patronictl|pg_\w+|mount|umount|"
    r"fdisk|lsblk|iostat|vmstat|sar|dmesg|uptime|date|chronyc|ntpq|timedatectl|export|echo|for|while|cd|mkdir|"
    r"rm|mv|cp|chmod|chown|tar|gzip|zcat|xargs|watch|jq|yq|python3?|ruby|rails|bundle|rake|make|go|npm|"
    r"promtool|amtool|thanos|mc|gsutil|bq|rsync|iptables|conntrack|sysctl|ulimit|mdadm|smartctl|\w+ctl)\b"
)


@dataclass(frozen=True)
class Block:
    """A piece of a runbook: a paragraph, a list item, or a code block, under its headings."""

    kind: str  # paragraph, item, code
    text: str
    headings: tuple[str, ...]  # the headings it sits under, outermost first
    section: int  # index of the section (as stored) it comes from
    lang: str = ""
    codes: tuple[tuple[str, str], ...] = ()  # an item's code blocks: (code, fence language)


@dataclass
class ProcedureStep:
    """One step read from a runbook: what to do, the commands, and the section it comes from."""

    instruction: str
    section: int
    commands: list[str] = field(default_factory=list)
    group: str = ""  # the procedure heading it sits under (Diagnosis, Mitigation...)


def blocks_of(sections: Sequence[str]) -> list[Block]:
    """The blocks of a runbook's sections (their Markdown, in order), with the headings they sit
    under; headings carry across sections, as they do in the document."""
    stack: list[tuple[int, str]] = []
    out: list[Block] = []
    for index, text in enumerate(sections):
        text = _FRONT_MATTER.sub("", text) if index == 0 else text
        for kind, body, level, lang, codes in _scan(text.splitlines()):
            if kind == "heading":
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, body))
                continue
            out.append(Block(kind, body, tuple(h for _, h in stack), index, lang, codes))
    return out


_Scanned = tuple[str, str, int, str, tuple[tuple[str, str], ...]]


def _scan(lines: list[str]) -> list[_Scanned]:
    """(kind, text, heading level, fence language, item code blocks) of each block, in order."""
    out: list[_Scanned] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(("paragraph", " ".join(line.strip() for line in para), 0, "", ()))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _FENCE.match(line):
            flush()
            body, i = _fenced(lines, i, m[1])
            out.append(("code", body, 0, m[2].lower(), ()))
        elif m := _HEADING.match(line):
            flush()
            out.append(("heading", _inline(m[2]), len(m[1]), "", ()))
        elif (m := _ITEM.match(line)) and len(m[1]) < 2:
            flush()
            text, codes, i = _item(lines, i)
            out.append(("item", text, 0, "number" if m[2] and line.lstrip()[:1].isdigit() else "bullet", codes))
            continue
        elif not line.strip() or _TABLE.match(line):
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return out


def _fenced(lines: list[str], i: int, marker: str) -> tuple[str, int]:
    """The body of the code block opened at line i, and the index of its closing line."""
    body: list[str] = []
    i += 1
    while i < len(lines) and not lines[i].strip().startswith(marker[:3]):
        body.append(lines[i])
        i += 1
    return _dedent(body), i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _item(lines: list[str], i: int) -> tuple[str, tuple[tuple[str, str], ...], int]:
    """A list item starting at line i with everything indented under it: its text (wrapped lines,
    then its nested items joined, then its paragraphs), its code blocks, and the next line's index."""
    base = _indent(lines[i])
    m = _ITEM.match(lines[i])
    head: list[str] = [m[2].strip()] if m else []
    nested: list[str] = []
    more: list[str] = []
    codes: list[tuple[str, str]] = []
    nested_indent: int | None = None
    blank = False
    i += 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            blank, i = True, i + 1
            continue
        if _indent(line) <= base:
            break
        if f := _FENCE.match(line):
            body, i = _fenced(lines, i, f[1])
            codes.append((body, f[2].lower()))
        elif (sub := _ITEM.match(line)) and (nested_indent is None or _indent(line) <= nested_indent):
            nested_indent = _indent(line) if nested_indent is None else nested_indent
            nested.append(_inline(sub[2]).rstrip(".;:"))
        elif _ITEM.match(line) or (nested and not blank) or _TABLE.match(line):
            pass  # deeper items, lines wrapped inside a nested item, tables
        elif blank or nested:
            more.append(line.strip())
        else:
            head.append(line.strip())
        i += 1
    text = " ".join(head)
    if nested:
        text = text.rstrip() + (" " if text.rstrip().endswith(":") else ": ") + "; ".join(nested) + "."
    if more:
        text += " " + " ".join(more)
    return text, tuple(codes), i


def _dedent(lines: list[str]) -> str:
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:].rstrip() for x in lines).strip("\n")


def _inline(text: str) -> str:
    """Markdown emphasis and heading anchors removed; links kept."""
    text = re.sub(r"\{#[^}]*\}\s*$", "", text)
    return re.sub(r"\*\*|__", "", text).strip()


def heading_role(heading: str) -> str:
    """"doing" (a step or procedure heading), "describing" (meaning, impact...) or "" (neither)."""
    if _NUMBERED_HEADING.match(heading.strip()):
        return "doing"
    terms = set(analyze(heading))
    if terms & _DOING:
        return "doing"
    if terms & _DESCRIBING:
        return "describing"
    return ""


def _role(block: Block) -> str:
    """The role of the innermost heading of a block that has one."""
    for heading in reversed(block.headings):
        if role := heading_role(heading):
            return role
    return ""


def looks_like_command(code: str, lang: str = "") -> bool:
    """True when a code block is something to run (a shell line, a query), not sample output."""
    if lang in _OUTPUT_LANGS:
        return False
    lines = [x.strip() for x in code.splitlines() if x.strip()]
    if not lines:
        return False
    first = lines[0]
    if lang in ("sql", "psql", "promql") or first.startswith("$ "):
        return True
    if lang not in _SHELL_LANGS:
        return False
    if re.match(r"^[A-Z][A-Z_ ]{3,}\s{2,}[A-Z]", first):  # a table's header row: NAME   READY   STATUS
        return False
    if first.startswith(("- ", "{", "[", "<")) or re.match(r"^[\w.-]+\s*[:=]\s", first):
        return False
    return bool(_COMMAND_WORD.match(first)) or (lang in ("promql",) and bool(first))


def _looks_like_output(code: str) -> bool:
    """A table or listing a command printed (borders, column headers), not something to type or paste."""
    first = next((x.strip() for x in code.splitlines() if x.strip()), "")
    return first.startswith(("+-", "|", "---", "===")) or bool(re.match(r"^[A-Za-z_][\w ]{2,}\s{2,}\S+\s{2,}\S", first))


def procedure(sections: Sequence[str], matched: Sequence[int] = (), max_steps: int = 8) -> list[ProcedureStep]:
    """The steps of a runbook: its procedure sections' items and paragraphs in order, with their
    commands. Without procedure headings, the `matched` sections (by index) are read instead,
    leaving out what only describes (meaning, impact). When there are more steps than fit, each
    part of the procedure (Diagnosis, Mitigation...) keeps its first ones."""
    blocks = [b for b in blocks_of(sections) if not _LINK_DEFINITION.match(b.text)]
    if matched and len(sections) > LONG_RUNBOOK_SECTIONS:  # a long document: the parts the search found
        blocks = [b for b in blocks if b.section in set(matched)]
    doing = [b for b in blocks if _role(b) == "doing"]
    if not doing:
        chosen = set(matched) or set(range(len(sections)))
        doing = [b for b in blocks if b.section in chosen and _role(b) != "describing"]
    steps: list[ProcedureStep] = []
    named: set[tuple[str, ...]] = set()
    for block in _lead_ins(doing):
        if block.kind == "code":
            follows = bool(steps) and block.section == steps[-1].section
            announced = steps[-1].instruction.endswith(":") and not _looks_like_output(block.text) if steps else False
            if follows and block.text.strip() == steps[-1].instruction.strip():
                continue  # a broken fence turned the step's own text into code
            if follows and (looks_like_command(block.text, block.lang) or announced):
                steps[-1].commands.append(block.text)  # what the step announced ("add this to the config:")
            elif looks_like_command(block.text, block.lang):
                steps.append(ProcedureStep(_label(block, named) or "Run:", block.section, [block.text], _group(block)))
            continue
        text = _instruction(block.text)
        if not text:
            continue
        label = _label(block, named)
        commands = [c for c, lang in block.codes if looks_like_command(c, lang)] + _inline_commands(block.text)
        steps.append(ProcedureStep(f"*{label}:* {text}" if label else text, block.section,
                                   list(dict.fromkeys(commands)), _group(block)))
    return _fit(steps, max_steps)


def _group(block: Block) -> str:
    """The outermost procedure heading a block sits under."""
    return next((h for h in block.headings if heading_role(h) == "doing"), "")


def _fit(steps: list[ProcedureStep], max_steps: int) -> list[ProcedureStep]:
    """At most `max_steps`, shared fairly between the procedure's parts, in the runbook's order."""
    if len(steps) <= max_steps:
        return steps
    groups = list(dict.fromkeys(s.group for s in steps))
    quota = {g: 0 for g in groups}
    left = max_steps
    sizes = {g: sum(1 for s in steps if s.group == g) for g in groups}
    while left:
        grew = False
        for g in groups:
            if left and quota[g] < sizes[g]:
                quota[g] += 1
                left -= 1
                grew = True
        if not grew:
            break
    kept: list[ProcedureStep] = []
    for step in steps:
        if quota[step.group]:
            quota[step.group] -= 1
            kept.append(step)
    return kept


def _lead_ins(blocks: Sequence[Block]) -> list[Block]:
    """A paragraph that ends with ":" and the list items right after it, as one block ("Other things
    to check: a; b; c"), so the lead-in is not a step of its own."""
    out: list[Block] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        j = i + 1
        while (block.kind == "paragraph" and block.text.rstrip().endswith(":") and j < len(blocks)
               and blocks[j].kind == "item" and blocks[j].section == block.section
               and blocks[j].lang == blocks[i + 1].lang):  # one list: bullets, or numbers
            j += 1
        if j > i + 1:
            items = "; ".join(b.text.rstrip(".;") for b in blocks[i + 1:j])
            out.append(Block("paragraph", f"{block.text.rstrip()} {items}.", block.headings, block.section))
            i = j
            continue
        out.append(block)
        i += 1
    return out


def _inline_commands(text: str) -> list[str]:
    """Commands written inline (`kubectl -n $NAMESPACE logs $POD`) in a step's text."""
    spans = re.findall(r"`([^`\n]{4,300})`", text)
    return [c.strip() for c in spans if " " in c.strip() and _COMMAND_WORD.match(c.strip())]


def _label(block: Block, named: set[tuple[str, ...]]) -> str:
    """The name of the sub-heading a step sits under, for the first step under it: a heading below
    the procedure's own ("Control plane nodes issue" under Diagnosis), or a numbered step heading."""
    if block.headings in named:
        return ""
    doing = [i for i, h in enumerate(block.headings) if heading_role(h) == "doing"]
    if doing:
        below = block.headings[doing[0] + 1:]
        label = below[-1] if below else block.headings[doing[0]]
        if not below and not _NUMBERED_HEADING.match(label):
            return ""
    elif len(block.headings) >= 2:  # read from matched sections: the heading under the title
        label = block.headings[-1]
    else:
        return ""
    named.add(block.headings)
    return re.sub(r"^(?:step\s*)?\d+[.):]?\s*", "", label, flags=re.IGNORECASE)


def _instruction(text: str) -> str:
    """A step's text: emphasis dropped, cut at a sentence end near the length limit."""
    text = re.sub(r"\*\*|__", "", " ".join(text.split())).strip()
    if len(re.findall(r"[A-Za-z]{2,}", text)) < 2:
        return ""
    if len(text) <= MAX_INSTRUCTION_CHARS:
        return text
    cut = text[:MAX_INSTRUCTION_CHARS]
    end = max(cut.rfind(". "), cut.rfind("; "))
    return (cut[: end + 1] if end > MAX_INSTRUCTION_CHARS // 2 else cut.rstrip() + "…").strip()


_MEANING = frozenset(analyze("meaning overview summary description about background context what is"))


def _says_something(text: str) -> bool:
    """Not a bare pointer ("Here the link to the video of the [simulation](...)", "[1]: https://...")."""
    if _LINK_DEFINITION.match(text):
        return False
    words = len(re.findall(r"[A-Za-z]{2,}", re.sub(r"\(https?://[^)]*\)|https?://\S+", "", text)))
    return words >= 12 or not re.search(r"https?://|\]\(", text)


def meaning(sections: Sequence[str]) -> str:
    """What the runbook says the alert means: the first sentences under Meaning / Overview /
    Summary, else its opening paragraph, else its first paragraph anywhere."""
    blocks = [b for b in blocks_of(sections) if b.kind in ("paragraph", "item") and _says_something(b.text)]
    described = [b for b in blocks if b.headings and set(analyze(b.headings[-1])) & _MEANING]
    opening = [b for b in blocks if len(b.headings) <= 1]
    chosen = (described or opening or blocks)[:1]
    if not chosen:
        return ""
    text = " ".join(re.sub(r"\*\*|__", "", chosen[0].text).split())
    sentences = re.split(r"(?<=[.!?])\s+", text)
    out = sentences[0]
    if len(out) < 80 and len(sentences) > 1:
        out += " " + sentences[1]
    return out if len(out) <= MAX_INSTRUCTION_CHARS else out[:MAX_INSTRUCTION_CHARS].rsplit(" ", 1)[0] + "…"
