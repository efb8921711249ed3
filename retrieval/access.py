"""Who may see which runbooks. A runbook is restricted by its front matter (`visibility: restricted`
with `allowed_channels` and/or `allowed_groups`; listing either restricts it too) or by its source
(a source configured as restricted, with the channels and groups it allows). A caller is an
`Audience`: the conversation it asks from, the groups it belongs to, and, for an API key scoped to
sources, those sources. `Visibility` is what one caller may see, written as SQL on `d` (documents)
and `src` (sources): the search's candidates, the section and runbook readers and the alert's
linked runbooks all apply it, so a runbook a caller may not see is never ranked, shown, named as a
closest match or read by id or path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

# A document restricts itself by its front matter: `visibility: restricted` (or private), or by
# naming who may see it.
RESTRICTED = sql.SQL(
    "(lower(coalesce(d.metadata->>'visibility', '')) IN ('restricted', 'private')"
    " OR d.metadata ? 'allowed_channels' OR d.metadata ? 'allowed_groups')")
_ANY_RESTRICTED = sql.SQL("SELECT EXISTS (SELECT 1 FROM documents d WHERE {})").format(RESTRICTED)


@dataclass(frozen=True)
class Audience:
    """Who is asking. `everyone` is the operator at the command line, who sees every runbook."""

    channels: tuple[str, ...] = ()  # the Slack channel or Teams conversation asked from
    groups: tuple[str, ...] = ()
    sources: tuple[str, ...] | None = None  # an API key's scope: only these sources; None: any
    everyone: bool = False

    @classmethod
    def operator(cls) -> Audience:
        """The command line: the person with the database's credentials sees everything."""
        return cls(everyone=True)


@dataclass(frozen=True)
class SourceRule:
    """A restricted source: the channels and groups that may see its runbooks."""

    channels: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    def allows(self, audience: Audience) -> bool:
        """Whether the audience asks from an allowed channel or belongs to an allowed group."""
        return bool(set(self.channels) & set(audience.channels) or set(self.groups) & set(audience.groups))


@dataclass(frozen=True)
class Visibility:
    """What one audience may see, as a WHERE fragment; `documents` says whether restricted documents
    exist at all (none: only the source rules apply, and the search keeps its unfiltered plan)."""

    channels: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    sources: tuple[str, ...] | None = None
    hidden_sources: tuple[str, ...] = ()
    documents: bool = True

    def clause(self) -> sql.Composable:
        """The WHERE fragment on d (documents) and src (sources)."""
        parts: list[sql.Composable] = []
        if self.documents:
            parts.append(sql.SQL("(NOT {} OR d.metadata->'allowed_channels' ?| {} OR d.metadata->'allowed_groups' ?| {})")
                         .format(RESTRICTED, literal(list(self.channels)), literal(list(self.groups))))
        if self.hidden_sources:
            parts.append(sql.SQL("src.name <> ALL({})").format(literal(list(self.hidden_sources))))
        if self.sources is not None:
            parts.append(sql.SQL("src.name = ANY({})").format(literal(list(self.sources))))
        return sql.SQL(" AND ").join(parts) if parts else sql.SQL("true")

    def hides_anything(self) -> bool:
        """False when the fragment would allow every document."""
        return self.documents or bool(self.hidden_sources) or self.sources is not None


def literal(value: object) -> sql.Composable:
    """A value written into a statement's text (the search's statements are prepared with their
    filters in the text): NUL characters dropped (Postgres text has none, and no runbook's
    metadata can contain one) and `%` doubled, as the text is sent with parameters."""
    if isinstance(value, str):
        value = value.replace("\x00", "")
    elif isinstance(value, list):
        value = [v.replace("\x00", "") if isinstance(v, str) else v for v in value]
    return sql.SQL(sql.Literal(value).as_string(None).replace("%", "%%"))


async def visibility(pool: AsyncConnectionPool, audience: Audience,
                     restricted_sources: Mapping[str, SourceRule]) -> Visibility | None:
    """What the audience may see, or None when that is everything (one query: whether any
    document restricts itself)."""
    if audience.everyone:
        return None
    hidden = tuple(sorted(name for name, rule in restricted_sources.items() if not rule.allows(audience)))
    async with pool.connection() as conn:
        row = await (await conn.execute(_ANY_RESTRICTED)).fetchone()
    found = Visibility(channels=audience.channels, groups=audience.groups, sources=audience.sources,
                       hidden_sources=hidden, documents=bool(row and row[0]))
    return found if found.hides_anything() else None
