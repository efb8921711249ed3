"""Turn a file's bytes into a ParsedDocument: format detection, decoding, conversion to
Markdown (reStructuredText, HTML, DOCX) or plain text (PDF), front matter and chunking."""

from __future__ import annotations

import codecs
import datetime as dt
import math
import re
from pathlib import PurePosixPath
from typing import Any

import yaml

from retrieval.blocks import markdown_title
from retrieval.chunking import chunk_markdown, chunk_text
from retrieval.converters import docx_markdown, html_to_markdown, pdf_text, rst_to_markdown
from retrieval.models import MalformedDocument, ParsedDocument, UnsupportedFormat

FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text", "": "text",
    ".rst": "rst", ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx",
}
_SNIFF_BYTES = 8192
_CONTROL = set(range(0, 32)) - {9, 10, 11, 12, 13, 27} | {127}  # tab, LF, VT, FF, CR, ESC are text
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?:(.*?)\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


def parse_document(
    name: str,
    data: bytes,
    *,
    max_bytes: int = 5_000_000,
    target_tokens: int = 450,
    max_tokens: int = 600,
    overlap_tokens: int = 50,
) -> ParsedDocument:
    """Parse one file (``name`` is its relative path) into text, metadata, sections and chunks."""
    fmt = document_format(name)
    if len(data) > max_bytes:
        raise MalformedDocument(f"file is {_size(len(data))}, over the {_size(max_bytes)} limit")
    if not data.strip():
        raise MalformedDocument("empty file" if not data else "empty file (only whitespace)")
    metadata: dict[str, Any] = {}
    title_hint = None
    if fmt == "pdf":
        body, metadata["pages"] = pdf_text(data)
        body = body.replace("\0", "")  # Postgres text cannot hold NUL
    elif fmt == "docx":
        body = docx_markdown(data).replace("\0", "")
    else:
        body = decode_text(data)
        if fmt == "markdown":
            metadata, body = split_front_matter(body)
        elif fmt == "rst":
            body = rst_to_markdown(body)
        elif fmt == "html":
            body, title_hint = html_to_markdown(body)
    if not body.strip():
        raise MalformedDocument("no text to index")
    chunker = chunk_text if fmt in ("text", "pdf") else chunk_markdown
    sizes = {"target_tokens": target_tokens, "max_tokens": max_tokens}
    sizes |= {"overlap_tokens": overlap_tokens, "min_tokens": min(80, target_tokens // 3)}
    sections, chunks = chunker(body, **sizes)
    title = _title(name, metadata, title_hint, body if chunker is chunk_markdown else None)
    metadata["format"] = fmt
    return ParsedDocument(title, body, metadata, sections, chunks)


def document_format(name: str) -> str:
    """The format name for a file name, by extension; UnsupportedFormat for anything else."""
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower()
    if suffix not in FORMATS:
        raise UnsupportedFormat(f"unsupported format {suffix}")
    return FORMATS[suffix]


def _size(n: int) -> str:
    """A byte count for humans (decimal units, like the 5 MB default limit)."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    return f"{n / 1000:.1f} KB" if n >= 1000 else f"{n} bytes"


# --------------------------------------------------------------------------- decoding


def decode_text(data: bytes) -> str:
    """UTF-8 bytes (BOM allowed) to text with LF line ends and no NUL; rejects binary and other
    encodings."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise MalformedDocument("not valid UTF-8 (the file is UTF-16; save it as UTF-8)")
    sample = data[:_SNIFF_BYTES]
    if b"\0" in sample:
        raise UnsupportedFormat("binary file (contains NUL bytes)")
    control = sum(1 for byte in sample if byte in _CONTROL)
    high = sum(1 for byte in sample if byte >= 0x80)
    if control > 0.1 * len(sample) or (high > 0.3 * len(sample) and not _utf8_prefix(sample)):
        raise UnsupportedFormat("binary file (mostly non-text bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise MalformedDocument(f"not valid UTF-8 (byte 0x{bad} at offset {exc.start})") from None
    # As git does, a NUL in the sniffed prefix makes a file binary; a stray one after it is
    # dropped (Postgres text cannot hold NUL).
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "")
    if not text.strip():
        raise MalformedDocument("empty file (only whitespace)")
    return text


def _utf8_prefix(sample: bytes) -> bool:
    """Whether a sample is valid UTF-8 (a sequence cut at the end of the sample is fine)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    return True


# --------------------------------------------------------------------------- metadata


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (a mapping, made JSON-serialisable and storable) and the body after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1) or "")
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        detail = " ".join(str(exc).split())[:300]
        raise MalformedDocument(f"front matter is not valid YAML: {detail}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MalformedDocument(f"front matter must be a mapping, not a {type(data).__name__}")
    return _Storable().convert(data), text[match.end() :]


# Bounds on front matter once YAML aliases are expanded: an alias bomb ("billion laughs") of a
# few hundred bytes would otherwise become gigabytes of metadata.
FRONT_MATTER_VALUES = 10_000
FRONT_MATTER_DEPTH = 32


class _Storable:
    """Converts loaded YAML into what jsonb stores: dates to ISO strings, keys to str, sets to
    lists, non-finite floats to strings, NUL dropped; refuses recursive, deep or huge values."""

    def __init__(self) -> None:
        self.values = 0
        self.open: set[int] = set()  # ids of the containers being converted (to spot cycles)

    def convert(self, value: Any, depth: int = 0) -> Any:
        """One value, converted (MalformedDocument when it breaks a bound)."""
        self.values += 1
        if self.values > FRONT_MATTER_VALUES:
            raise MalformedDocument(
                f"front matter is too large (over {FRONT_MATTER_VALUES:,} values once YAML aliases are expanded)"
            )
        if not isinstance(value, (dict, list, tuple, set, frozenset)):
            return _scalar(value)
        if id(value) in self.open:
            raise MalformedDocument("front matter is recursive (a YAML alias refers to the value it is in)")
        if depth >= FRONT_MATTER_DEPTH:
            raise MalformedDocument(f"front matter is nested more than {FRONT_MATTER_DEPTH} levels deep")
        self.open.add(id(value))
        try:
            return self._container(value, depth + 1)
        finally:
            self.open.discard(id(value))

    def _container(self, value: Any, depth: int) -> Any:
        """A mapping, sequence or set, its items converted."""
        if isinstance(value, dict):
            return {_text(str(k)): self.convert(v, depth) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.convert(v, depth) for v in value]
        return sorted((self.convert(v, depth) for v in value), key=str)


def _scalar(value: Any) -> Any:
    """A YAML scalar as a storable JSON value."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # .inf, -.inf, .nan: JSON has no such numbers
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, bytes):
        return _text(value.decode("utf-8", "replace"))
    return value


def _text(value: str) -> str:
    """A string Postgres can store (no NUL)."""
    return value.replace("\0", "")


def _title(name: str, metadata: dict[str, Any], hint: str | None, markdown: str | None) -> str:
    """Front matter title, else the format's own title, else the first H1, else the file name."""
    title = metadata.get("title")
    if title is not None and str(title).strip():
        return str(title).strip()
    if hint:
        return hint
    if markdown is not None and (h1 := markdown_title(markdown)):
        return h1
    return humanise_name(name)


def humanise_name(name: str) -> str:
    """'runbooks/disk-full.md' -> 'Disk full'; a README or index takes its folder's name."""
    path = PurePosixPath(name.replace("\\", "/"))
    stem = path.stem
    if stem.lower() in ("readme", "index") and path.parent.name:
        stem = path.parent.name
    words = " ".join(re.split(r"[-_\s]+", stem)).strip()
    return (words[:1].upper() + words[1:]) if words else stem
