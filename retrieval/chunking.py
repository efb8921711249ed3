"""Structure-aware chunking of Markdown (and plain text) into parent sections and chunks.

Block structure comes from markdown-it-py, so `#` inside a code fence is never a heading and
block boundaries are exact. Chunks are exact slices of the input text; code blocks, tables
and numbered procedures are never cut.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from retrieval.models import Chunk, Section
from retrieval.tokens import count_tokens, token_weight

PARENT_MAX_TOKENS = 2000
_MD = MarkdownIt("commonmark").enable("table")
_MD.parse("")  # compile the rule chains once, before any thread uses the parser
_ATOMIC = {"fence", "code_block", "table_open", "ordered_list_open"}
_CONTAINERS = {"bullet_list_open", "blockquote_open"}
_SENTENCE_END = (".", "!", "?", ":", ";")
_LANG_KINDS = {"yaml": "yaml", "yml": "yaml", "json": "json", "jsonc": "json", "json5": "json"}


@dataclass
class _Block:
    """A unit that is never cut by the packer (once big prose blocks are pre-split)."""

    start: int
    end: int
    weight: float
    atomic: bool = False
    level: int = 0  # heading level 1-6, 0 when not a heading
    title: str = ""
    parts: list[_Part] = field(default_factory=list)  # children of a list or quote


@dataclass
class _Part:
    """A child of a container block (list item, quoted paragraph, ...), for splitting."""

    start: int
    end: int
    atomic: bool  # itself a code block, table or numbered list
    children: list[_Part]


@dataclass
class _Tag:
    """A span carrying block kinds for Chunk.metadata["blocks"]."""

    start: int
    end: int
    kinds: tuple[str, ...]
    lang: str = ""


@dataclass
class _Leaf:
    """The text under one H1-H3 heading (or the preamble) up to the next such heading."""

    path: tuple[str, ...]
    level: int
    blocks: list[_Block]

    @property
    def weight(self) -> float:
        """Token weight of the leaf (block weights add up exactly)."""
        return sum(b.weight for b in self.blocks)


@dataclass
class _Piece:
    """A chunk in the making."""

    start: int
    end: int
    weight: float
    path: tuple[str, ...]
    parent: int
    whole: bool  # a whole leaf (or merged leaves): may be merged when tiny


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


def _fence_tag(tok: Token, start: int, end: int) -> _Tag:
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
    return _Tag(start, end, tuple(kinds), lang)


def _tag_for(tok: Token, start: int, end: int) -> _Tag | None:
    """The tag of a token, if it is a kind we report."""
    if tok.type in ("fence", "code_block"):
        return _fence_tag(tok, start, end)
    kind = {"table_open": "table", "ordered_list_open": "steps", "bullet_list_open": "list"}
    return _Tag(start, end, (kind[tok.type],)) if tok.type in kind else None


def _tags(tokens: tuple[Token, ...], base: int, lines: _Lines) -> list[_Tag]:
    """Tags of every reportable token (at any depth) of a token range."""
    tags = []
    for tok in tokens:
        if tok.map and (tag := _tag_for(tok, *lines.span(tok.map[0] + base, tok.map[1] + base))):
            tags.append(tag)
    return tags


def _container_parts(
    tokens: tuple[Token, ...], i: int, j: int, base: int, lines: _Lines
) -> list[_Part]:
    """Children of the container token range [i, j], as a tree down to atomic blocks."""
    parts: list[_Part] = []
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
                parts.append(_Part(start, end, atomic, kids))
        k = end_k + 1
    return parts


def _close_index(tokens: tuple[Token, ...], i: int) -> int:
    """Index of the token closing the opening token at ``i``."""
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        if tokens[j].level == level and tokens[j].nesting == -1:
            return j
    return len(tokens) - 1


def _scan(lines: _Lines, base: int, blocks: list[_Block], tags: list[_Tag]) -> int | None:
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
                blocks.append(_Block(start, end, token_weight(lines.text[start:end])))
                return tok.map[0] + base + 1
            start, end = lines.span(tok.map[0] + base, tok.map[1] + base)
            if start < end:
                blocks.append(_make_block(tokens, i, j, start, end, base, lines))
            tags.extend(_tags(tokens[i : j + 1], base, lines))
        i = j + 1
    return None


def _make_block(
    tokens: tuple[Token, ...], i: int, j: int, start: int, end: int, base: int, lines: _Lines
) -> _Block:
    """A top-level block from the token range [i, j]."""
    tok = tokens[i]
    block = _Block(start, end, token_weight(lines.text[start:end]), atomic=tok.type in _ATOMIC)
    if tok.type == "heading_open":
        block.level, block.title = int(tok.tag[1]), _inline_text(tokens[i + 1])
    elif tok.type in _CONTAINERS:
        block.parts = _container_parts(tokens, i, j, base, lines)
    return block


def _gap_blocks(lines: _Lines, first: int, last: int) -> list[_Block]:
    """Prose blocks (runs of non-blank lines) for lines no token covers, e.g. link definitions."""
    blocks, run_start = [], None
    for line in range(first, last + 1):
        blank = line == last or lines.is_blank(line)
        if blank and run_start is not None:
            start, end = lines.span(run_start, line)
            blocks.append(_Block(start, end, token_weight(lines.text[start:end])))
            run_start = None
        elif not blank and run_start is None:
            run_start = line
    return blocks


def _line_of(lines: _Lines, pos: int) -> int:
    """Line index containing char offset ``pos``."""
    return bisect.bisect_right(lines.starts, pos) - 1


def _markdown_blocks(text: str) -> tuple[list[_Block], list[_Tag]]:
    """All top-level blocks of a Markdown text in order, with no text left out."""
    lines = _Lines(text)
    blocks: list[_Block] = []
    tags: list[_Tag] = []
    base: int | None = 0
    while base is not None and base < len(lines.starts):
        base = _scan(lines, base, blocks, tags)
    full: list[_Block] = []
    line = 0
    for block in blocks:
        first = _line_of(lines, block.start)
        full.extend(_gap_blocks(lines, line, first))
        full.append(block)
        line = _line_of(lines, block.end) + 1
    full.extend(_gap_blocks(lines, line, len(lines.starts)))
    return full, tags


def _text_blocks(text: str) -> list[_Block]:
    """Plain text: paragraphs separated by blank lines."""
    lines = _Lines(text)
    return _gap_blocks(lines, 0, len(lines.starts))


# --------------------------------------------------------------------------- splitting


def _word_groups(text: str, start: int, end: int, limit: float) -> list[_Block]:
    """Cut a span at whitespace into blocks of at most ``limit`` (a longer word stands alone)."""
    out: list[_Block] = []
    for m in re.finditer(r"\S+", text[start:end]):
        a, b, w = start + m.start(), start + m.end(), token_weight(m.group())
        if out and not out[-1].atomic and out[-1].weight + w <= limit and w <= limit:
            out[-1].end, out[-1].weight = b, out[-1].weight + w
        else:
            out.append(_Block(a, b, w, atomic=w > limit))
    return out


def _segments(text: str, start: int, end: int, limit: float) -> list[_Block]:
    """Lines, then sentences, then words of a span, each at most ``limit`` where possible."""
    out: list[_Block] = []
    for line in re.finditer(r"[^\n]*\S[^\n]*", text[start:end]):
        a, b = start + line.start(), start + line.end()
        a += len(line.group()) - len(line.group().lstrip())
        w = token_weight(text[a:b])
        if w <= limit:
            out.append(_Block(a, b, w))
            continue
        for sent in re.finditer(r"\S.*?(?:[.!?](?=\s)|$)", text[a:b]):
            sa, sb = a + sent.start(), a + sent.end()
            sw = token_weight(text[sa:sb])
            out.extend([_Block(sa, sb, sw)] if sw <= limit else _word_groups(text, sa, sb, limit))
    return out


def _split_prose(text: str, start: int, end: int, limit: float) -> list[_Block]:
    """Split a prose span into consecutive blocks of at most ``limit`` at the best boundaries."""
    out: list[_Block] = []
    for seg in _segments(text, start, end, limit):
        last = out[-1] if out else None
        if last and not last.atomic and not seg.atomic and last.weight + seg.weight <= limit:
            last.end, last.weight = seg.end, last.weight + seg.weight
        else:
            out.append(seg)
    return out


def _split_parts(text: str, parts: list[_Part], limit: float) -> list[_Block]:
    """Container children as blocks of at most ``limit``, descending until atomic blocks."""
    out: list[_Block] = []
    for part in parts:
        w = token_weight(text[part.start : part.end])
        if w <= limit or part.atomic:
            out.append(_Block(part.start, part.end, w, atomic=part.atomic or _has_atomic(part)))
        elif part.children:
            out.extend(_split_parts(text, part.children, limit))
        else:
            out.extend(_split_prose(text, part.start, part.end, limit))
    return out


def _has_atomic(part: _Part) -> bool:
    """Whether a part is or contains a code block, table or numbered list."""
    return part.atomic or any(_has_atomic(c) for c in part.children)


def _split_block(text: str, block: _Block, limit: float) -> list[_Block]:
    """A non-atomic block over ``limit`` as smaller blocks (container children, lines, ...)."""
    if block.parts:
        return _split_parts(text, block.parts, limit)
    return _split_prose(text, block.start, block.end, limit)


# --------------------------------------------------------------------------- packing


def _units(blocks: list[_Block]) -> list[list[_Block]]:
    """Group each heading with the block after it, so no piece ends on a heading."""
    units: list[list[_Block]] = []
    pending: list[_Block] = []
    for block in blocks:
        pending.append(block)
        if not block.level:
            units.append(pending)
            pending = []
    if pending:
        units.append(pending)
    return units


def _run_starts(text: str, block: _Block) -> list[tuple[int, float, bool]]:
    """(position, weight from there to the block end, sentence start?) per word, last first."""
    runs = list(re.finditer(r"\S+", text[block.start : block.end]))
    out: list[tuple[int, float, bool]] = []
    acc = 0.0
    for k in range(len(runs) - 1, -1, -1):
        acc += token_weight(runs[k].group())
        prev_end = runs[k - 1].end() if k else 0
        gap = text[block.start + prev_end : block.start + runs[k].start()]
        sentence = k == 0 or "\n" in gap or runs[k - 1].group().endswith(_SENTENCE_END)
        out.append((block.start + runs[k].start(), acc, sentence))
    return out


def _overlap(text: str, blocks: list[_Block], want: float) -> tuple[int, float] | None:
    """Start and weight of ~``want`` tokens of whole trailing blocks or sentences, if any."""
    cands: list[tuple[int, float, bool]] = []
    acc = 0.0
    for block in reversed(blocks):
        if block.level or acc + (block.weight if block.atomic else 0) > 1.5 * want:
            break
        inner = [(block.start, block.weight, True)] if block.atomic else _run_starts(text, block)
        cands.extend((pos, acc + w, sent) for pos, w, sent in inner if acc + w <= 1.5 * want)
        acc += block.weight
    good = [c for c in cands if c[2] and c[1] >= 0.5 * want]
    good = good or [c for c in cands if c[1] >= 0.3 * want]
    if not good:
        return None
    pos, weight, _ = min(good, key=lambda c: (abs(c[1] - want), c[0]))
    return pos, weight


@dataclass(frozen=True)
class _Limits:
    """Token limits of one chunking run."""

    target: int
    max: int
    overlap: int
    min: int


def _flatten(text: str, blocks: list[_Block], limit: float) -> list[_Block]:
    """Blocks with every non-atomic block over ``limit`` split into smaller ones."""
    flat: list[_Block] = []
    for b in blocks:
        flat.extend(_split_block(text, b, limit) if not b.atomic and b.weight > limit else [b])
    return flat


def _cut(text: str, blocks: list[_Block], lim: _Limits) -> list[tuple[int, int, float]]:
    """Pack a long leaf's blocks into (start, end, weight) pieces with overlap between them."""
    units = _units(_flatten(text, blocks, max(1.0, min(lim.target, lim.max - lim.overlap))))
    weights = [sum(b.weight for b in u) for u in units]
    remaining = sum(weights)
    desired = remaining / max(1, math.ceil(remaining / lim.target))
    pieces: list[tuple[int, int, float]] = []
    cur: list[_Block] = []
    start, weight = units[0][0].start, 0.0
    for unit, uw in zip(units, weights, strict=True):
        fits = weight + uw <= lim.max
        closer = weight + uw - desired <= desired - weight
        tail = remaining < lim.min and fits  # absorb a tiny tail rather than leave it alone
        lead_in = uw > lim.max and weight < lim.min  # keep a short lead-in with a big block
        full = not fits or (weight + uw > desired and not closer)
        if cur and full and not tail and not lead_in:
            pieces.append((start, cur[-1].end, weight))
            ov = _overlap(text, cur, lim.overlap) if lim.overlap > 0 else None
            start, weight = (unit[0].start, 0.0)
            if ov and ov[1] + uw <= lim.max:
                start, weight = ov
            cur = []
        cur.extend(unit)
        weight += uw
        remaining -= uw
    pieces.append((start, cur[-1].end, weight))
    return pieces


# --------------------------------------------------------------------------- structure


def _leaves(blocks: list[_Block]) -> list[_Leaf]:
    """Split blocks at H1-H3 headings, tracking each leaf's heading path."""
    leaves: list[_Leaf] = []
    stack: list[tuple[int, str]] = []
    for block in blocks:
        if 1 <= block.level <= 3:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.title))
            leaves.append(_Leaf(tuple(t for _, t in stack), block.level, [block]))
        elif leaves:
            leaves[-1].blocks.append(block)
        else:
            leaves.append(_Leaf((), 0, [block]))
    return leaves


def _parents(leaves: list[_Leaf], parent_max: int) -> list[list[_Leaf]]:
    """Group leaves into H2-level parents; a parent over ``parent_max`` splits at H3s."""
    groups: list[list[_Leaf]] = []
    for leaf in leaves:
        if leaf.level == 3 and groups:
            groups[-1].append(leaf)
        else:
            groups.append([leaf])
    parents: list[list[_Leaf]] = []
    for group in groups:
        parents.append([])
        weight = 0.0
        for leaf in group:
            if parents[-1] and weight + leaf.weight > parent_max:
                parents.append([])
                weight = 0.0
            parents[-1].append(leaf)
            weight += leaf.weight
    return parents


def _weight(parent: list[_Leaf]) -> float:
    """Token weight of a parent's leaves."""
    return sum(leaf.weight for leaf in parent)


def _merge_tiny_parents(
    parents: list[list[_Leaf]], min_tokens: int, parent_max: int
) -> list[list[_Leaf]]:
    """Join a parent under ``min_tokens`` to the next parent (else the previous one)."""
    parents = [list(p) for p in parents]
    i = 0
    while i < len(parents):
        weight = _weight(parents[i])
        if weight < min_tokens and len(parents) > 1:
            if i + 1 < len(parents) and weight + _weight(parents[i + 1]) <= parent_max:
                parents[i : i + 2] = [parents[i] + parents[i + 1]]
                continue
            if i and weight + _weight(parents[i - 1]) <= parent_max:
                parents[i - 1 : i + 1] = [parents[i - 1] + parents[i]]
                i -= 1
                continue
        i += 1
    return parents


def _merge_tiny(pieces: list[_Piece], min_tokens: int, max_tokens: int) -> list[_Piece]:
    """Merge tiny whole sections into the next piece of the same parent, else the previous."""
    pieces = list(pieces)
    i = 0
    while i < len(pieces):
        p = pieces[i]
        if p.whole and p.weight < min_tokens:
            nxt = pieces[i + 1] if i + 1 < len(pieces) else None
            if nxt and nxt.parent == p.parent and p.weight + nxt.weight <= max_tokens:
                merged = replace(p, end=nxt.end, weight=p.weight + nxt.weight, whole=nxt.whole)
                pieces[i : i + 2] = [replace(merged, path=p.path or nxt.path)]
                continue
            prv = pieces[i - 1] if i else None
            if prv and prv.parent == p.parent and prv.weight + p.weight <= max_tokens:
                pieces[i - 1 : i + 1] = [replace(prv, end=p.end, weight=prv.weight + p.weight)]
                i -= 1
                continue
        i += 1
    return pieces


def _chunk_metadata(
    tags: list[_Tag], start: int, end: int, max_tokens: int, tokens: int
) -> dict[str, Any]:
    """Chunk.metadata: the block kinds (and code languages) a span contains."""
    kinds: set[str] = set()
    langs: set[str] = set()
    for tag in tags:
        if tag.start < end and tag.end > start:
            kinds.update(tag.kinds)
            if tag.lang:
                langs.add(tag.lang)
    meta: dict[str, Any] = {"blocks": sorted(kinds)}
    if langs:
        meta["code_langs"] = sorted(langs)
    if tokens > max_tokens:
        meta["oversized"] = True
    return meta


def _leaf_pieces(text: str, leaf: _Leaf, parent: int, lim: _Limits) -> list[_Piece]:
    """A leaf as one piece, or cut into overlapping pieces when over the max."""
    if leaf.weight <= lim.max:
        start, end = leaf.blocks[0].start, leaf.blocks[-1].end
        return [_Piece(start, end, leaf.weight, leaf.path, parent, True)]
    return [_Piece(a, b, w, leaf.path, parent, False) for a, b, w in _cut(text, leaf.blocks, lim)]


def _section(text: str, index: int, parent: list[_Leaf]) -> Section:
    """The Section of a parent: the exact slice from its first to its last block."""
    start, end = parent[0].blocks[0].start, parent[-1].blocks[-1].end
    path = next((leaf.path for leaf in parent if leaf.path), ())
    return Section(index, path, text[start:end], start, end, count_tokens(text[start:end]))


def _build(
    text: str, blocks: list[_Block], tags: list[_Tag], lim: _Limits, opts: tuple[int, bool]
) -> tuple[list[Section], list[Chunk]]:
    """Sections and chunks from a document's blocks; ``opts`` = (parent max, merge parents)."""
    parent_max, merge_parents = opts
    parents = _parents(_leaves(blocks), parent_max)
    if merge_parents:
        parents = _merge_tiny_parents(parents, lim.min, parent_max)
    sections = [_section(text, i, parent) for i, parent in enumerate(parents)]
    pieces = [
        piece for i, parent in enumerate(parents) for leaf in parent
        for piece in _leaf_pieces(text, leaf, i, lim)
    ]
    chunks = []
    for position, p in enumerate(_merge_tiny(pieces, lim.min, lim.max)):
        body = text[p.start : p.end]
        tokens = count_tokens(body)
        meta = _chunk_metadata(tags, p.start, p.end, lim.max, tokens)
        chunks.append(Chunk(position, body, p.path, p.start, p.end, tokens, p.parent, meta))
    return sections, chunks


def chunk_markdown(
    text: str,
    *,
    target_tokens: int = 450,
    max_tokens: int = 600,
    overlap_tokens: int = 50,
    min_tokens: int = 80,
    parent_max_tokens: int = PARENT_MAX_TOKENS,
    merge_tiny_parents: bool = True,
) -> tuple[list[Section], list[Chunk]]:
    """Split a Markdown body into parent sections and structure-aware chunks."""
    if not text.strip():
        return [], []
    blocks, tags = _markdown_blocks(text)
    lim = _Limits(target_tokens, max_tokens, overlap_tokens, min_tokens)
    return _build(text, blocks, tags, lim, (parent_max_tokens, merge_tiny_parents))


def chunk_text(
    text: str,
    *,
    target_tokens: int = 450,
    max_tokens: int = 600,
    overlap_tokens: int = 50,
    min_tokens: int = 80,
) -> tuple[list[Section], list[Chunk]]:
    """Split plain text (paragraphs, no headings, no markup) into one section and chunks."""
    if not text.strip():
        return [], []
    lim = _Limits(target_tokens, max_tokens, overlap_tokens, min_tokens)
    return _build(text, _text_blocks(text), [], lim, (PARENT_MAX_TOKENS, False))


def contextual_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """A chunk with its document title and heading path: what is embedded and BM25-indexed."""
    heading = " > ".join(h for h in heading_path if h != title)
    return "\n".join(part for part in (title, heading, text) if part)
