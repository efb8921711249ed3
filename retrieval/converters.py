"""Converters of other formats to Markdown (reStructuredText, HTML, DOCX) or text (PDF)."""

from __future__ import annotations

import io
import re
import textwrap
from typing import TYPE_CHECKING

from retrieval.models import MalformedDocument, UnsupportedFormat

if TYPE_CHECKING:  # optional libraries, imported where used
    from docx.table import Table
    from docx.text.paragraph import Paragraph
    from selectolax.lexbor import LexborNode


# --------------------------------------------------------------------------- reStructuredText

_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+_:.<>])\1{2,}\s*$")
_CODE_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*(\S*)\s*$")
_ADMONITION = re.compile(
    r"^(\s*)\.\.\s+(note|warning|important|tip|caution|danger|attention|hint|error)::\s*(.*)$",
    re.IGNORECASE,
)


def rst_to_markdown(text: str) -> str:
    """reStructuredText-ish to Markdown: titles to ATX headings, literal blocks to fences."""
    lines, out, styles = text.split("\n"), [], []
    i = 0
    while i < len(lines):
        heading = _rst_heading(lines, i, out)
        if heading:
            style, title, used = heading
            if style not in styles:
                styles.append(style)
            out += ["#" * min(6, styles.index(style) + 1) + " " + title]
            i += used
            continue
        i = _rst_block(lines, i, out)
    return "\n".join(out)


def _rst_heading(lines: list[str], i: int, out: list[str]) -> tuple[tuple, str, int] | None:
    """(style, title, lines used) when a section title starts at line ``i``."""
    if out and out[-1].strip() and not out[-1].startswith("#"):
        return None  # a title starts after a blank line (or another title)
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    over = _ADORNMENT.match(line)
    closing = lines[i + 2].strip() if i + 2 < len(lines) else ""
    if over and nxt.strip() and _ADORNMENT.match(closing) and closing[0] == over.group(1):
        return ("over", over.group(1)), nxt.strip(), 3
    under = _ADORNMENT.match(nxt)
    titled = line.strip() and not line[0].isspace() and not _ADORNMENT.match(line)
    if under and titled and len(nxt.strip()) >= min(len(line.strip()), 4):
        return ("under", under.group(1)), line.strip(), 2
    return None


def _rst_block(lines: list[str], i: int, out: list[str]) -> int:
    """Convert the construct at line ``i`` (literal block, admonition or plain line)."""
    line = lines[i]
    code = _CODE_DIRECTIVE.match(line)
    if code:
        return _rst_literal(lines, i + 1, out, code.group(1), code.group(2))
    note = _ADMONITION.match(line)
    if note:
        body, end = _indented(lines, i + 1, len(note.group(1)))
        quote = [f"**{note.group(2).capitalize()}:** {note.group(3)}".rstrip()]
        quote += ([""] if body and note.group(3).strip() else []) + body
        out += [note.group(1) + ("> " + q).rstrip() for q in quote]
        return end
    stripped = line.rstrip()
    if stripped.endswith("::") and not stripped.lstrip().startswith(".."):
        indent = line[: len(line) - len(line.lstrip())]
        head = stripped[:-2].rstrip()
        if head.strip():
            out.append(head + (":" if stripped[-3:-2] != " " else ""))
        return _rst_literal(lines, i + 1, out, indent, "")
    out.append(line)
    return i + 1


def _rst_literal(lines: list[str], i: int, out: list[str], indent: str, lang: str) -> int:
    """An indented literal block after line ``i`` as a fenced code block."""
    while i < len(lines) and re.match(r"^\s+:[\w-]+:", lines[i]):  # directive options
        i += 1
    body, end = _indented(lines, i, len(indent))
    if not body:
        return end
    longest = max((len(m) for m in re.findall(r"`+", "\n".join(body))), default=0)
    fence = "`" * max(3, longest + 1)
    out += ["", indent + fence + lang, *[(indent + b).rstrip() for b in body], indent + fence, ""]
    return end


def _indented(lines: list[str], i: int, base: int) -> tuple[list[str], int]:
    """Dedented lines of the block indented deeper than ``base`` starting at/after line ``i``."""
    start = i
    while i < len(lines) and not lines[i].strip():
        i += 1
    end = i
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
        end += 1
    while end > i and not lines[end - 1].strip():
        end -= 1
    if end == i:
        return [], start
    return textwrap.dedent("\n".join(lines[i:end])).split("\n"), end


def _indent(line: str) -> int:
    """Indentation width of a line (tabs count as 8)."""
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


# --------------------------------------------------------------------------- HTML, PDF, DOCX


_BR = "\u2028"  # stands for <br> until a paragraph is assembled; str.split() drops it
_DROP = "script, style, nav, noscript, template, svg, iframe, head"
_CONTAINER_TAGS = {
    "html", "body", "div", "section", "article", "main", "header", "footer", "aside", "figure",
    "details", "summary", "form", "fieldset", "center", "dl", "dt", "dd", "address", "hr", "li",
}
_BLOCK_TAGS = _CONTAINER_TAGS | {
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "pre", "ul", "ol", "table", "blockquote",
}


def html_to_markdown(text: str) -> tuple[str, str | None]:
    """HTML to Markdown (headings, lists, code, tables) and the page title, if any."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(text)
    title_node = tree.css_first("title")
    title = _squash(title_node.text()) if title_node else ""
    if not title and (h1 := tree.css_first("h1")):
        title = _squash(h1.text())
    for node in tree.css(_DROP):
        node.decompose()
    root = tree.body or tree.root
    try:
        blocks = _html_blocks(root) if root is not None else []
    except RecursionError:
        raise MalformedDocument("HTML is nested too deeply") from None
    return "\n\n".join(blocks) + "\n", title or None


def _squash(text: str) -> str:
    """Collapse whitespace runs to single spaces."""
    return " ".join(text.split())


def _html_inline(node: LexborNode) -> str:
    """Inline text of a node: code as `code`, <br> as _BR."""
    if node.tag == "-text":
        return node.text(deep=False) or ""
    if node.tag in ("code", "kbd", "samp", "tt"):
        code = _squash(node.text())
        return f"`{code}`" if code else ""
    if node.tag == "br":
        return _BR
    if node.tag == "img":
        return node.attributes.get("alt") or ""
    return "".join(_html_inline(c) for c in node.iter(include_text=True) if not c.is_comment_node)


def _html_blocks(node: LexborNode) -> list[str]:
    """Markdown blocks for the children of a container node."""
    blocks: list[str] = []
    inline: list[str] = []
    for child in node.iter(include_text=True):
        if child.is_comment_node:
            continue
        if child.tag not in _BLOCK_TAGS:
            inline.append(_html_inline(child))
            continue
        blocks.extend(_paragraph("".join(inline)))
        inline = []
        blocks.extend(_html_block(child))
    blocks.extend(_paragraph("".join(inline)))
    return blocks


def _paragraph(text: str) -> list[str]:
    """A paragraph block (<br> kept as line breaks, line starts escaped), if not blank."""
    lines = [_escape(_squash(line)) for line in text.split(_BR)]
    body = "\n".join(line for line in lines if line)
    return [body] if body else []


def _escape(line: str) -> str:
    """Escape a line start that Markdown would read as a heading, fence or quote."""
    return "\\" + line if re.match(r"(#|>|```|~~~)", line) else line


def _html_block(node: LexborNode) -> list[str]:
    """Markdown for one block-level element."""
    tag = node.tag
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        text = _squash(_html_inline(node))
        return [f"{'#' * int(tag[1])} {text}"] if text else []
    if tag == "p":
        return _paragraph(_html_inline(node))
    if tag == "pre":
        return [_html_pre(node)]
    if tag in ("ul", "ol"):
        lines = _html_list(node, tag == "ol")
        return ["\n".join(lines)] if lines else []
    if tag == "table":
        return _html_table(node)
    if tag == "blockquote":
        inner = "\n\n".join(_html_blocks(node))
        return ["\n".join(("> " + line).rstrip() for line in inner.split("\n"))] if inner else []
    if tag == "li":
        lines = _html_list_item(node, "-")
        return ["\n".join(lines)] if lines else []
    return _html_blocks(node)


def _html_pre(node: LexborNode) -> str:
    """A <pre> element as a fenced code block (language from a language-xxx class)."""
    code = (node.text() or "").strip("\n")
    classes = " ".join(
        n.attributes.get("class") or "" for n in [node, node.css_first("code")] if n is not None
    )
    lang = m.group(1) if (m := re.search(r"(?:language|lang)-([\w+-]+)", classes)) else ""
    longest = max((len(r) for r in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{code}\n{fence}"


def _html_list(node: LexborNode, ordered: bool) -> list[str]:
    """Lines of a (possibly nested) list; nested content is indented under its marker."""
    lines: list[str] = []
    number = 1
    for child in node.iter(include_text=False):
        if child.tag != "li":
            lines.extend(_html_blocks(child) if child.tag in _BLOCK_TAGS else [])
            continue
        lines.extend(_html_list_item(child, f"{number}." if ordered else "-"))
        number += 1
    return lines


def _html_list_item(node: LexborNode, marker: str) -> list[str]:
    """One list item: its first line after the marker, the rest indented to match."""
    content = "\n".join(_html_blocks(node)).split("\n")
    pad = " " * (len(marker) + 1)
    return [f"{marker} {content[0]}".rstrip()] + [(pad + line).rstrip() for line in content[1:]]


def _html_table(node: LexborNode) -> list[str]:
    """A table as a Markdown pipe table (first row as the header)."""
    rows = []
    for tr in node.css("tr"):
        cells = [c for c in tr.iter(include_text=False) if c.tag in ("td", "th")]
        rows.append([_squash(_html_inline(c)).replace("|", "\\|") for c in cells])
    return [_pipe_table(rows)] if any(any(r) for r in rows) else []


def _pipe_table(rows: list[list[str]]) -> str:
    """Rows of cell texts as a Markdown pipe table."""
    width = max(len(r) for r in rows) or 1
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    lines.insert(1, "|" + " --- |" * width)
    return "\n".join(lines)


def pdf_text(data: bytes) -> tuple[str, int]:
    """Text of a PDF (pages joined by blank lines) and its page count; needs pypdf."""
    try:
        from pypdf import PdfReader
    except ImportError:
        raise UnsupportedFormat(
            "PDF support needs the 'pdf' extra: pip install 'runbook-bot[pdf]'"
        ) from None
    if b"%PDF-" not in data[:1024]:
        raise MalformedDocument("not a PDF file (no %PDF header)")
    try:  # pypdf raises many exception types on damaged files
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise MalformedDocument("PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except MalformedDocument:
        raise
    except Exception as exc:  # noqa: BLE001
        raise MalformedDocument(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    pages = [re.sub(r"[ \t]+\n", "\n", p.replace("\r\n", "\n").replace("\r", "\n")) for p in pages]
    text = "\n\n".join(p.strip("\n") for p in pages if p.strip())
    if not text.strip():
        raise MalformedDocument("PDF has no extractable text (scanned images?)")
    return text + "\n", len(pages)


def docx_markdown(data: bytes) -> str:
    """A DOCX document as Markdown (headings, numbered steps, lists, tables); needs python-docx."""
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError:
        raise UnsupportedFormat(
            "DOCX support needs the 'docx' extra: pip install 'runbook-bot[docx]'"
        ) from None
    try:  # python-docx raises many exception types on damaged files
        document = docx.Document(io.BytesIO(data))
        items: list[tuple[str, str]] = []
        for element in document.element.body.iterchildren():
            if element.tag.endswith("}p"):
                items.append(_docx_paragraph(Paragraph(element, document)))
            elif element.tag.endswith("}tbl"):
                items.append(("table", _docx_table(Table(element, document))))
    except Exception as exc:  # noqa: BLE001
        raise MalformedDocument(f"not a readable DOCX file ({type(exc).__name__}: {exc})") from None
    return _join_docx(items)


def _docx_paragraph(paragraph: Paragraph) -> tuple[str, str]:
    """(kind, Markdown line) of a paragraph: heading, numbered or bulleted item, code or text."""
    text = paragraph.text.strip()
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    level = int(m.group(1)) if (m := re.search(r"(\d)\s*$", style)) else 1
    if re.fullmatch(r"Heading [1-6]|Title", style):
        hashes = "#" * (level if style != "Title" else 1)
        return "text", f"{hashes} {text}" if text else ""
    if style.startswith("List Number"):
        return "number", "   " * (level - 1) + text
    if style.startswith("List Bullet"):
        return "bullet", "   " * (level - 1) + "- " + text
    if (numbering := _direct_numbering(paragraph)) is not None:  # Word's "List Paragraph"
        ordered, depth = numbering
        indent = "   " * depth
        return ("number", indent + text) if ordered else ("bullet", f"{indent}- {text}")
    if re.search(r"code|preformatted|source", style, re.IGNORECASE):
        return "code", paragraph.text.rstrip()
    return "text", _escape(text)


def _direct_numbering(paragraph: Paragraph) -> tuple[bool, int] | None:
    """(ordered, depth) of a paragraph numbered directly rather than by its style, if it is."""
    ppr = paragraph._p.pPr  # python-docx has no public accessor for numbering
    if ppr is None or ppr.numPr is None or ppr.numPr.numId is None:
        return None
    num_id, ilvl = ppr.numPr.numId.val, ppr.numPr.ilvl
    depth = ilvl.val if ilvl is not None else 0
    try:
        numbering = paragraph.part.numbering_part.element
    except (KeyError, NotImplementedError):
        return False, depth
    abstract = numbering.xpath(f'./w:num[@w:numId="{num_id}"]/w:abstractNumId/@w:val')
    if not abstract:
        return False, depth
    level = f'./w:abstractNum[@w:abstractNumId="{abstract[0]}"]/w:lvl[@w:ilvl="{depth}"]'
    fmt = numbering.xpath(level + "/w:numFmt/@w:val")
    return (bool(fmt) and fmt[0] != "bullet"), depth


def _docx_table(table: Table) -> str:
    """A DOCX table as a Markdown pipe table."""
    rows = [[_squash(cell.text).replace("|", "\\|") for cell in row.cells] for row in table.rows]
    return _pipe_table(rows) if any(any(r) for r in rows) else ""


def _join_docx(items: list[tuple[str, str]]) -> str:
    """Join paragraphs into blocks: list items and code lines stay together; steps get numbers."""
    blocks: list[tuple[str, list[str]]] = []
    counters: dict[int, int] = {}
    for kind, line in items:
        group = "list" if kind in ("number", "bullet") else kind
        if not line.strip() and kind != "code":
            blocks.append(("gap", []))
            continue
        same = bool(blocks) and blocks[-1][0] == group and group in ("list", "code")
        if not same:
            blocks.append((group, []))
            counters = {}
        if kind == "number":
            depth = len(line) - len(line.lstrip())
            counters = {d: n for d, n in counters.items() if d <= depth}
            counters[depth] = counters.get(depth, 0) + 1
            line = f"{' ' * depth}{counters[depth]}. {line.lstrip()}"
        blocks[-1][1].append(line)
    rendered = [
        "```\n" + "\n".join(lines) + "\n```" if group == "code" else "\n".join(lines)
        for group, lines in blocks
        if lines
    ]
    return "\n\n".join(rendered) + "\n"
