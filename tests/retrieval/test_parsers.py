"""Tests for parse_document: formats, decoding, front matter, titles and rejections."""

from __future__ import annotations

import codecs
import io
import json
import random
import sys

import pytest

from retrieval.chunking import chunk_markdown
from retrieval.models import MalformedDocument, ParsedDocument, UnsupportedFormat
from retrieval.converters import html_to_markdown, rst_to_markdown
from retrieval.parsers import humanise_name, parse_document
from tests.retrieval.test_chunking import EVAL, check, paragraphs, prose


def parse(name: str, data: bytes | str, **kwargs) -> ParsedDocument:
    """parse_document plus the chunking invariants on its result."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    doc = parse_document(name, raw, **kwargs)
    check(doc.text, doc.sections, doc.chunks, kwargs.get("max_tokens", 600))
    json.dumps(doc.metadata)
    return doc


def make_pdf(pages: list[list[str]]) -> bytes:
    """A small valid PDF with one text line per entry, written by hand (no library)."""
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
    ]
    font = 3 + 2 * count
    for i, lines in enumerate(pages):
        ops = " T* ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj"
            for line in lines
        )
        stream = f"BT /F1 12 Tf 72 720 Td 16 TL {ops} ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % off for off in offsets)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


# --------------------------------------------------------------------------- rejections


def _random_bytes(n: int, seed: int, nul: bool) -> bytes:
    data = random.Random(seed).randbytes(n)
    return data if nul else data.replace(b"\0", b"\x01")


@pytest.mark.parametrize(
    ("name", "data", "error", "message"),
    [
        ("x.md", b"", MalformedDocument, "empty file"),
        ("x.md", b"  \n\t\r\n ", MalformedDocument, "empty file"),
        ("x.txt", codecs.BOM_UTF8 + b"\n\n", MalformedDocument, "empty file"),
        (
            "x.md",
            "Caf\u00e9 cr\u00e8me runbook".encode("latin-1"),
            MalformedDocument,
            "not valid UTF-8",
        ),
        ("x.md", "# T\n".encode("utf-16"), MalformedDocument, "UTF-16"),
        ("x.md", b"# Title\x00\x00 more", UnsupportedFormat, "binary file"),
        ("x.md", _random_bytes(4096, 1, nul=True), UnsupportedFormat, "binary file"),
        ("notes", _random_bytes(4096, 2, nul=False), UnsupportedFormat, "binary file"),
        ("x.txt", b"\x01\x02\x03\x04text\x05\x06\x07\x08" * 50, UnsupportedFormat, "binary file"),
        (
            "img.png",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            UnsupportedFormat,
            "unsupported format .png",
        ),
        ("book.xlsx", b"PK\x03\x04 whatever", UnsupportedFormat, "unsupported format .xlsx"),
        ("Script.PY", b"print('hi')", UnsupportedFormat, "unsupported format .py"),
        ("x.md", b"# T\n" + b"word " * 100, MalformedDocument, "over the"),
        (
            "x.md",
            b"---\ntitle: [unclosed\n---\n# Body\n",
            MalformedDocument,
            "front matter is not valid YAML",
        ),
        (
            "x.md",
            b"---\nkey: value\n  bad: indent\n---\nBody\n",
            MalformedDocument,
            "not valid YAML",
        ),
        ("x.md", b"---\n- a\n- b\n---\nBody\n", MalformedDocument, "must be a mapping, not a list"),
        ("x.md", b"---\njust a string\n---\nBody\n", MalformedDocument, "must be a mapping"),
        ("x.md", b"---\ntitle: Only front matter\n---\n\n", MalformedDocument, "no text"),
        ("x.pdf", b"this is not a pdf at all", MalformedDocument, "not a PDF"),
    ],
)
def test_rejections(name: str, data: bytes, error: type[Exception], message: str) -> None:
    max_bytes = 200 if message == "over the" else 5_000_000
    with pytest.raises(error, match=message):
        parse_document(name, data, max_bytes=max_bytes)


def test_size_message_is_readable() -> None:
    with pytest.raises(MalformedDocument, match=r"file is 12\.3 MB, over the 5\.0 MB limit"):
        parse_document("big.md", b"a" * 12_300_000)


def test_unsupported_checked_before_content() -> None:
    with pytest.raises(UnsupportedFormat):
        parse_document("empty.png", b"")


# --------------------------------------------------------------------------- decoding


def test_crlf_is_normalised() -> None:
    data = f"# Disk full\r\n\r\n{prose(4)}\r\n\r\n## Fix\r\n\r\n```bash\r\ndf -h\r\n```\r\n"
    doc = parse("disk.md", data)
    assert "\r" not in doc.text
    assert doc.title == "Disk full"
    assert any("```bash\ndf -h\n```" in c.text for c in doc.chunks)


def test_lone_cr_line_ends_are_normalised() -> None:
    doc = parse("old.txt", b"line one\rline two\r\rpara two\r")
    assert doc.text == "line one\nline two\n\npara two\n"


def test_utf8_bom_is_stripped() -> None:
    doc = parse(
        "bom.md",
        codecs.BOM_UTF8 + "---\ntitle: Caf\u00e9\n---\n# Heading\n\nText \u2713\n".encode(),
    )
    assert doc.title == "Caf\u00e9"
    assert not doc.text.startswith("\ufeff")
    assert "\u2713" in doc.chunks[0].text


def test_utf8_multibyte_text_is_not_binary() -> None:
    text = (
        "# Ошибка диска\n\n"
        + "Диск заполнен, очистите журналы. " * 200
        + "\n\n日本語のテキスト。\n"
    )
    doc = parse("ru.md", text)
    assert doc.title == "Ошибка диска"


# ------------------------------------------------------------------- markdown and front matter


def test_front_matter_into_metadata() -> None:
    data = (
        "---\n"
        "title: Disk full on a Linux host\n"
        "tags: [disk, linux, storage]\n"
        "owner: sre\n"
        "reviewed: 2024-03-05\n"
        "updated: 2024-03-05T10:20:30Z\n"
        "severity: 2\n"
        "links:\n  dashboard: https://grafana.example/d/disk\n"
        "1: numeric key\n"
        "---\n"
        "# Something else\n\nBody text.\n"
    )
    doc = parse("disk-full.md", data)
    assert doc.title == "Disk full on a Linux host"
    assert doc.metadata["tags"] == ["disk", "linux", "storage"]
    assert doc.metadata["reviewed"] == "2024-03-05"
    assert doc.metadata["updated"].startswith("2024-03-05T10:20:30")
    assert doc.metadata["severity"] == 2
    assert doc.metadata["links"] == {"dashboard": "https://grafana.example/d/disk"}
    assert doc.metadata["1"] == "numeric key"
    assert doc.metadata["format"] == "markdown"
    assert doc.text.startswith("# Something else")  # offsets refer to the body
    assert doc.chunks[0].char_start == 0


@pytest.mark.parametrize(
    ("data", "metadata"),
    [
        ("---\n---\n# T\n", {"format": "markdown"}),
        ("---\n# yaml comment only\n---\n# T\n", {"format": "markdown"}),
        ("---\na: 1\n...\n# T\n", {"a": 1, "format": "markdown"}),
        ("# T\n\n---\n\na: 1\n---\n", {"format": "markdown"}),  # not at the very top
        ("---\nnot closed: true\n\n# T\n", {"format": "markdown"}),  # a thematic break
    ],
)
def test_front_matter_edge_cases(data: str, metadata: dict) -> None:
    assert parse("t.md", data).metadata == metadata


@pytest.mark.parametrize(
    ("name", "data", "title"),
    [
        ("disk-full.md", "No heading here.\n", "Disk full"),
        (
            "runbooks/high_cpu_usage.markdown",
            "Text.\n\n## Second level\n\nMore.\n",
            "High cpu usage",
        ),
        ("redis/README.md", "## Overview\n\nText.\n", "Redis"),
        ("x.md", "Intro.\n\n# First H1\n\n# Second H1\n", "First H1"),
        ("x.md", "```\n# not a title\n```\n\nSetext title\n===\n", "Setext title"),
        ("x.mdx", "---\ntitle: 42\n---\n# Heading\n", "42"),
        ("x.md", "---\ntitle: ''\n---\n# Heading\n", "Heading"),
    ],
)
def test_titles(name: str, data: str, title: str) -> None:
    assert parse(name, data).title == title


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("disk-full.md", "Disk full"),
        ("a/b/KubePodCrashLooping.md", "KubePodCrashLooping"),
        ("docs/redis/index.html", "Redis"),
        ("README", "README"),
        ("under__score--dash.txt", "Under score dash"),
    ],
)
def test_humanise_name(name: str, expected: str) -> None:
    assert humanise_name(name) == expected


def test_markdown_document_end_to_end() -> None:
    data = (
        f"# Postgres replica lag\n\n{prose(3)}\n\n## Diagnosis\n\n{paragraphs(3)}\n\n"
        f"## Fix\n\n1. Stop writes.\n2. Run:\n\n   ```sql\n   SELECT 1;\n   ```\n3. Verify.\n"
    )
    doc = parse("pg/replica-lag.md", data, target_tokens=200, max_tokens=300, overlap_tokens=20)
    assert doc.title == "Postgres replica lag"
    assert doc.metadata == {"format": "markdown"}
    (fix,) = [c for c in doc.chunks if "1. Stop writes." in c.text]
    assert "steps" in fix.metadata["blocks"] and fix.metadata["code_langs"] == ["sql"]
    assert fix.text.endswith("3. Verify.")


# --------------------------------------------------------------------------- plain text


@pytest.mark.parametrize("name", ["notes.txt", "NOTES", "dir/runbook"])
def test_plain_text(name: str) -> None:
    data = "# looks like a heading\n\n" + paragraphs(12, 4) + "\n\n    indented line\n"
    doc = parse(name, data)
    assert doc.metadata == {"format": "text"}
    assert len(doc.sections) == 1
    assert all(c.heading_path == () for c in doc.chunks)
    assert len(doc.chunks) > 1


# --------------------------------------------------------------------------- reStructuredText


RST = """\
=================
 Disk full guide
=================

Intro paragraph.

Check usage
===========

Run this::

    df -h
    du -sh /var/log

Clean up
--------

.. code-block:: bash
   :linenos:

   journalctl --vacuum-size=200M
   # not a heading

.. warning:: Do not delete active logs.

Deeper
~~~~~~

A paragraph ending with a colon ::

    literal text

Second top
==========

Done.
"""


def test_rst_conversion() -> None:
    md = rst_to_markdown(RST)
    assert "# Disk full guide" in md.splitlines()
    assert "## Check usage" in md.splitlines() and "## Second top" in md.splitlines()
    assert "### Clean up" in md.splitlines() and "#### Deeper" in md.splitlines()
    assert "Run this:\n\n```\ndf -h\ndu -sh /var/log\n```" in md
    assert "```bash\njournalctl --vacuum-size=200M\n# not a heading\n```" in md
    assert "A paragraph ending with a colon\n\n```\nliteral text\n```" in md
    assert "> **Warning:** Do not delete active logs." in md


def test_rst_document() -> None:
    doc = parse("guides/disk.rst", RST)
    assert doc.title == "Disk full guide"
    assert doc.metadata == {"format": "rst"}
    assert doc.chunks[0].metadata["blocks"] == ["code"]
    assert doc.chunks[0].metadata["code_langs"] == ["bash"]
    _, chunks = chunk_markdown(doc.text, min_tokens=0)
    assert [c.heading_path for c in chunks] == [
        ("Disk full guide",),
        ("Disk full guide", "Check usage"),
        ("Disk full guide", "Check usage", "Clean up"),
        ("Disk full guide", "Second top"),
    ]


def test_rst_transition_is_not_a_heading() -> None:
    md = rst_to_markdown("Para one.\n\n----------\n\nPara two.\n")
    assert "#" not in md


# --------------------------------------------------------------------------- HTML


HTML = """<!DOCTYPE html>
<html><head><title>Disk full | Runbooks</title><style>h1 { color: red }</style>
<script>var secret = "do not index";</script></head>
<body><nav><a href="/">Home</a> menu items</nav>
<h1>Disk full</h1>
<p>When <code>/var</code> fills up, <b>services</b> stop.<br>Act fast.</p>
<h2>Steps</h2>
<ol><li>Check usage<ul><li>look at <code>du</code></li><li>look at logs</li></ul></li>
<li>Clean up<pre><code class="language-bash">journalctl --vacuum-size=200M
# keep this comment</code></pre></li></ol>
<h3>Hosts</h3>
<table><tr><th>host</th><th>role</th></tr><tr><td>db-1</td><td>primary | rw</td></tr></table>
<ul><li>loose bullet</li></ul>
<div>Text in a div <span>with a span</span></div>
<p># not a heading</p>
<script>alert("also dropped")</script>
</body></html>"""


def test_html_conversion() -> None:
    doc = parse("web/disk.html", HTML)
    text = doc.text
    assert doc.title == "Disk full | Runbooks"
    assert doc.metadata == {"format": "html"}
    assert "# Disk full" in text.splitlines() and "## Steps" in text.splitlines()
    assert "When `/var` fills up, services stop.\nAct fast." in text
    assert "1. Check usage\n   - look at `du`\n   - look at logs\n2. Clean up" in text
    assert "```bash\n   journalctl --vacuum-size=200M\n   # keep this comment\n   ```" in text
    assert "| host | role |\n| --- | --- |\n| db-1 | primary \\| rw |" in text
    assert "- loose bullet" in text and "Text in a div with a span" in text
    assert "\\# not a heading" in text
    for dropped in ("secret", "alert", "menu items", "color: red"):
        assert dropped not in text
    steps = [c for c in doc.chunks if "Check usage" in c.text]
    assert {"steps", "code"} <= set(steps[0].metadata["blocks"])


def test_html_source_newlines_are_spaces_and_br_is_a_break() -> None:
    md, _ = html_to_markdown("<p>line one\n   # still the same paragraph<br/>after break</p>")
    assert md == "line one # still the same paragraph\nafter break\n"


@pytest.mark.parametrize(
    ("html", "title"),
    [
        ("<h1>First <em>heading</em></h1><p>x</p>", "First heading"),
        (
            "<html><head><title>  Spaced   title </title></head><body><p>x</p></body>",
            "Spaced title",
        ),
        ("<p>no title at all</p>", "Page"),
    ],
)
def test_html_titles(html: str, title: str) -> None:
    assert parse("page.htm", html).title == title


@pytest.mark.parametrize(
    "html",
    [
        "<div><p>unclosed <b>bold <i>italic<li>stray item<table><td>cell",
        "<html><body><h2>Heading</h2></body>" + "<div>" * 300 + "deep" + "</div>" * 10,
        "</p></div></body>text after close<h1>late heading",
        "<ul><li><ol><li>one<li>two</ol><li>next</ul><pre>unclosed pre\n  kept",
        "<p>a &amp; b &lt;tag&gt; &#x2713;</p>",
    ],
)
def test_malformed_html_does_not_crash(html: str) -> None:
    doc = parse("broken.html", html)
    assert doc.chunks


def test_html_without_text_is_malformed() -> None:
    with pytest.raises(MalformedDocument):
        parse_document(
            "empty.html", b"<html><head><script>x()</script></head><body> </body></html>"
        )


# --------------------------------------------------------------------------- PDF


def test_pdf() -> None:
    pytest.importorskip("pypdf", reason="PDF support is the optional 'pdf' extra (pypdf)")
    data = make_pdf(
        [["Disk full runbook", "Check the usage with df -h."], ["Page two (cleanup) text."]]
    )
    doc = parse("manuals/disk-full.pdf", data)
    assert doc.metadata == {"format": "pdf", "pages": 2}
    assert doc.title == "Disk full"
    assert "Check the usage with df -h." in doc.text and "Page two (cleanup) text." in doc.text
    assert "\n\n" in doc.text  # pages are separate paragraphs


def test_pdf_damaged() -> None:
    pytest.importorskip("pypdf", reason="PDF support is the optional 'pdf' extra (pypdf)")
    with pytest.raises(MalformedDocument):
        parse_document("bad.pdf", make_pdf([["text"]])[:60])


def test_pdf_without_text() -> None:
    pytest.importorskip("pypdf", reason="PDF support is the optional 'pdf' extra (pypdf)")
    with pytest.raises(MalformedDocument, match="no extractable text"):
        parse_document("scan.pdf", make_pdf([[]]))


@pytest.mark.parametrize(
    ("name", "module", "extra"), [("a.pdf", "pypdf", "pdf"), ("a.docx", "docx", "docx")]
)
def test_missing_optional_library(monkeypatch, name: str, module: str, extra: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(UnsupportedFormat, match=rf"pip install 'runbook-bot\[{extra}\]'"):
        parse_document(name, b"%PDF-1.4 PK\x03\x04 data")


# --------------------------------------------------------------------------- DOCX


def _docx_bytes() -> bytes:
    docx = pytest.importorskip(
        "docx", reason="DOCX support is the optional 'docx' extra (python-docx)"
    )
    document = docx.Document()
    document.add_heading("Failover procedure", 1)
    document.add_paragraph("Use this when the primary is down.")
    document.add_heading("Steps", 2)
    for step in ("Page the DBA.", "Promote the replica.", "Update DNS."):
        document.add_paragraph(step, style="List Number")
    document.add_paragraph("Check lag first.", style="List Number 2")
    document.add_paragraph("Announce in the channel.", style="List Bullet")
    document.add_heading("Reference", 3)
    grid = document.add_table(rows=2, cols=2)
    for (row, col), value in {
        (0, 0): "host",
        (0, 1): "role",
        (1, 0): "db-1",
        (1, 1): "a|b",
    }.items():
        grid.cell(row, col).text = value
    document.add_paragraph("# hash at start")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx() -> None:
    doc = parse("procedures/failover.docx", _docx_bytes())
    assert doc.metadata == {"format": "docx"}
    assert doc.title == "Failover procedure"
    text = doc.text
    assert text.startswith(
        "# Failover procedure\n\nUse this when the primary is down.\n\n## Steps\n\n"
    )
    assert (
        "1. Page the DBA.\n2. Promote the replica.\n3. Update DNS.\n   1. Check lag first.\n"
        in text
    )
    assert "- Announce in the channel." in text
    assert "### Reference" in text
    assert "| host | role |\n| --- | --- |\n| db-1 | a\\|b |" in text
    assert "\\# hash at start" in text
    kinds = set().union(*(c.metadata["blocks"] for c in doc.chunks))
    assert {"steps", "table"} <= kinds


def test_docx_direct_numbering_as_word_writes_it() -> None:
    docx = pytest.importorskip("docx", reason="DOCX support is the optional 'docx' extra")
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    decimal = document.styles["List Number"].element.pPr.numPr.numId.val
    bullet = document.styles["List Bullet"].element.pPr.numPr.numId.val
    for text, num_id in [("Drain the node.", decimal), ("Reboot it.", decimal), ("Note", bullet)]:
        paragraph = document.add_paragraph(text, style="List Paragraph")
        num_pr = OxmlElement("w:numPr")
        for tag, value in (("w:ilvl", 0), ("w:numId", num_id)):
            child = OxmlElement(tag)
            child.set(qn("w:val"), str(value))
            num_pr.append(child)
        paragraph._p.get_or_add_pPr().append(num_pr)
    out = io.BytesIO()
    document.save(out)
    doc = parse("word.docx", out.getvalue())
    assert doc.text == "1. Drain the node.\n2. Reboot it.\n- Note\n"


def test_docx_damaged() -> None:
    data = _docx_bytes()
    with pytest.raises(MalformedDocument, match="not a readable DOCX"):
        parse_document("bad.docx", data[: len(data) // 2])
    with pytest.raises(MalformedDocument, match="not a readable DOCX"):
        parse_document("bad.docx", b"plain text pretending to be docx")


# --------------------------------------------------------------------------- real documents


@pytest.mark.skipif(
    not (EVAL / "gitlab" / "corpus").is_dir(), reason=f"eval corpus not found at {EVAL}"
)
def test_parses_every_gitlab_runbook() -> None:
    root = EVAL / "gitlab" / "corpus"
    parsed = 0
    for path in sorted(root.rglob("*.md")):
        data = path.read_bytes()
        if not data.strip():
            with pytest.raises(MalformedDocument):
                parse_document(str(path.relative_to(root)), data)
            continue
        doc = parse_document(str(path.relative_to(root)), data)
        assert doc.title and doc.chunks and doc.metadata["format"] == "markdown"
        parsed += 1
    assert parsed > 400
