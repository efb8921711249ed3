"""SQL statements classified with sqlglot: which destructive kind each statement is.

Kinds: drop_database, drop_table, drop_other, truncate, delete_all, delete_where, update_all,
update_where, alter_drop, and call:<function> for every function called. Statements sqlglot
cannot parse fall back to its tokenizer (comments and strings are still understood).
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Tokenizer, TokenType

from guardrails.invocation import Invocation

SQL_START = frozenset({
    "select", "insert", "update", "delete", "drop", "truncate", "alter", "create", "grant", "revoke",
    "with", "begin", "commit", "rollback", "vacuum", "reindex", "explain", "copy", "merge", "comment",
})
_DATABASE_KINDS = {"DATABASE", "SCHEMA", "KEYSPACE"}  # a Cassandra keyspace is its database
_TABLE_KINDS = {"TABLE", "MEASUREMENT", "SERIES", "COLUMNFAMILY"}  # InfluxQL measurements hold a table's points
_WORD = re.compile(r"[A-Za-z_][\w.]*")


class _NoCommandFallbackWarning(logging.Filter):
    """Drop sqlglot's "contains unsupported syntax" warning: the token fallback handles those statements."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "unsupported syntax" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_NoCommandFallbackWarning())


def looks_like_sql(text: str) -> bool:
    """True when a command starts like an SQL statement rather than a shell command."""
    words = text.split(None, 2)
    if not words or words[0].lower().rstrip(";") not in SQL_START:
        return False
    return len(words) == 1 or not words[1].startswith("-")


def split_statements(text: str, dialect: str | None = None) -> list[str]:
    """Statements of an SQL script (psql meta-commands dropped), split at top-level semicolons."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("\\"))
    try:
        tokens = Tokenizer().tokenize(text) if dialect is None else sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError:
        return [s.strip() for s in text.split(";") if s.strip()]
    statements, start = [], 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            statements.append(text[start:token.end + 1].strip())
            start = token.end + 1
    statements.append(text[start:].strip())
    return [s for s in statements if s.strip(" ;\n\t")]


def _always_true(cond: exp.Expression | None) -> bool:
    if isinstance(cond, exp.Paren):
        return _always_true(cond.this)
    if isinstance(cond, exp.Boolean):
        return bool(cond.this)
    if isinstance(cond, exp.Literal) and not cond.is_string:
        return cond.this not in ("0", "0.0")
    if isinstance(cond, exp.EQ):
        left, right = cond.this, cond.expression
        return isinstance(left, exp.Literal) and isinstance(right, exp.Literal) and left.this == right.this
    if isinstance(cond, exp.Or):
        return _always_true(cond.this) or _always_true(cond.expression)
    return False


def _scoped(node: exp.Expression) -> bool:
    where = node.args.get("where")
    return where is not None and not _always_true(where.this)


def _node_kinds(node: exp.Expression) -> set[str]:
    if isinstance(node, exp.Drop) and not isinstance(node.parent, exp.Alter):
        kind = str(node.args.get("kind") or "").upper()
        return {"drop_database" if kind in _DATABASE_KINDS else "drop_table" if kind in _TABLE_KINDS else "drop_other"}
    if isinstance(node, exp.TruncateTable):
        return {"truncate"}
    if isinstance(node, exp.Delete):
        return {"delete_where" if _scoped(node) else "delete_all"}
    if isinstance(node, exp.Update):
        return {"update_where" if _scoped(node) else "update_all"}
    if isinstance(node, exp.Alter):
        return {"alter_drop"} if any(isinstance(a, exp.Drop) for a in node.args.get("actions") or []) else set()
    if isinstance(node, exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        return {f"call:{name.lower()}"} if name else set()
    return set()


def _token_kinds(statement: str) -> set[str]:
    """Kinds from the keyword sequence, for statements the parser does not understand."""
    try:
        words = [t.text.upper() for t in Tokenizer().tokenize(statement) if t.token_type != TokenType.STRING]
    except SqlglotError:
        words = [w.upper() for w in _WORD.findall(statement)]
    if not words:
        return set()
    head, rest = words[0], words[1:]
    if head == "DROP":
        target = rest[0] if rest else ""
        return {"drop_database" if target in _DATABASE_KINDS else "drop_table" if target in _TABLE_KINDS
                else "drop_other"}
    if head == "TRUNCATE":
        return {"truncate"}
    if head in ("DELETE", "UPDATE"):
        return {f"{head.lower()}_{'where' if 'WHERE' in rest else 'all'}"}
    if head == "ALTER" and "DROP" in rest:
        return {"alter_drop"}
    calls = {f"call:{w.lower()}" for w, nxt in zip(words, words[1:] + [""]) if nxt == "(" and _WORD.fullmatch(w)}
    return calls


def statement_kinds(statement: str, dialect: str | None = None) -> frozenset[str]:
    """The destructive kinds of one SQL statement (empty for harmless ones)."""
    for read in dict.fromkeys((dialect, None)):
        try:
            tree = sqlglot.parse_one(statement, read=read)
        except SqlglotError:
            continue
        if isinstance(tree, exp.Command):
            return frozenset(_token_kinds(statement))
        kinds: set[str] = set()
        for node in tree.walk():
            kinds |= _node_kinds(node)
        return frozenset(kinds)
    return frozenset(_token_kinds(statement))


def sql_invocations(text: str, dialect: str | None = None) -> list[Invocation]:
    """One Invocation per statement of an SQL script, carrying its kinds."""
    statements = split_statements(text, dialect)
    return [Invocation(program="sql", args=(s,), sql=statement_kinds(s, dialect)) for s in statements]
