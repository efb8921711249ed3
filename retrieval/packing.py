"""Packing a long section's blocks into overlapping pieces within a token budget.

Non-atomic blocks over the budget are first split (container children, then lines, sentences,
words); code blocks, tables and numbered procedures are never cut.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from retrieval.blocks import Block, Part
from retrieval.tokens import token_weight

_SENTENCE_END = (".", "!", "?", ":", ";")


@dataclass(frozen=True)
class Limits:
    """Token limits of one chunking run."""

    target: int
    max: int
    overlap: int
    min: int


# --------------------------------------------------------------------------- splitting


def _word_groups(text: str, start: int, end: int, limit: float) -> list[Block]:
    """Cut a span at whitespace into blocks of at most ``limit`` (a longer word stands alone)."""
    out: list[Block] = []
    for m in re.finditer(r"\S+", text[start:end]):
        a, b, w = start + m.start(), start + m.end(), token_weight(m.group())
        if out and not out[-1].atomic and out[-1].weight + w <= limit and w <= limit:
            out[-1].end, out[-1].weight = b, out[-1].weight + w
        else:
            out.append(Block(a, b, w, atomic=w > limit))
    return out


def _segments(text: str, start: int, end: int, limit: float) -> list[Block]:
    """Lines, then sentences, then words of a span, each at most ``limit`` where possible."""
    out: list[Block] = []
    for line in re.finditer(r"[^\n]*\S[^\n]*", text[start:end]):
        a, b = start + line.start(), start + line.end()
        a += len(line.group()) - len(line.group().lstrip())
        w = token_weight(text[a:b])
        if w <= limit:
            out.append(Block(a, b, w))
            continue
        for sent in re.finditer(r"\S.*?(?:[.!?](?=\s)|$)", text[a:b]):
            sa, sb = a + sent.start(), a + sent.end()
            sw = token_weight(text[sa:sb])
            out.extend([Block(sa, sb, sw)] if sw <= limit else _word_groups(text, sa, sb, limit))
    return out


def _split_prose(text: str, start: int, end: int, limit: float) -> list[Block]:
    """Split a prose span into consecutive blocks of at most ``limit`` at the best boundaries."""
    out: list[Block] = []
    for seg in _segments(text, start, end, limit):
        last = out[-1] if out else None
        if last and not last.atomic and not seg.atomic and last.weight + seg.weight <= limit:
            last.end, last.weight = seg.end, last.weight + seg.weight
        else:
            out.append(seg)
    return out


def _split_parts(text: str, parts: list[Part], limit: float) -> list[Block]:
    """Container children as blocks of at most ``limit``, descending until atomic blocks."""
    out: list[Block] = []
    for part in parts:
        w = token_weight(text[part.start : part.end])
        if w <= limit or part.atomic:
            out.append(Block(part.start, part.end, w, atomic=part.atomic or _has_atomic(part)))
        elif part.children:
            out.extend(_split_parts(text, part.children, limit))
        else:
            out.extend(_split_prose(text, part.start, part.end, limit))
    return out


def _has_atomic(part: Part) -> bool:
    """Whether a part is or contains a code block, table or numbered list."""
    return part.atomic or any(_has_atomic(c) for c in part.children)


def _split_block(text: str, block: Block, limit: float) -> list[Block]:
    """A non-atomic block over ``limit`` as smaller blocks (container children, lines, ...)."""
    if block.parts:
        return _split_parts(text, block.parts, limit)
    return _split_prose(text, block.start, block.end, limit)


# --------------------------------------------------------------------------- packing


def _units(blocks: list[Block]) -> list[list[Block]]:
    """Group each heading with the block after it, so no piece ends on a heading."""
    units: list[list[Block]] = []
    pending: list[Block] = []
    for block in blocks:
        pending.append(block)
        if not block.level:
            units.append(pending)
            pending = []
    if pending:
        units.append(pending)
    return units


def _run_starts(text: str, block: Block) -> list[tuple[int, float, bool]]:
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


def _overlap(text: str, blocks: list[Block], want: float) -> tuple[int, float] | None:
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


def _flatten(text: str, blocks: list[Block], limit: float) -> list[Block]:
    """Blocks with every non-atomic block over ``limit`` split into smaller ones."""
    flat: list[Block] = []
    for b in blocks:
        flat.extend(_split_block(text, b, limit) if not b.atomic and b.weight > limit else [b])
    return flat


def cut(text: str, blocks: list[Block], lim: Limits) -> list[tuple[int, int, float]]:
    """Pack a long leaf's blocks into (start, end, weight) pieces with overlap between them."""
    units = _units(_flatten(text, blocks, max(1.0, min(lim.target, lim.max - lim.overlap))))
    weights = [sum(b.weight for b in u) for u in units]
    remaining = sum(weights)
    desired = remaining / max(1, math.ceil(remaining / lim.target))
    pieces: list[tuple[int, int, float]] = []
    cur: list[Block] = []
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
