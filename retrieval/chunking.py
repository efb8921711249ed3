"""Structure-aware chunking of Markdown (and plain text) into parent sections and chunks.

Blocks come from `retrieval.blocks` and long sections are packed by `retrieval.packing`.
Chunks are exact slices of the input text; code blocks, tables and numbered procedures are
not cut, unless one is more than OVERSIZE times the max (a pasted log, a 2 MB dump): that one
is cut at line ends into chunks within the max, and its section into sections within the parent
max, so no chunk or section grows with the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Sequence
from typing import Any

from retrieval.blocks import Block, Tag, line_pieces, markdown_blocks, text_blocks
from retrieval.models import Chunk, Section
from retrieval.packing import Limits, cut
from retrieval.tokens import count_tokens

PARENT_MAX_TOKENS = 2000
# A block up to OVERSIZE x max_tokens stays one (oversized) chunk: a long procedure or config
# file reads best whole. Past that it is cut (see the module docstring); so is a leaf past
# OVERSIZE x the parent max. Every runbook of the eval corpora stays under both.
OVERSIZE = 5


@dataclass
class _Leaf:
    """The text under one H1-H3 heading (or the preamble) up to the next such heading."""

    path: tuple[str, ...]
    level: int
    blocks: list[Block]
    continued: bool = False  # a later part of a leaf cut for being over OVERSIZE x parent max

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


# --------------------------------------------------------------------------- structure


def _leaves(blocks: list[Block]) -> list[_Leaf]:
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
        if (leaf.level == 3 or leaf.continued) and groups:
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


def _capped_blocks(text: str, blocks: list[Block], lim: Limits) -> list[Block]:
    """Blocks, with each one over OVERSIZE x the max cut at line ends into packable pieces."""
    cap = OVERSIZE * lim.max
    if all(b.weight <= cap for b in blocks):
        return blocks
    limit = max(1.0, min(lim.target, lim.max - lim.overlap))  # as the packer cuts prose
    out: list[Block] = []
    for block in blocks:
        out.extend(line_pieces(text, block.start, block.end, limit) if block.weight > cap else [block])
    return out


def _capped_leaves(leaves: list[_Leaf], parent_max: int) -> list[_Leaf]:
    """Leaves, with each one over OVERSIZE x ``parent_max`` cut into parts of about ``parent_max``."""
    out: list[_Leaf] = []
    for leaf in leaves:
        if leaf.weight <= OVERSIZE * parent_max:
            out.append(leaf)
            continue
        part, weight = _Leaf(leaf.path, leaf.level, []), 0.0
        out.append(part)
        for block in leaf.blocks:
            if part.blocks and weight + block.weight > parent_max:
                part, weight = _Leaf(leaf.path, leaf.level, [], continued=True), 0.0
                out.append(part)
            part.blocks.append(block)
            weight += block.weight
    return out


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
    tags: list[Tag], start: int, end: int, max_tokens: int, tokens: int
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


def _leaf_pieces(text: str, leaf: _Leaf, parent: int, lim: Limits) -> list[_Piece]:
    """A leaf as one piece, or cut into overlapping pieces when over the max."""
    if leaf.weight <= lim.max:
        start, end = leaf.blocks[0].start, leaf.blocks[-1].end
        return [_Piece(start, end, leaf.weight, leaf.path, parent, True)]
    return [_Piece(a, b, w, leaf.path, parent, False) for a, b, w in cut(text, leaf.blocks, lim)]


def _section(text: str, index: int, parent: list[_Leaf]) -> Section:
    """The Section of a parent: the exact slice from its first to its last block."""
    start, end = parent[0].blocks[0].start, parent[-1].blocks[-1].end
    path = next((leaf.path for leaf in parent if leaf.path), ())
    return Section(index, path, text[start:end], start, end, count_tokens(text[start:end]))


def _build(
    text: str, blocks: list[Block], tags: list[Tag], lim: Limits, opts: tuple[int, bool]
) -> tuple[list[Section], list[Chunk]]:
    """Sections and chunks from a document's blocks; ``opts`` = (parent max, merge parents)."""
    parent_max, merge_parents = opts
    leaves = _capped_leaves(_leaves(_capped_blocks(text, blocks, lim)), parent_max)
    parents = _parents(leaves, parent_max)
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
    blocks, tags = markdown_blocks(text)
    lim = Limits(target_tokens, max_tokens, overlap_tokens, min_tokens)
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
    lim = Limits(target_tokens, max_tokens, overlap_tokens, min_tokens)
    return _build(text, text_blocks(text), [], lim, (PARENT_MAX_TOKENS, False))


def contextual_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """A chunk with its document title and heading path: what is embedded and BM25-indexed."""
    heading = " > ".join(h for h in heading_path if h != title)
    return "\n".join(part for part in (title, heading, text) if part)
