"""A synthetic runbook corpus of any size, generated at run time from real ones (for benchmarks).

Every synthetic document is a perturbed copy of a real runbook: a sample of its sections (now and
then one borrowed from another runbook of the same set), each section remixed (a fifth of its
paragraphs dropped, often one or two paragraphs of other runbooks of the set added, the order
shuffled; code fences kept whole), kebab-case names (services, hosts, namespaces, labels) swapped for
invented ones, and numbers varied. The invented names are drawn from a Zipf distribution over an
unbounded pool, so the vocabulary keeps growing with the corpus, ever more slowly (Heaps' law), as
real runbook collections do. Queries (alerts pasted into a thread) are perturbed the same way.
Nothing here is stored in the repository: the text comes from the given corpus folders.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

T = TypeVar("T")
_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b")
_NUMBER = re.compile(r"(?<![\w.-])\d{1,6}(?![\w.-])")
_IP = re.compile(r"\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b")
_HEADING = re.compile(r"^#{2,3} ", re.MULTILINE)
_SYLLABLES = ("ka", "lo", "mi", "ter", "van", "zu", "rex", "pol", "dan", "sia", "mor", "tel",
              "quin", "bri", "sto", "nex", "ga", "hol", "vi", "ra", "cor", "bel", "ny", "fos")
_KINDS = ("api", "worker", "gateway", "db", "cache", "proxy", "sync", "queue", "scheduler",
          "ingest", "exporter", "operator", "frontend", "billing", "auth", "search")
_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1")
# Front matter, so that filtered searches can be measured: each document belongs to one of
# SERVICES services, drawn from a Zipf law (1/rank), to an environment, and has one to three tags.
SERVICES = 64
_ENVIRONMENTS = ("production", "staging", "dev")
_ENVIRONMENT_WEIGHTS = (6, 3, 1)


@dataclass(frozen=True)
class BaseDocument:
    """A real runbook cut into its preamble and its H2/H3 sections."""

    corpus: str
    path: str
    preamble: str
    sections: tuple[str, ...]


@dataclass(frozen=True)
class SyntheticDocument:
    """One generated runbook: a relative path and Markdown bytes."""

    path: str
    data: bytes


def load_base(roots: list[Path]) -> list[BaseDocument]:
    """Markdown runbooks under each corpus root, cut at H2/H3 headings."""
    docs = []
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            text = path.read_text(encoding="utf-8", errors="replace")
            cuts = [m.start() for m in _HEADING.finditer(text) if not _inside_fence(text, m.start())]
            bounds = [0, *cuts, len(text)]
            parts = [text[a:b] for a, b in zip(bounds, bounds[1:])]
            if text.strip():
                docs.append(BaseDocument(root.parent.name, path.relative_to(root).as_posix(), parts[0], tuple(parts[1:])))
    if not docs:
        raise FileNotFoundError(f"no Markdown runbooks under {', '.join(map(str, roots))}")
    return docs


def _inside_fence(text: str, offset: int) -> bool:
    return text.count("```", 0, offset) % 2 == 1


class Perturber:
    """Swaps names and varies numbers; names come from a Zipf law over an unbounded pool."""

    def __init__(self, seed: int, *, zipf_a: float = 1.15, swap_share: float = 0.6) -> None:
        self._random = random.Random(seed)
        self._numpy = np.random.default_rng(seed)
        self._zipf_a = zipf_a
        self._swap_share = swap_share

    def name(self) -> str:
        """An invented service-like name; popular ones come back often, new ones keep coming."""
        k = min(int(self._numpy.zipf(self._zipf_a)) - 1, 10**9)
        k, kind = divmod(k, len(_KINDS))
        syllables = []
        while True:
            k, r = divmod(k, len(_SYLLABLES))
            syllables.append(_SYLLABLES[r])
            if k == 0:
                break
        return "".join(syllables) + "-" + _KINDS[kind]

    def text(self, text: str) -> str:
        """Swap a share of the kebab-case names (consistently within the text), vary numbers."""
        names = sorted(set(_NAME.findall(text)))
        mapping = {n: self._replacement(n) for n in names if self._random.random() < self._swap_share}
        if mapping:
            text = _NAME.sub(lambda m: mapping.get(m[0], m[0]), text)
        text = _IP.sub(lambda m: f"10.{self._random.randrange(256)}.{self._random.randrange(256)}.{m[4]}", text)
        return _NUMBER.sub(self._number, text)

    def _replacement(self, name: str) -> str:
        if re.search(r"-\d+$", name):  # host-like: web-03
            return f"{self.name()}-{self._random.randrange(1, 40):02d}"
        if self._random.random() < 0.1:
            return f"{self.name()}.{self._random.choice(_REGIONS)}"
        return self.name()

    def _number(self, match: re.Match[str]) -> str:
        if self._random.random() > 0.3:
            return match[0]
        value = int(match[0])
        return str(max(0, int(value * self._random.uniform(0.5, 2.0)) + self._random.randrange(3)))

    def shuffle(self, section: str, donors: Sequence[str] = ()) -> str:
        """Remix a section's paragraphs after its heading: drop some, borrow some from donor
        paragraphs, shuffle; code fences stay whole."""
        heading, _, body = section.partition("\n")
        blocks = _blocks(body)
        kept = [b for b in blocks if self._random.random() >= 0.2] or blocks[:1]
        if donors and self._random.random() < 0.6:
            kept += [self._random.choice(donors) for _ in range(self._random.randint(1, 2))]
        if len(kept) > 2 and self._random.random() < 0.5:
            self._random.shuffle(kept)
        return heading + "\n" + "\n\n".join(kept) + "\n\n"

    def choice(self, items: Sequence[T]) -> T:
        """A random item."""
        return self._random.choice(items)

    def keep(self, share: float) -> bool:
        """True with probability share."""
        return self._random.random() < share


def _blocks(body: str) -> list[str]:
    """Blank-line separated blocks, never cutting inside a code fence."""
    blocks, current, fenced = [], [], False
    for line in body.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def service_name(rank: int) -> str:
    """The name of the service of popularity rank `rank` (0 is the most common): api-1, worker-1..."""
    return f"{_KINDS[rank % len(_KINDS)]}-{rank // len(_KINDS) + 1}"


def service_share(rank: int) -> float:
    """The expected share of documents that belong to the service of rank `rank`."""
    return (1 / (rank + 1)) / sum(1 / (i + 1) for i in range(SERVICES))


def with_front_matter(text: str, metadata: dict[str, str | list[str]]) -> str:
    """The text with these keys in its YAML front matter (added to the front matter it has)."""
    lines = "".join(f"{k}: [{', '.join(v)}]\n" if isinstance(v, list) else f"{k}: {v}\n" for k, v in metadata.items())
    if re.match(r"---[ \t]*\n", text):
        first, _, rest = text.partition("\n")
        return f"{first}\n{lines}{rest}"
    return f"---\n{lines}---\n\n{text}"


def documents(base: list[BaseDocument], seed: int = 0) -> Iterator[SyntheticDocument]:
    """An endless stream of perturbed runbooks built from base documents, each with a service, an
    environment and tags in its front matter (drawn apart from the text: the text is the same as
    without them)."""
    perturb = Perturber(seed)
    owners = random.Random(seed + 7919)
    service_weights = [1 / (i + 1) for i in range(SERVICES)]
    by_corpus: dict[str, list[BaseDocument]] = {}
    for doc in base:
        by_corpus.setdefault(doc.corpus, []).append(doc)
    paragraphs = {c: [b for d in docs for sec in d.sections for b in _blocks(sec.partition("\n")[2])]
                  for c, docs in by_corpus.items()}
    n = 0
    while True:
        doc = perturb.choice(base)
        sections = [s for s in doc.sections if perturb.keep(0.85)] or list(doc.sections[:1])
        if perturb.keep(0.3):
            other = perturb.choice(by_corpus[doc.corpus])
            if other.sections:
                sections.append(perturb.choice(other.sections))
        body = doc.preamble + "".join(perturb.shuffle(s, paragraphs[doc.corpus]) for s in sections)
        if not body.strip():
            continue
        stem = doc.path.rsplit("/", 1)
        metadata: dict[str, str | list[str]] = {
            "service": service_name(owners.choices(range(SERVICES), service_weights)[0]),
            "environment": owners.choices(_ENVIRONMENTS, _ENVIRONMENT_WEIGHTS)[0],
            "tags": owners.sample(_KINDS, owners.randint(1, 3)),
        }
        text = with_front_matter(perturb.text(body), metadata)
        yield SyntheticDocument(f"{doc.corpus}/{n:07d}/{stem[-1]}", text.encode("utf-8"))
        n += 1


def queries(files: list[Path], count: int, seed: int = 1) -> list[str]:
    """count alert-like queries: the eval sets' queries, perturbed like the documents."""
    texts = [json.loads(line)["query"] for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not texts:
        raise ValueError(f"no queries in {', '.join(map(str, files))}")
    perturb = Perturber(seed)
    return [perturb.text(texts[i % len(texts)]) for i in range(count)]
