"""A learned second opinion for commands no rule names.

The rules (policy.yaml and the detectors) know tools by name and effects by shape; a command in a tool or dialect
they have never seen passes them. This module scores a command line by what it is made of: the character
3-5-grams of its words, its words, word pairs and triples, its program with its leading words, its options'
names and the clusters of meaning of the English words in it (learned_words.bin, built by
bench/guard_clusters.py from WordLlama's vectors: an unseen `quiesce` lands where `pause` and `suspend` are),
hashed into 2^18 weights of a logistic regression trained
(bench/guard_train.py) on the labelled commands of the held-out sets used for fixing, the rule tests' cases and
written runbook lines, never on the sets kept unseen. A high score says "this reads like the commands that
destroy, take down or open things", so commands.py reports it at warn (rule `learned-risk`) when nothing else
flagged the command and it is not a read, a dry run or a diagnostic. The weights (int16, zlib) are in
learned.bin; their scale, the threshold chosen by cross-validation, what they were trained on and the checksum of
the word table they were trained with in learned.json. Plain Python: scoring a command is a few hundred table
lookups.
"""

from __future__ import annotations

import json
import math
import re
import sys
import zlib
from array import array
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BITS = 18
MASK = (1 << BITS) - 1
WEIGHTS = Path(__file__).with_name("learned.bin")
META = Path(__file__).with_name("learned.json")
WORDS = Path(__file__).with_name("learned_words.bin")
CLUSTERS = (256, 1024, 3000)  # how finely the word table groups meanings, coarse to fine
MAX_CHARS = 2000
MAX_TOKENS = 60
MAX_TOKEN = 40
_TOKEN = re.compile(r"\S+")
_TRIM = "'\"`;,()"


_LETTERS = re.compile(r"[A-Za-z]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


@lru_cache(maxsize=1)
def _word_table() -> tuple[dict[str, tuple[str, ...]], int]:
    """The word -> clusters table and its checksum; empty (checksum 0) when the file is missing or unreadable."""
    try:
        raw = zlib.decompress(WORDS.read_bytes())
    except (OSError, zlib.error):
        return {}, 0
    table: dict[str, tuple[str, ...]] = {}
    for line in raw.decode("ascii", "replace").splitlines():
        word, *clusters = line.split()
        table[word] = tuple(f"c{i}:{c}" for i, c in enumerate(clusters))
    return table, zlib.crc32(raw)


def words(text: str) -> list[str]:
    """The English words in a command: runs of letters, camelCase split (resetToDefault: reset, default),
    lower-cased, 3 letters or more."""
    out = []
    for token in _TOKEN.findall(text[:MAX_CHARS])[:MAX_TOKENS]:
        for run in _LETTERS.findall(token[:MAX_TOKEN]):
            out.extend(w.lower() for w in _CAMEL.sub(" ", run).split() if len(w) >= 3)
    return out


def _tokens(text: str) -> list[str]:
    """The words a command is scored by: lower-cased, bounded in number and length."""
    return [t[:MAX_TOKEN] for t in _TOKEN.findall(text.lower()[:MAX_CHARS])[:MAX_TOKENS]]


def grams(text: str) -> list[str]:
    """What a command is made of: each word's character 3-5-grams (with its edges), the word, each word pair,
    triple and pair one apart, the program with its later leading words, its first and last words, the
    names of its options and the clusters of its English words."""
    tokens = _tokens(text)
    out: list[str] = []
    for token in tokens:
        out.extend(token_grams(token))
    clean = [t.strip(_TRIM) for t in tokens]
    out.extend(f"b:{a} {b}" for a, b in zip(clean, clean[1:]))
    out.extend(f"t:{a} {b} {c}" for a, b, c in zip(clean, clean[1:], clean[2:]))
    out.extend(f"k:{a} {b}" for a, b in zip(clean, clean[2:]))
    out.extend("o:" + t.split("=", 1)[0] for t in tokens if t.startswith("-"))
    if clean:
        out.extend(f"p:{clean[0]} {w}" for w in clean[2:6])
        out.extend((f"f:{clean[0]}", f"l:{clean[-1]}"))
    table = _word_table()[0]
    for word in words(text):
        out.extend(table.get(word, ()))
    return out


def token_grams(token: str) -> list[str]:
    edged = f" {token} "
    out = [edged[i:i + n] for n in (3, 4, 5) for i in range(len(edged) - n + 1)]
    out.append("w:" + token.strip(_TRIM))
    return out


def features(text: str) -> dict[int, float]:
    """Hashed gram counts, scaled to unit length."""
    counts: dict[int, float] = {}
    for gram in grams(text):
        key = zlib.crc32(gram.encode()) & MASK
        counts[key] = counts.get(key, 0.0) + 1.0
    norm = sum(v * v for v in counts.values()) ** 0.5 or 1.0
    return {k: v / norm for k, v in counts.items()}


@dataclass(frozen=True)
class Model:
    weights: array  # int16, 2^BITS; a weight is weights[k] * scale
    scale: float
    bias: float
    threshold: float
    meta: dict

    def score(self, text: str) -> float:
        """The probability-like score in [0, 1] that the command is one to warn about."""
        z = self.bias + self.scale * sum(self.weights[k] * v for k, v in features(text).items())
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def weighed(self, text: str, top: int = 3) -> list[str]:
        """The words that pushed the score up most (what a warning names as its reason)."""
        pushes: dict[str, float] = {}
        for token in _tokens(text):
            word = token.strip(_TRIM)
            if word:
                push = sum(self.weights[zlib.crc32(g.encode()) & MASK] for g in token_grams(token))
                pushes[word] = max(pushes.get(word, push), push)
        ranked = sorted((w for w, p in pushes.items() if p > 0), key=lambda w: -pushes[w])
        return ranked[:top]


def save(weights: list[float], bias: float, meta: dict) -> None:
    """Write a trained model (bench/guard_train.py)."""
    scale = max(abs(w) for w in weights) / 32767 or 1.0
    packed = array("h", (round(w / scale) for w in weights))
    if sys.byteorder != "little":
        packed.byteswap()
    WEIGHTS.write_bytes(zlib.compress(packed.tobytes(), 9))
    META.write_text(json.dumps({**meta, "bits": BITS, "scale": scale, "bias": bias, "words_crc32": _word_table()[1]},
                               indent=1) + "\n", encoding="utf-8")


@lru_cache(maxsize=1)
def model() -> Model | None:
    """The shipped model, or None when its files are missing or unreadable (the rules still run)."""
    try:
        meta = json.loads(META.read_text(encoding="utf-8"))
        weights = array("h")
        weights.frombytes(zlib.decompress(WEIGHTS.read_bytes()))
        if sys.byteorder != "little":
            weights.byteswap()
        if len(weights) != 1 << BITS or meta.get("bits") != BITS or meta.get("words_crc32", 0) != _word_table()[1]:
            return None  # weights trained with another word table (or none) would score other features
        return Model(weights=weights, scale=float(meta["scale"]), bias=float(meta["bias"]),
                     threshold=float(meta["threshold"]), meta=meta)
    except (OSError, KeyError, ValueError, TypeError, zlib.error):
        return None
