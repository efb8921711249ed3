"""Tests for the structure-aware chunker and the token estimate (no database, no network)."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from pathlib import Path

import pytest

from retrieval.blocks import markdown_title
from retrieval.chunking import chunk_markdown, chunk_text
from retrieval.models import Chunk, Section
from retrieval.tokens import count_tokens, token_weight

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"
KINDS = {"code", "table", "steps", "list", "yaml", "json"}
WORDS = [
    "disk", "node", "pod", "alert", "latency", "replica", "backup", "restore", "volume", "queue",
    "shard", "leader", "cluster", "metric", "graph", "rollout", "config", "cache", "socket",
    "timeout", "retry", "kernel", "inode", "service", "upstream",
]


def prose(sentences: int, seed: int = 0, words: int = 12) -> str:
    """Deterministic filler prose: ``sentences`` sentences of ``words`` words."""
    rng = random.Random(seed)
    out = []
    for _ in range(sentences):
        sentence = " ".join(rng.choice(WORDS) for _ in range(words))
        out.append(sentence[0].upper() + sentence[1:] + ".")
    return " ".join(out)


def paragraphs(count: int, sentences: int = 4, seed: int = 0) -> str:
    """``count`` paragraphs of filler prose separated by blank lines."""
    return "\n\n".join(prose(sentences, seed * 1000 + i) for i in range(count))


def steps(count: int, seed: int = 0, nested: bool = True) -> str:
    """A numbered procedure with nested bullets and a code fence inside items."""
    items = []
    for i in range(1, count + 1):
        item = f"{i}. {prose(2, seed + i)}"
        pad = " " * (len(str(i)) + 2)  # content column of the item
        if nested:
            item += f"\n{pad}- {prose(1, seed + 100 + i)}\n{pad}- sub item {i}"
            code = ["```bash", f"# step {i} comment", f"systemctl restart svc-{i}", "```"]
            item += "\n\n" + "\n".join(pad + line for line in code)
        items.append(item)
    return "\n".join(items)


def table(rows: int) -> str:
    """A pipe table with ``rows`` body rows."""
    lines = ["| host | role | disk usage | notes |", "| --- | --- | --- | --- |"]
    lines += [f"| db-{i:02d} | replica | {i}% | {prose(1, i, 6)} |" for i in range(rows)]
    return "\n".join(lines)


def check(text: str, sections: list[Section], chunks: list[Chunk], max_tokens: int = 600) -> None:
    """Invariants every chunking result must satisfy."""
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert [s.index for s in sections] == list(range(len(sections)))
    for s in sections:
        assert text[s.char_start : s.char_end] == s.text
        assert s.text.strip() and s.token_count == count_tokens(s.text)
    for c in chunks:
        assert c.text.strip(), "empty chunk"
        assert text[c.char_start : c.char_end] == c.text, "chunk is not an exact slice"
        assert c.token_count == count_tokens(c.text)
        assert c.token_count <= max_tokens or c.metadata.get("oversized") is True
        if c.metadata.get("oversized"):
            assert c.token_count > max_tokens
        section = sections[c.section_index]
        assert section.char_start <= c.char_start and c.char_end <= section.char_end
        blocks = c.metadata["blocks"]
        assert blocks == sorted(set(blocks)) and set(blocks) <= KINDS
        json.dumps(c.metadata)
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    lost = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert not lost, f"text lost at {lost[:3]}: {text[lost[0]:lost[0] + 40]!r}"


def run(text: str, **kwargs) -> tuple[list[Section], list[Chunk]]:
    """Chunk and check the invariants."""
    sections, chunks = chunk_markdown(text, **kwargs)
    check(text, sections, chunks, kwargs.get("max_tokens", 600))
    return sections, chunks


def holder(chunks: list[Chunk], needle: str) -> list[Chunk]:
    """The chunks containing ``needle`` whole."""
    return [c for c in chunks if needle in c.text]


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("", 0, 0),
        ("   \n\t ", 0, 0),
        ("hello", 1, 2),
        ("hello world", 2, 3),
        ("!", 1, 1),
        ("a, b.", 4, 5),
        ("kubectl get pods -n kube-system", 8, 12),
        ("12345678", 3, 3),
        (prose(10), 160, 180),
    ],
)
def test_count_tokens_ranges(text: str, low: int, high: int) -> None:
    assert low <= count_tokens(text) <= high


def test_token_weight_is_additive_over_whitespace() -> None:
    a, b = prose(3, 1), "```bash\ndf -h /var/lib/docker\n```"
    assert token_weight(a + "\n\n" + b) == pytest.approx(token_weight(a) + token_weight(b))
    assert count_tokens(a) == count_tokens(a)


# --------------------------------------------------------------------------- structure


def test_empty_and_whitespace_give_nothing() -> None:
    assert chunk_markdown("") == ([], [])
    assert chunk_markdown(" \n\n\t\n") == ([], [])
    assert chunk_text("\n\n") == ([], [])


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_comment_lines_in_code_fences_are_not_headings(fence: str) -> None:
    text = (
        f"# Runbook\n\n## Fix\n\n{prose(3)}\n\n{fence}bash\n# stop the service\nsystemctl stop x\n"
        f"## also not a heading\n# restart\nsystemctl start x\n{fence}\n\n{prose(2, 1)}\n"
    )
    sections, chunks = run(text, min_tokens=0)
    paths = {p for c in chunks for p in c.heading_path}
    paths |= {p for s in sections for p in s.heading_path}
    assert paths == {"Runbook", "Fix"}
    (code,) = holder(chunks, "# stop the service")
    assert "# restart\nsystemctl start x" in code.text
    assert "code" in code.metadata["blocks"] and code.metadata["code_langs"] == ["bash"]


def test_unterminated_fence_does_not_crash_or_lose_text() -> None:
    text = (
        f"# Broken\n\n## Before\n\n{prose(3)}\n\n```bash\necho start\n# comment\n\n"
        f"## After\n\n{prose(3, 1)}\n"
    )
    _, chunks = run(text, min_tokens=0)
    assert chunks
    # the text after a stray opening fence is still read as Markdown
    assert any(c.heading_path[-1:] == ("After",) for c in chunks)


def test_unclosed_fence_at_end_of_file() -> None:
    text = "# T\n\nSome words here.\n\n```"
    _, chunks = run(text)
    assert "".join(c.text for c in chunks).count("```") == 1


def test_fence_closed_only_by_matching_marker() -> None:
    text = f"## A\n\n````md\n```\n# inside\n```\n````\n\n{prose(2)}\n"
    _, chunks = run(text, min_tokens=0)
    assert [c.heading_path for c in chunks] == [("A",)]


def test_no_headings_is_one_section() -> None:
    text = paragraphs(3) + "\n\n- a bullet\n- another\n"
    sections, chunks = run(text)
    assert len(sections) == 1 and sections[0].heading_path == ()
    assert len(chunks) == 1 and chunks[0].heading_path == ()
    assert chunks[0].metadata["blocks"] == ["list"]


def test_headings_only_file() -> None:
    text = "# Title\n\n## One\n\n### One point one\n\n## Two\n\n#### Deep\n"
    _, chunks = run(text)
    assert len(chunks) == 1
    assert chunks[0].text == text.strip()
    assert chunks[0].heading_path == ("Title",)


@pytest.mark.parametrize("text", ["# Only a title", "## Lonely h2\n", "###### h6\n", "#\n"])
def test_single_heading_files(text: str) -> None:
    _, chunks = run(text)
    assert len(chunks) <= 1
    if chunks:
        assert chunks[0].text == text.strip()


def test_heading_paths_h1_h2_h3() -> None:
    text = (
        f"# Disk full on a Linux host\n\n{prose(5)}\n\n"
        f"## Diagnosis\n\n{prose(6, 1)}\n\n"
        f"## Mitigation\n\n{prose(6, 2)}\n\n"
        f"### Docker images\n\n{prose(6, 3)}\n\n"
        f"### Journald logs\n\n{prose(6, 4)}\n\n"
        f"# Appendix\n\n### Orphan h3\n\n{prose(6, 5)}\n"
    )
    sections, chunks = run(text, min_tokens=0)
    assert [c.heading_path for c in chunks] == [
        ("Disk full on a Linux host",),
        ("Disk full on a Linux host", "Diagnosis"),
        ("Disk full on a Linux host", "Mitigation"),
        ("Disk full on a Linux host", "Mitigation", "Docker images"),
        ("Disk full on a Linux host", "Mitigation", "Journald logs"),
        ("Appendix",),
        ("Appendix", "Orphan h3"),
    ]
    assert [s.heading_path for s in sections] == [
        ("Disk full on a Linux host",),
        ("Disk full on a Linux host", "Diagnosis"),
        ("Disk full on a Linux host", "Mitigation"),
        ("Appendix",),
    ]
    assert [c.section_index for c in chunks] == [0, 1, 2, 2, 2, 3, 3]
    assert sections[2].text.startswith("## Mitigation") and sections[2].text.endswith(prose(6, 4))
    for c in chunks:  # each chunk starts with its own heading line
        assert c.text.lstrip("#").strip().startswith(c.heading_path[-1])


def test_heading_markup_is_dropped_from_path() -> None:
    text = f"# The `df` **command** #\n\n{prose(6)}\n\n## Setext *two*\n---\n\n{prose(6, 1)}\n"
    _, chunks = run(text, min_tokens=0)
    assert [c.heading_path for c in chunks] == [
        ("The df command",),
        ("The df command", "Setext two"),
    ]


def test_setext_headings() -> None:
    text = f"Disk full\n=========\n\n{prose(6)}\n\nCleanup\n-------\n\n{prose(6, 1)}\n"
    _, chunks = run(text, min_tokens=0)
    assert [c.heading_path for c in chunks] == [("Disk full",), ("Disk full", "Cleanup")]
    assert chunks[1].text.startswith("Cleanup\n-------")
    assert markdown_title(text) == "Disk full"


@pytest.mark.parametrize("level", [4, 5, 6])
def test_h4_to_h6_do_not_split(level: int) -> None:
    marks = "#" * level
    text = f"## Restart\n\n{prose(5)}\n\n{marks} Details\n\n{prose(5, 1)}\n"
    _, chunks = run(text, min_tokens=0)
    assert len(chunks) == 1 and chunks[0].heading_path == ("Restart",)
    assert f"{marks} Details" in chunks[0].text


def test_h4_in_a_long_section_never_enters_the_path() -> None:
    body = "\n\n".join(f"#### Part {i}\n\n{paragraphs(2, 3, i)}" for i in range(8))
    _, chunks = run(f"## Long\n\n{body}\n")
    assert len(chunks) > 1
    assert {c.heading_path for c in chunks} == {("Long",)}
    for c in chunks:  # a cut never leaves an H4 as the last line of a chunk
        assert not c.text.splitlines()[-1].startswith("####")


def test_tiny_sections_merge_into_following_sibling() -> None:
    text = (
        "# Redis\n\n## Symptoms\n\nSlow requests.\n\n"
        f"### Latency\n\nCheck the p99.\n\n### Memory\n\n{prose(8)}\n\n"
        f"## Fix\n\n{prose(12, 1)}\n"
    )
    _, chunks = run(text)
    first = chunks[0]
    assert first.heading_path == ("Redis",)  # the path of the first merged section
    assert first.text.startswith("# Redis\n\n## Symptoms\n\nSlow requests.\n\n### Latency")
    assert "### Memory" in first.text  # merged forward into the next sibling
    assert holder(chunks, "## Fix")[0].heading_path == ("Redis", "Fix")
    assert all(c.token_count >= 80 for c in chunks)


def test_tiny_last_section_merges_backwards_within_parent() -> None:
    text = f"## Fix\n\n{prose(10)}\n\n### Verify\n\nRun `df -h`.\n"
    sections, chunks = run(text)
    assert len(sections) == 1 and len(chunks) == 1
    assert chunks[0].heading_path == ("Fix",)
    assert chunks[0].text.endswith("Run `df -h`.")


def test_tiny_parents_kept_apart_when_asked() -> None:
    text = f"# Title\n\nShort intro.\n\n## Body\n\n{prose(10)}\n"
    sections, chunks = run(text, merge_tiny_parents=False)
    assert [c.heading_path for c in chunks] == [("Title",), ("Title", "Body")]
    assert len(sections) == 2
    sections, chunks = run(text)
    assert [c.heading_path for c in chunks] == [("Title",)]
    assert len(sections) == 1


def test_preamble_before_first_heading_takes_next_path_when_merged() -> None:
    text = f"<!-- generated -->\n\n# Real title\n\n{prose(10)}\n"
    _, chunks = run(text)
    assert chunks[0].heading_path == ("Real title",)
    assert chunks[0].text.startswith("<!-- generated -->")


# --------------------------------------------------------------------------- atomic blocks


def test_numbered_steps_with_nested_lists_and_code_are_never_split() -> None:
    procedure = steps(6)
    assert 300 < count_tokens(procedure) < 600
    text = f"## Failover\n\n{paragraphs(3, 5)}\n\n{procedure}\n\n{paragraphs(2, 5, 1)}\n"
    _, chunks = run(text)
    assert len(chunks) > 1
    (whole,) = holder(chunks, procedure)
    assert {"steps", "list", "code"} <= set(whole.metadata["blocks"])
    assert "oversized" not in whole.metadata


def test_long_numbered_procedure_is_one_oversized_chunk() -> None:
    procedure = steps(20)
    assert count_tokens(procedure) > 600
    text = f"## Rebuild the replica\n\n{procedure}\n\n{paragraphs(3, 5)}\n"
    _, chunks = run(text)
    (whole,) = holder(chunks, procedure)
    assert whole.metadata["oversized"] is True
    assert whole.text.startswith("## Rebuild the replica")  # the heading stays with it
    assert "steps" in whole.metadata["blocks"]
    assert all(not c.metadata.get("oversized") for c in chunks if c is not whole)


@pytest.mark.parametrize(("rows", "oversized"), [(12, False), (60, True)])
def test_tables_are_never_split(rows: int, oversized: bool) -> None:
    tbl = table(rows)
    text = f"## Hosts\n\n{paragraphs(3, 5)}\n\n{tbl}\n\n{paragraphs(3, 5, 1)}\n"
    _, chunks = run(text)
    (whole,) = holder(chunks, tbl)
    assert "table" in whole.metadata["blocks"]
    assert bool(whole.metadata.get("oversized")) is oversized


def test_huge_code_block_stands_alone() -> None:
    code = "```yaml\n" + "\n".join(f"key_{i}: value-{i} # note {i}" for i in range(200)) + "\n```"
    text = f"## Config\n\n{paragraphs(4, 5)}\n\n{code}\n\n{paragraphs(4, 5, 1)}\n"
    _, chunks = run(text)
    (whole,) = holder(chunks, code)
    assert whole.text == code and whole.metadata["oversized"] is True
    assert whole.metadata["blocks"] == ["code", "yaml"]


@pytest.mark.parametrize(
    ("block", "kinds", "langs"),
    [
        ("```yaml\na: 1\n```", ["code", "yaml"], ["yaml"]),
        ("```yml\na: 1\n```", ["code", "yaml"], ["yml"]),
        ('```json\n{"a": 1}\n```', ["code", "json"], ["json"]),
        ('```\n{"a": [1, 2]}\n```', ["code", "json"], None),
        ("```\n{not json\n```", ["code"], None),
        ("```bash\nls\n```", ["code"], ["bash"]),
        ("    indented code", ["code"], None),
        ("| a | b |\n| - | - |\n| 1 | 2 |", ["table"], None),
        ("1. one\n2. two", ["steps"], None),
        ("- one\n- two", ["list"], None),
        ("Plain words.", [], None),
    ],
)
def test_block_kinds_metadata(block: str, kinds: list[str], langs: list[str] | None) -> None:
    _, chunks = run(f"## Kinds\n\nIntro line.\n\n{block}\n")
    assert chunks[0].metadata["blocks"] == kinds
    assert chunks[0].metadata.get("code_langs") == langs


# --------------------------------------------------------------------------- sizes and overlap


def test_long_prose_section_is_cut_with_overlap() -> None:
    text = f"# Guide\n\n{prose(8, 9)}\n\n## Background\n\n{paragraphs(14, 4)}\n\n"
    text += f"## Short\n\n{prose(8, 1)}\n"
    _, chunks = run(text)
    cut = [c for c in chunks if c.heading_path == ("Guide", "Background")]
    assert len(cut) >= 3
    for c in cut:
        assert 250 <= c.token_count <= 600
    for prev, nxt in pairwise(cut):
        assert nxt.char_start < prev.char_end, "continuation must start inside the previous chunk"
        shared = text[nxt.char_start : prev.char_end]
        assert 20 <= count_tokens(shared) <= 80
        assert text[nxt.char_start - 1].isspace(), "overlap must not start mid-word"
        assert text[nxt.char_start - 2] in ".\n" or text[nxt.char_start - 1] == "\n"
    others = [c for c in chunks if c not in cut]  # no overlap anywhere else
    ordered = sorted(chunks, key=lambda c: c.char_start)
    for a, b in pairwise(ordered):
        if a in others or b in others:
            assert a.char_end <= b.char_start


def test_no_overlap_between_sections() -> None:
    text = "\n\n".join(f"## Part {i}\n\n{paragraphs(4, 4, i)}" for i in range(4))
    _, chunks = run(text)
    for a, b in pairwise(chunks):
        assert a.char_end <= b.char_start


def test_overlap_zero_means_disjoint_chunks() -> None:
    text = f"## Long\n\n{paragraphs(20, 4)}\n"
    _, chunks = run(text, overlap_tokens=0)
    assert len(chunks) > 2
    for a, b in pairwise(chunks):
        assert a.char_end <= b.char_start


def test_one_giant_paragraph_is_cut_at_sentences() -> None:
    text = prose(120, 3)
    _, chunks = run(text)
    assert len(chunks) >= 4
    for c in chunks:
        assert c.text.endswith(".")


def test_one_giant_line_without_punctuation_is_cut_at_words() -> None:
    text = " ".join(WORDS * 60)
    _, chunks = run(text)
    assert len(chunks) > 2 and not any(c.metadata.get("oversized") for c in chunks)


def test_long_bullet_list_is_not_atomic() -> None:
    bullets = "\n".join(f"- {prose(2, i)}" for i in range(40))
    _, chunks = run(f"## Checklist\n\n{bullets}\n")
    assert len(chunks) > 1
    assert not any(c.metadata.get("oversized") for c in chunks)
    assert all("list" in c.metadata["blocks"] for c in chunks)


def test_bullet_item_holding_a_code_block_keeps_the_code_whole() -> None:
    lines = [f"   echo line {i} {prose(1, i)}" for i in range(40)]
    code = "```bash\n" + "\n".join(lines) + "\n   ```"
    item = f"- Run the script:\n\n   {code}"
    text = f"## Script\n\n{prose(3)}\n\n{item}\n- {prose(3, 2)}\n"
    _, chunks = run(text)
    assert holder(chunks, code)


def test_parent_sections_split_at_h3_over_2000_tokens() -> None:
    children = "\n\n".join(f"### Case {i}\n\n{paragraphs(5, 4, i)}" for i in range(8))
    text = f"## Scenarios\n\n{prose(3)}\n\n{children}\n"
    sections, _ = run(text)
    assert len(sections) >= 2
    assert all(s.token_count <= 2000 for s in sections)
    assert sum(s.token_count for s in sections) > 2000
    assert all(s.text.startswith("### Case") for s in sections[1:])
    assert {s.heading_path[0] for s in sections} == {"Scenarios"}


def test_every_chunk_within_bounds_on_a_mixed_document() -> None:
    text = "\n\n".join(
        [
            "# Mixed",
            paragraphs(3),
            "## Steps",
            steps(4),
            "## Data",
            table(8),
            "```json\n" + json.dumps({f"k{i}": i for i in range(60)}, indent=2) + "\n```",
            "## Notes",
            "> " + prose(20, 4),
            "<details>\n<summary>More</summary>\n\n" + paragraphs(6, 4, 7) + "\n\n</details>",
            "[ref]: https://example.com/runbook",
        ]
    )
    _, chunks = run(text)
    assert len(chunks) > 3


def test_output_is_deterministic() -> None:
    text = "\n\n".join(
        f"## S{i}\n\n{paragraphs(i % 5 + 1, 4, i)}\n\n{steps(i % 3 + 1)}" for i in range(6)
    )
    assert chunk_markdown(text) == chunk_markdown(text)
    assert chunk_markdown(text, target_tokens=300) == chunk_markdown(text, target_tokens=300)


@pytest.mark.parametrize(("target", "maximum"), [(200, 300), (450, 600), (800, 1000)])
def test_limits_are_respected(target: int, maximum: int) -> None:
    text = "\n\n".join(f"## S{i}\n\n{paragraphs(6, 4, i)}" for i in range(4))
    _, chunks = run(text, target_tokens=target, max_tokens=maximum)
    assert all(c.token_count <= maximum for c in chunks)


def test_chunk_text_treats_markup_as_text() -> None:
    text = f"# not a heading\n\n{paragraphs(20, 4)}\n\n```\nnot code\n"
    sections, chunks = chunk_text(text)
    check(text, sections, chunks)
    assert len(sections) == 1 and all(c.heading_path == () for c in chunks)
    assert all(c.metadata["blocks"] == [] for c in chunks)


def test_crlf_and_cr_line_ends() -> None:
    for newline in ("\r\n", "\r"):
        text = newline.join(["# Title", "", prose(8), "", "## Part", "", prose(8, 1), ""])
        _, chunks = run(text, min_tokens=0)
        assert [c.heading_path for c in chunks] == [("Title",), ("Title", "Part")]


SNIPPETS = [
    "# H1", "## H2", "### H3", "#### h4", "Setext\n===", "Sub\n---", "```", "~~~",
    "```yaml\na: 1\n```",
    "    indented", "- item", "  - nested", "1. step", "10. step", "   ```bash\n   x\n   ```",
    "> quote", "| a | b |\n|---|---|\n| 1 | 2 |", "<div>", "</div>", "<!-- c -->",
    "[ref]: http://x", "---", "", "\t\ttabbed", "trailing spaces   ", "x" * 3000, "a " * 800,
    "#no space", "```\n# c\n", "\u00e9\u6f22\u5b57", "\u00a0",
]


@pytest.mark.parametrize("seed", range(25))
def test_random_messy_markdown_keeps_invariants(seed: int) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(1, 50)):
        roll = rng.random()
        if roll < 0.25:
            parts.append(prose(rng.randint(1, 30), rng.randint(0, 999)))
        elif roll < 0.3:
            parts.append(steps(rng.randint(1, 12), rng.randint(0, 99), nested=rng.random() < 0.5))
        elif roll < 0.33:
            parts.append(table(rng.randint(1, 40)))
        else:
            parts.append(rng.choice(SNIPPETS))
    text = rng.choice(["\n", "\n\n"]).join(parts)
    for maximum, target, overlap, minimum in [(600, 450, 50, 80), (100, 60, 20, 30)]:
        sizes = {"max_tokens": maximum, "target_tokens": target}
        sizes |= {"overlap_tokens": overlap, "min_tokens": minimum}
        run(text, **sizes)
        sections, chunks = chunk_text(text, **sizes)
        check(text, sections, chunks, maximum)


# --------------------------------------------------------------------------- real documents


def _corpus_files() -> list[Path]:
    root = EVAL / "gitlab" / "corpus"
    return sorted(root.rglob("*.md")) if root.is_dir() else []


@pytest.mark.skipif(not _corpus_files(), reason=f"eval corpus not found at {EVAL / 'gitlab'}")
def test_chunks_every_gitlab_runbook() -> None:
    total = 0
    for path in _corpus_files():
        text = path.read_text(encoding="utf-8")
        try:
            sections, chunks = chunk_markdown(text)
            check(text, sections, chunks)
        except AssertionError as exc:
            raise AssertionError(f"{path.relative_to(EVAL)}: {exc}") from exc
        assert bool(chunks) == bool(text.strip())
        total += len(chunks)
    assert total > 1000
