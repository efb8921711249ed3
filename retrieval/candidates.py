"""The candidates statement (sql/candidates.sql): its assembly, its filters, and how it is run.

search.py turns the rows into hits and ranks them; this module only knows SQL and rows. A row is
(chunk id, document id, section id, position, heading path, text or None, text hash, tokens,
chunk metadata as JSON text, path, title, document metadata as JSON text, updated at, source,
base URL, lexical rank, lexical score, dense rank, dense score, query idf, unknown idf, active
index version).
"""

from __future__ import annotations

import re
import weakref
from importlib import resources
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from retrieval import db, lexical, store
from retrieval.access import literal
from retrieval.search_types import SearchFilters

Row = tuple[Any, ...]
TEXT, DENSE_RANK, QUERY_IDF, UNKNOWN_IDF, ACTIVE_VERSION, CHUNK_COUNT = 5, 17, 19, 20, 21, 22  # row columns
ALL_TEXTS = 2**31 - 1  # a text_rank that ships every candidate's text


def sql_parts(text: str) -> dict[str, str]:
    """The `-- @part name` sections of a SQL file."""
    parts: dict[str, str] = {}
    for chunk in re.split(r"^-- @part ", text, flags=re.MULTILINE)[1:]:
        name, _, body = chunk.partition("\n")
        parts[name.strip()] = body
    return parts


PARTS = sql_parts((resources.files("retrieval") / "sql" / "candidates.sql").read_text(encoding="utf-8"))
STATEMENTS = {  # which legs -> the statement's text
    legs: "".join(PARTS[p] for p in ("head", *parts, "tail"))
    for legs, parts in {
        "both": ("lexical", "dense", "both"), "lexical": ("lexical", "lexical_only"), "dense": ("dense", "dense_only"),
    }.items()
}
# The active index version per pool, as the last statement saw it (see rows).
_active: weakref.WeakKeyDictionary[AsyncConnectionPool, store.IndexVersion] = weakref.WeakKeyDictionary()


def filter_clause(filters: SearchFilters | None) -> sql.Composable:
    """The WHERE fragment for metadata pre-filters (on d = documents, src = sources), the caller's
    visibility among them."""
    if filters is None or filters.is_empty():
        return sql.SQL("true")
    parts: list[sql.Composable] = []
    if filters.sources:
        parts.append(sql.SQL("src.name = ANY({})").format(literal(list(filters.sources))))
    if filters.paths:
        parts.append(sql.SQL("d.path = ANY({})").format(literal(list(filters.paths))))
    for key, values in (("service", filters.services), ("environment", filters.environments)):
        if values:
            parts.append(sql.SQL("lower(d.metadata->>{}) = ANY({})").format(
                sql.Literal(key), literal([v.lower() for v in values])))
    if filters.tags:
        # Front matter keeps tags as written: any case, a list or a single string.
        parts.append(
            sql.SQL(
                "EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE jsonb_typeof(d.metadata->'tags')"
                " WHEN 'array' THEN d.metadata->'tags' WHEN 'string' THEN jsonb_build_array(d.metadata->'tags')"
                " ELSE '[]'::jsonb END) AS t(tag) WHERE lower(t.tag) = ANY({}))"
            ).format(literal([t.lower() for t in filters.tags]))
        )
    if filters.visibility is not None:
        parts.append(filters.visibility.clause())
    return sql.SQL(" AND ").join(parts)


LIMITS = ("per_term", "candidates", "pool", "dense_pool")  # parameters written into the text
# The dense leg scans a filter's allowed chunks exactly when there are at most sqrt(EXACT_RATIO x
# all chunks) of them, else walks the HNSW graph past the unallowed ones. Measured at 100k chunks:
# an exact distance costs ~0.9 us per allowed chunk, and the walk ~11 us per chunk it passes, about
# 100 / (allowed share) of them; the two meet near A^2 = 1200 x N (11k allowed chunks at 100k, 35k
# at 1M).
EXACT_RATIO = 1200


def statement(legs: str, version: store.IndexVersion, filters: SearchFilters | None,
              params: dict[str, Any]) -> sql.Composed:
    """The candidates statement for some legs ("both", "lexical", "dense") on an index version,
    with the LIMITs of `params` written in."""
    unfiltered = filters is None or filters.is_empty()
    return sql.SQL(STATEMENTS[legs]).format(  # type: ignore[arg-type]
        dim=sql.Literal(version.dim), version=sql.Literal(version.id), filter=filter_clause(filters),
        unfiltered=sql.Literal(unfiltered), levels=sql.Literal(lexical.IMPACT_LEVELS),
        exact_ratio=sql.Literal(EXACT_RATIO),
        **{name: sql.Literal(int(params[name])) for name in LIMITS},
    )


async def rows(
    pool: AsyncConnectionPool, legs: str, filters: SearchFilters | None, params: dict[str, Any]
) -> list[Row] | None:
    """One candidates statement's rows; None when there is no active index. One round trip: the
    active version is cached per pool and checked against the one every row names."""
    async with db.autocommit_connection(pool) as conn:
        version = _active.get(pool)
        cached = version is not None
        while True:
            if version is None:
                version = await store.active_index(conn)
                if version is None:
                    return None
            failure: psycopg.Error | None = None
            try:
                # Prepared: parsed and planned once per connection (db.SESSION_SETTINGS).
                query = statement(legs, version, filters, params)
                found = await (await conn.execute(query, params, prepare=True)).fetchall()
            except psycopg.Error as exc:  # a stale cached version may not take the query's vector
                if not cached:
                    raise
                found, failure = [], exc
            # After a reindex switched versions, run again on the new one. No rows cannot tell, so
            # an empty result from the cached version asks.
            if found:
                active = found[0][ACTIVE_VERSION]
            elif cached:
                current = await store.active_index(conn)
                active = current.id if current is not None else None
            else:
                active = version.id
            if active == version.id:
                if failure is not None:
                    raise failure
                _active[pool] = version
                return found
            _active.pop(pool, None)
            version, cached = None, False


def merge_legs(lexical_rows: list[Row] | None, dense_rows: list[Row] | None) -> list[Row] | None:
    """One row per chunk from the two legs' rows: the lexical row, with the dense rank and score
    (and the text, if only the dense leg ranked the chunk high enough to ship it)."""
    if lexical_rows is None or dense_rows is None:
        return None
    merged = {row[0]: row for row in lexical_rows}
    for row in dense_rows:
        seen = merged.get(row[0])
        if seen is None:
            merged[row[0]] = row
        else:
            text = seen[TEXT] if seen[TEXT] is not None else row[TEXT]
            merged[row[0]] = (*seen[:TEXT], text, *seen[TEXT + 1 : DENSE_RANK], *row[DENSE_RANK : DENSE_RANK + 2],
                              *seen[DENSE_RANK + 2 :])
    return list(merged.values())


async def texts(pool: AsyncConnectionPool, chunk_ids: list[int]) -> dict[int, str]:
    """Chunks' texts by id (chunks deleted meanwhile are missing)."""
    async with db.autocommit_connection(pool) as conn:
        cur = await conn.execute("SELECT id, text FROM chunks WHERE id = ANY(%s)", (chunk_ids,))
        return {int(chunk_id): text for chunk_id, text in await cur.fetchall()}
