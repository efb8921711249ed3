"""Block structure of Markdown (and plain text) for the chunker.

Block structure comes from markdown-it-py, so `#` inside a code fence is never a heading and
block boundaries are exact. A document becomes its top-level blocks in order, with no text
left out, plus tags naming the block kinds (code, yaml, json, table, steps, list) by span.
`line_pieces` cuts a block far too big to keep whole (a pasted log, a dump) at line ends.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from retrieval.tokens import token_weight

_MD = MarkdownIt("commonmark").enable("table")
_MD.parse("")  # compile the rule chains once, before any thread uses the parser
_ATOMIC = {"fence", "code_block", "table_open", "ordered_list_open"}
_CONTAINERS = {"bullet_list_open", "blockquote_open"}
_LANG_KINDS = {"yaml": "yaml", "yml": "yaml", "json": "json", "jsonc": "json", "json5": "json"}


@dataclass
class Block:
    """A unit that is never cut by the packer (once big prose blocks are pre-split)."""

    start: int
    end: int
    weight: float
    atomic: bool = False
    level: int = 0  # heading level 1-6, 0 when not a heading
    title: str = ""
    parts: list[Part] = field(default_factory=list)  # children of a list or quote


@dataclass
class Part:
    """A child of a container block (list item, quoted paragraph, ...), for splitting."""

    start: int
    end: int
    atomic: bool  # itself a code block, table or numbered list
    children: list[Part]


@dataclass
class Tag:
    """A span carrying block kinds for Chunk.metadata["blocks"]."""

    start: int
    end: int
    kinds: tuple[str, ...]
    lang: str = ""



class _Lines:
    """Line start offsets of a text, to turn markdown-it line maps into char spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n?|\n", text)]  # as markdown-it

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Char span of lines [first, last) without blank lines around (indentation kept)."""
        last = min(last, len(self.starts))
        start = self.starts[first]
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        chunk = self.text[start:end]
        lead = len(chunk) - len(chunk.lstrip())
        newline = max(chunk.rfind("\n", 0, lead), chunk.rfind("\r", 0, lead))
        return start + newline + 1, start + len(chunk.rstrip())

    def is_blank(self, line: int) -> bool:
        """Whether a line holds only whitespace."""
        a, b = self.span(line, line + 1)
        return a >= b


# --------------------------------------------------------------------------- parsing


@lru_cache(maxsize=8)
def _parse(text: str) -> tuple[Token, ...]:
    """markdown-it block tokens (cached: the title lookup and the chunker share a parse)."""
    return tuple(_MD.parse(text))


def _inline_text(token: Token) -> str:
    """Plain text of an inline token (markup dropped)."""
    parts = [c.content for c in token.children or [] if c.type in ("text", "code_inline", "image")]
    return re.sub(r"\s+", " ", "".join(parts)).strip() or token.content.strip()


def markdown_title(text: str) -> str | None:
    """Text of the first H1 heading of a Markdown text, if any."""
    tokens = _parse(text)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h1":
            return _inline_text(tokens[i + 1]) or None
    return None


def _fence_closed(tok: Token, lines: _Lines, base: int) -> bool:
    """Whether a fence token ends with a closing fence (markdown-it runs it to EOF if not)."""
    first, last = tok.map[0] + base, tok.map[1] + base
    if last - first < 2:
        return False
    a, b = lines.span(last - 1, last)
    closing = lines.text[a:b].strip()
    return len(closing) >= len(tok.markup) and set(closing) == {tok.markup[0]}


def _fence_tag(tok: Token, start: int, end: int) -> Tag:
    """Kinds of a code block: code, plus yaml/json from the language or a JSON body."""
    lang = tok.info.strip().split()[0].strip("{}.").lower() if tok.info.strip() else ""
    kinds = ["code"]
    if lang in _LANG_KINDS:
        kinds.append(_LANG_KINDS[lang])
    elif not lang and tok.content.lstrip()[:1] in ("{", "["):
        try:
            json.loads(tok.content)
            kinds.append("json")
        except ValueError:
            pass
    return Tag(start, end, tuple(kinds), lang)


def _tag_for(tok: Token, start: int, end: int) -> Tag | None:
    """The tag of a token, if it is a kind we report."""
    if tok.type in ("fence", "code_block"):
        return _fence_tag(tok, start, end)
    kind = {"table_open": "table", "ordered_list_open": "steps", "bullet_list_open": "list"}
    return Tag(start, end, (kind[tok.type],)) if tok.type in kind else None


def _tags(tokens: tuple[Token, ...], base: int, lines: _Lines) -> list[Tag]:
    """Tags of every reportable token (at any depth) of a token range."""
    tags = []
    for tok in tokens:
        if tok.map and (tag := _tag_for(tok, *lines.span(tok.map[0] + base, tok.map[1] + base))):
            tags.append(tag)
    return tags


def _container_parts(
    tokens: tuple[Token, ...], i: int, j: int, base: int, lines: _Lines
) -> list[Part]:
    """Children of the container token range [i, j], as a tree down to atomic blocks."""
    parts: list[Part] = []
    level = tokens[i].level + 1
    k = i + 1
    while k < j:
        tok = tokens[k]
        end_k = _close_index(tokens, k) if tok.nesting == 1 else k
        if tok.level == level and tok.nesting >= 0 and tok.map:
            start, end = lines.span(tok.map[0] + base, tok.map[1] + base)
            if start < end:
                atomic = tok.type in _ATOMIC
                kids = []
                if not atomic and tok.nesting == 1:
                    kids = _container_parts(tokens, k, end_k, base, lines)
                parts.append(Part(start, end, atomic, kids))
        k = end_k + 1
    return parts


def _close_index(tokens: tuple[Token, ...], i: int) -> int:
    """Index of the token closing the opening token at ``i``."""
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        if tokens[j].level == level and tokens[j].nesting == -1:
            return j
    return len(tokens) - 1


def _scan(lines: _Lines, base: int, blocks: list[Block], tags: list[Tag]) -> int | None:
    """Top-level blocks of the text from line ``base``; returns a line to rescan from, if any.

    An unterminated top-level fence would swallow the rest of the document: its opening
    line becomes a prose block and the text after it is parsed again.
    """
    tokens = _parse(lines.text[lines.starts[base] :])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        j = _close_index(tokens, i) if tok.nesting == 1 else i
        if tok.map and tok.level == 0:
            if tok.type == "fence" and not _fence_closed(tok, lines, base):
                start, end = lines.span(tok.map[0] + base, tok.map[0] + base + 1)
                blocks.append(Block(start, end, token_weight(lines.text[start:end])))
                return tok.map[0] + base + 1
            start, end = lines.span(tok.map[0] + base, tok.map[1] + base)
            if start < end:
                blocks.append(_make_block(tokens, i, j, start, end, base, lines))
            tags.extend(_tags(tokens[i : j + 1], base, lines))
        i = j + 1
    return None


def _make_block(
    tokens: tuple[Token, ...], i: int, j: int, start: int, end: int, base: int, lines: _Lines
) -> Block:
    """A top-level block from the token range [i, j]."""
    tok = tokens[i]
    block = Block(start, end, token_weight(lines.text[start:end]), atomic=tok.type in _ATOMIC)
    if tok.type == "heading_open":
        block.level, block.title = int(tok.tag[1]), _inline_text(tokens[i + 1])
    elif tok.type in _CONTAINERS:
        block.parts = _container_parts(tokens, i, j, base, lines)
    return block


def _gap_blocks(lines: _Lines, first: int, last: int) -> list[Block]:
    """Prose blocks (runs of non-blank lines) for lines no token covers, e.g. link definitions."""
    blocks, run_start = [], None
    for line in range(first, last + 1):
        blank = line == last or lines.is_blank(line)
        if blank and run_start is not None:
            start, end = lines.span(run_start, line)
            blocks.append(Block(start, end, token_weight(lines.text[start:end])))
            run_start = None
        elif not blank and run_start is None:
            run_start = line
    return blocks


def _line_of(lines: _Lines, pos: int) -> int:
    """Line index containing char offset ``pos``."""
    return bisect.bisect_right(lines.starts, pos) - 1


def markdown_blocks(text: str) -> tuple[list[Block], list[Tag]]:
    """All top-level blocks of a Markdown text in order, with no text left out."""
    lines = _Lines(text)
    blocks: list[Block] = []
    tags: list[Tag] = []
    base: int | None = 0
    while base is not None and base < len(lines.starts):
        base = _scan(lines, base, blocks, tags)
    full: list[Block] = []
    line = 0
    for block in blocks:
        first = _line_of(lines, block.start)
        full.extend(_gap_blocks(lines, line, first))
        full.append(block)
        line = _line_of(lines, block.end) + 1
    full.extend(_gap_blocks(lines, line, len(lines.starts)))
    return full, tags


def text_blocks(text: str) -> list[Block]:
    """Plain text: paragraphs separated by blank lines."""
    lines = _Lines(text)
    return _gap_blocks(lines, 0, len(lines.starts))


# --------------------------------------------------------------------------- capping


_LINE = re.compile(r"[^\n]*\S[^\n]*")
_WORD = re.compile(r"\S+")


def line_pieces(text: str, start: int, end: int, limit: float) -> list[Block]:
    """A span cut into atomic blocks of at most ``limit`` tokens: runs of whole lines, a longer
    line at spaces, a longer word by characters (minified or base64 data)."""
    return _runs(text, start, end, limit, _LINE, _words)


def _words(text: str, start: int, end: int, limit: float) -> list[Block]:
    """One long line as runs of whole words of at most ``limit``; a longer word by characters."""
    return _runs(text, start, end, limit, _WORD, _slices)


def _runs(
    text: str, start: int, end: int, limit: float, pattern: re.Pattern[str],
    longer: Callable[[str, int, int, float], list[Block]],
) -> list[Block]:
    """Matches of ``pattern`` in a span, joined into blocks of at most ``limit``; a match over
    the limit is cut by ``longer``. Matches are separated by whitespace, so weights add up."""
    out: list[Block] = []
    joinable = False  # whether the last block may take the next match
    for match in pattern.finditer(text, start, end):
        a, b = match.span()
        weight = token_weight(match.group())
        if weight > limit:
            out.extend(longer(text, a, b, limit))
            joinable = False
        elif joinable and out[-1].weight + weight <= limit:
            out[-1].end, out[-1].weight = b, out[-1].weight + weight
        else:
            out.append(Block(a, b, weight, atomic=True))
            joinable = True
    return out


def _slices(text: str, start: int, end: int, limit: float) -> list[Block]:
    """A span with no whitespace cut by characters into pieces of at most ``limit`` tokens.

    Every character weighs at least 1/6 of a token, so a piece is at most 6 x ``limit`` long; the
    longest prefix within the limit is found by bisection (weight grows with length)."""
    out: list[Block] = []
    while start < end:
        lo, hi = 1, min(end - start, int(6 * limit) + 1)
        while lo < hi:  # the longest prefix [start, start + lo) within the limit
            mid = (lo + hi + 1) // 2
            if token_weight(text[start : start + mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        out.append(Block(start, start + lo, token_weight(text[start : start + lo]), atomic=True))
        start += lo
    return out
