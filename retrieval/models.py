"""Plain data types shared by parsing, chunking, ingestion and search."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class UnsupportedFormat(Exception):
    """A file whose format we cannot (or, without an optional extra, do not) read."""


class MalformedDocument(Exception):
    """A file we can read but whose content is broken beyond use (e.g. invalid front matter)."""


@dataclass(frozen=True)
class Section:
    """A parent section: the large unit a chunk points at ("search small, read large")."""

    index: int  # position of the section inside its document, 0-based
    heading_path: tuple[str, ...]  # e.g. ("Disk full", "Diagnosis")
    text: str  # the whole section text, headings included
    char_start: int  # offsets into ParsedDocument.text
    char_end: int
    token_count: int


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit: small, structure-aware, never splitting code, tables or step lists."""

    position: int  # 0-based order inside the document
    text: str
    heading_path: tuple[str, ...]
    char_start: int  # offsets into ParsedDocument.text
    char_end: int
    token_count: int
    section_index: int  # index into ParsedDocument.sections
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. {"blocks": ["code", "steps"]}


@dataclass(frozen=True)
class ParsedDocument:
    """A document turned into text, metadata, parent sections and chunks."""

    title: str
    text: str  # the body text (front matter removed) that offsets refer to
    metadata: dict[str, Any]  # front matter and format facts, JSON-serialisable
    sections: list[Section]
    chunks: list[Chunk]
