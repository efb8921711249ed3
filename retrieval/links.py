"""Runbook links in alerts (`runbook_url`, a "Runbook" button) resolved to documents of the corpus."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from psycopg_pool import AsyncConnectionPool

# A document matches a link when the link's path ends with the document's path (a link into the
# repository the runbooks come from), or when the link's last segment names the document's file
# (a published site: .../runbooks/kubernetes/kubepodcrashlooping for KubePodCrashLooping.md).
_SQL = """
SELECT d.path,
       %(path)s LIKE '%%/' || d.path OR %(path)s = d.path AS suffix,
       position(lower(split_part(d.path, '/', -2)) IN %(folders)s) > 0 AS folder
FROM documents d
WHERE %(path)s LIKE '%%/' || d.path OR %(path)s = d.path
   OR lower(regexp_replace(regexp_replace(d.path, '^.*/|\\.[^./]*$', '', 'g'), '[^A-Za-z0-9]', '', 'g')) = %(stem)s
"""
_GENERIC = {"readme", "index", "_index"}


def link_key(url: str) -> tuple[str, str, str] | None:
    """(path, normalised last segment, lower-cased folders) of a link, or None when it has no path."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    path = unquote(parts.path).strip("/")
    if not path:
        return None
    stem = re.sub(r"[^a-z0-9]", "", PurePosixPath(path).stem.lower())
    folders = "/".join(path.lower().split("/")[:-1])
    return path, stem, folders


async def linked_documents(pool: AsyncConnectionPool, urls: Sequence[str]) -> list[str]:
    """Paths of the documents the links point at, best match first; a link that names no single
    document of the corpus (a dashboard, an ambiguous README) adds nothing."""
    found: list[str] = []
    for url in urls:
        key = link_key(url)
        if key is None:
            continue
        path, stem, folders = key
        async with pool.connection() as conn:
            # A generic name (README) names no single runbook: "-" matches no normalised stem.
            cur = await conn.execute(_SQL, {"path": path, "stem": stem if stem not in _GENERIC else "-",
                                            "folders": folders})
            rows = await cur.fetchall()
        suffix = [p for p, by_suffix, _ in rows if by_suffix]
        named = [p for p, _, in_folder in rows if in_folder] or [p for p, _, _ in rows]
        chosen = suffix or (named if len(named) == 1 else [])
        found += [p for p in chosen[:1] if p not in found]
    return found


def section_anchor(heading: Sequence[str] | None) -> str:
    """The GitHub-style anchor of a section's heading ("" for none)."""
    if not heading:
        return ""
    slug = re.sub(r"[^\w\- ]", "", heading[-1].lower()).strip().replace(" ", "-")
    return f"#{slug}" if slug else ""


def document_link(base_url: str | None, path: str, heading: Sequence[str] | None) -> str | None:
    """A link to a section: the source's base URL, the path, and a GitHub-style anchor."""
    if not base_url:
        return None
    return f"{base_url.rstrip('/')}/{path}{section_anchor(heading)}"
