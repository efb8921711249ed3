"""SQL statements classified with sqlglot: which destructive kind each statement is.

Kinds: drop_database, drop_table, drop_access (policies, publications, warehouses), drop_other, drop_scratch, truncate, delete_all, delete_where (sessions, caches, scratch),
delete_rows (any other table's rows), update_all, update_where (sessions, caches, scratch), update_rows (any
other table's rows), alter_drop, and call:<function> for every function called. Statements sqlglot
cannot parse fall back to its tokenizer (comments and strings are still understood). What DBAs know
to be dangerous beyond those (a table rewritten under a lock, durability switched off, writes
blocked, replication logs thrown away, privileges handed out, repairs that drop data) is read from
the statement's words (`STATEMENT_PATTERNS`); EXPLAIN ANALYZE runs the statement it explains.
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
    "flush", "purge", "reset", "rename", "cluster", "dbcc", "exec", "stop", "flashback", "noaudit",
})
# Statements whose first word is also a shell command (shutdown, set): SQL only when written in capitals.
SQL_START_CAPITALS = frozenset({"SHUTDOWN", "SET", "RESTORE", "BACKUP", "KILL", "IMPORT", "LOAD", "QUIESCE", "CALL"})
_DATABASE_KINDS = {"DATABASE", "SCHEMA", "KEYSPACE", "TABLESPACE", "CATALOG", "DISKGROUP", "PLUGGABLE"}  # a Cassandra keyspace is its database
_TABLE_KINDS = {"TABLE", "MEASUREMENT", "SERIES", "COLUMNFAMILY", "STREAM", "COLLECTION"}  # (InfluxQL, ksqlDB, N1QL)
# What clients stand on: a row-level policy, a publication or subscription feeding replication, a warehouse queries
# run on. Any other object dropped (drop_other: an index, a view, a user or role, a key, a snapshot) breaks or
# slows what uses it until it is recreated, unless it is named as temporary or retired (drop_scratch).
_ACCESS_KINDS = {"POLICY", "PUBLICATION", "SUBSCRIPTION", "WAREHOUSE", "SHARE"}


def _drop_kind(kind: str) -> str:
    return ("drop_database" if kind in _DATABASE_KINDS else "drop_table" if kind in _TABLE_KINDS
            else "drop_access" if kind in _ACCESS_KINDS else "drop_other")
_WORD = re.compile(r"[A-Za-z_][\w.]*")


class _NoCommandFallbackWarning(logging.Filter):
    """Drop sqlglot's "contains unsupported syntax" warning: the token fallback handles those statements."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "unsupported syntax" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_NoCommandFallbackWarning())


_CLUSTER_CLI = frozenset({"status", "show", "info", "list", "health", "node", "nodes", "stop", "start", "restart",
                          "halt", "shutdown", "join", "leave", "members", "failover", "setup", "destroy"})


def looks_like_sql(text: str) -> bool:
    """True when a command starts like an SQL statement rather than a shell command."""
    words = text.split(None, 2)
    if not words or (words[0].lower().rstrip(";") not in SQL_START and words[0].rstrip(";") not in SQL_START_CAPITALS):
        return False
    if len(words) == 1:
        return True
    head, second = words[0].lower().rstrip(";"), words[1].lower()
    if head == "rollback" and second.rstrip(";") not in ("transaction", "work", "tran", "to", "prepared"):
        return False  # a device's `rollback running-config checkpoint X`, not SQL's ROLLBACK [WORK]
    if head == "cluster" and words[0].islower() and second.rstrip(";") in _CLUSTER_CLI:
        return False  # a cluster manager's `cluster stop`, `cluster status`: not Postgres' CLUSTER table
    if head == "reset" and words[0].islower() and second.rstrip(";") in ("bgp", "ospf", "isis", "saved-configuration",
                                                                      "counters", "arp", "mac-address"):
        return False  # Huawei VRP's `reset bgp all`, `reset saved-configuration`: not SQL's RESET
    if head == "delete" and words[0].islower() and " from " not in f" {text.lower()} ":
        return False  # Junos `delete interfaces xe-0/0/0 disable`: SQL names FROM (T-SQL's optional FROM is typed in capitals)
    # not an option, nor a device's file (`delete flash:vlan.dat`, `delete /force flash:x`)
    return not (words[1].startswith(("-", "/")) or re.match(r"[\w-]+:", words[1]))


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
        return {_drop_kind(kind)}
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


_MEMBER_DROPPED = re.compile(r"\bDROP\s+(?:MEMBER|USER)\b", re.IGNORECASE)  # ALTER SERVER ROLE x DROP MEMBER y


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
        return {_drop_kind(target)}
    if head == "TRUNCATE":
        return {"truncate"}
    if head in ("DELETE", "UPDATE"):
        return {f"{head.lower()}_{'where' if 'WHERE' in rest else 'all'}"}
    if head == "ALTER" and "DROP" in rest and not _MEMBER_DROPPED.search(statement):
        return {"alter_drop"}
    calls = {f"call:{w.lower()}" for w, nxt in zip(words, words[1:] + [""]) if nxt == "(" and _WORD.fullmatch(w)}
    return calls


# (pattern over the statement, kind); IGNORECASE, anchored at the statement's start unless it says so
STATEMENT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE | re.DOTALL), k) for p, k in (
    (r"^\s*VACUUM\s*(?:\([^)]*\bFULL\b[^)]*\)|\s+FULL\b)", "table_locked"),  # rewrites the table under an exclusive lock
    (r"^\s*CLUSTER\s+\w", "table_locked"),
    (r"^\s*ALTER\s+SYSTEM\s+SET\s+(?:fsync|full_page_writes|synchronous_commit|archive_mode)\s*(?:=|TO)\s*'?(?:off|false|0)\b",
     "durability_off"),
    # WAL "archived" by a command that does nothing; SQL Server's and Oracle's log chain given up
    (r"^\s*ALTER\s+SYSTEM\s+SET\s+archive_command\s*(?:=|TO)\s*'\s*(?:/bin/true|/usr/bin/true|true|:|exit 0)\s*'",
     "durability_off"),
    (r"^\s*ALTER\s+DATABASE\s+.*\bSET\s+RECOVERY\s+SIMPLE\b|^\s*ALTER\s+DATABASE\s+(?:\w+\s+)?NOARCHIVELOG\b"
     r"|_allow_resetlogs_corruption\W+\s*=\s*TRUE", "durability_off"),
    (r"^\s*SET\s+GLOBAL\s+(?:innodb_flush_log_at_trx_commit|sync_binlog)\s*=\s*0\b", "durability_off"),
    (r"^\s*PRAGMA\s+(?:\w+\.)?(?:journal_mode\s*=\s*OFF|synchronous\s*=\s*(?:OFF|0))\b", "durability_off"),  # SQLite
    (r"^\s*ALTER\s+DATABASE\s+OPEN\s+RESETLOGS\b|^\s*ALTER\s+DATABASE\s+CLEAR\s+UNARCHIVED\s+LOGFILE\b",
     "logs_purged"),  # Oracle: the redo not yet archived is thrown away
    (r"^\s*FLUSH\s+TABLES\s+WITH\s+READ\s+LOCK\b", "writes_blocked"),
    # ClickHouse: merges or replication stopped (parts pile up until inserts are refused), a replica dropped
    (r"^\s*SYSTEM\s+(?:STOP\s+(?:MERGES|TTL\s+MERGES|FETCHES|REPLICATED\s+SENDS|REPLICATION\s+QUEUES|MOVES|DISTRIBUTED\s+SENDS)"
     r"|DROP\s+REPLICA)\b", "replication_stopped"),
    # a TTL that deletes within a week of the event (`MODIFY TTL event_date + INTERVAL 1 DAY`)
    (r"\bMODIFY\s+TTL\b.*\bINTERVAL\s+[1-7]\s+(?:DAY|HOUR|MINUTE|SECOND)S?\b", "alter_drop"),
    (r"^\s*ALTER\s+USER\s+\S+\s+HOST\s+ANY\b", "privilege_granted"),  # ClickHouse: the user logs in from anywhere
    (r"\bpg_terminate_backend\s*\(\s*\w+\s*\)(?!.*\bidle\b).*\bFROM\b", "sessions_terminated"),  # every session a
    # query finds (not idle ones, idle in transaction for too long: hygiene)
    (r"^\s*SET\s+(?:GLOBAL|PERSIST)\s+(?:super_read_only|read_only|offline_mode)\s*=\s*(?:ON|1|TRUE)\b", "writes_blocked"),
    (r"^\s*REINDEX\s+(?:\([^)]*\)\s*)?(?:DATABASE|SYSTEM|SCHEMA|TABLE)\s+(?!CONCURRENTLY)", "table_locked"),
    (r"^\s*RESTORE\s+(?:DATABASE|LOG|DB)\b.*\bREPLACE\b", "restored_over"),
    (r"^\s*(?:IMPORT|LOAD)\s+FROM\b.*\bREPLACE\s+INTO\b", "restored_over"),  # Db2: the table's rows are replaced
    (r"^\s*QUIESCE\s+(?:DATABASE|INSTANCE)\b", "writes_blocked"),
    (r"^\s*ALTER\s+TABLESPACE\s+\S+\s+OFFLINE\b", "writes_blocked"),
    (r"^\s*FLASHBACK\s+(?:DATABASE|TABLE)\b(?!.*\bBEFORE\s+DROP\b)", "restored_over"),  # rewound: what came after
    # is gone (TO BEFORE DROP brings a dropped table back)
    (r"^\s*(?:NOAUDIT\s+(?:ALL|POLICY)\b|ALTER\s+(?:SERVER|DATABASE)\s+AUDIT\b.*\bSTATE\s*=\s*OFF\b)", "audit_off"),
    (r"\bFAILED_LOGIN_ATTEMPTS\s+UNLIMITED\b|\bDISABLE\s+PASSWORD\s+LIFETIME\b|\bUNSET\s+NETWORK_POLICY\b",
     "privilege_granted"),
    (r"^\s*(?:BEGIN\s+)?EXECUTE\s+IMMEDIATE\s+(?!')[:@]?\w+\s*;|^\s*EXEC(?:UTE)?\s+sp_executesql\s+@\w+", "dynamic_sql"),
    (r"\bDATA_RETENTION_TIME_IN_DAYS\s*=\s*0\b|\bVACUUM\b.*\bRETAIN\s+0\s+HOURS\b|^\s*BACKUP\s+CATALOG\s+DELETE\b",
     "backups_deleted"),
    (r"^\s*ALTER\s+(?:ROLE|USER)\s+\S+\s+(?:WITH\s+)?NOLOGIN\b|^\s*ALTER\s+USER\s+\S+\s+ACCOUNT\s+LOCK\b",
     "writes_blocked"),  # the application can no longer log in
    # PgBouncer's console: a database's clients paused, cut off or refused; CockroachDB's jobs or schedules paused
    (r"^\s*(?:PAUSE|SUSPEND|DISABLE)\b|^\s*KILL\s+(?!QUERY\b|CONNECTION\b|MUTATION\b)[A-Za-z_]\w*\s*;?\s*$", "writes_blocked"),
    # code the database server runs as its operating-system user, or an untrusted language that lets any function do so
    (r"\bCOPY\b.*\b(?:TO|FROM)\s+PROGRAM\b|\bCREATE\s+(?:OR\s+REPLACE\s+)?EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?"
     r"\"?pl\w+u\"?(?:\s|;|$)|\bxp_cmdshell\s+'", "code_run"),
    (r"^\s*PURGE\s+(?:DBA_RECYCLEBIN|RECYCLEBIN|TABLE|INDEX|TABLESPACE)\b", "recycle_purged"),
    (r"^\s*DELETE\s+(?:NOPROMPT\s+|FORCE\s+)*(?:BACKUP|ARCHIVELOG|COPY)\b(?!.*\bBACKED\s+UP\b)", "backups_deleted"),  # RMAN
    (r"^\s*ALTER\s+DATABASE\s+.*\b(?:CONNECTION\s+LIMIT\s+0\b|SET\s+(?:SINGLE_USER|OFFLINE|READ_ONLY)\b"
     r"|ALLOW_CONNECTIONS\s+(?:false|0)\b)", "writes_blocked"),
    (r"^\s*(?:RENAME\s+TABLE\b|ALTER\s+TABLE\s+\S+\s+RENAME\s+TO\b)", "table_renamed"),
    (r"^\s*SHUTDOWN\b", "server_shutdown"),
    # ClickHouse, SAP HANA: the server or one tenant database stopped; a table detached is gone for its readers
    (r"^\s*SYSTEM\s+(?:SHUTDOWN|KILL)\b|^\s*ALTER\s+SYSTEM\s+STOP\s+DATABASE\b", "server_shutdown"),
    (r"^\s*ALTER\s+WAREHOUSE\s+(?:IF\s+EXISTS\s+)?\S+\s+SUSPEND\b", "server_shutdown"),  # Snowflake: its queries stop
    (r"\bENGINE\s*=\s*BLACKHOLE\b", "truncate"),  # MySQL: the table's rows are discarded, and every later write
    (r"^\s*CREATE\s+POLICY\b.*\b(?:USING|WITH\s+CHECK)\s*\(\s*true\s*\)", "privilege_granted"),  # RLS that lets every row through
    (r"^\s*UPDATE\s+(?:DBM|DATABASE\s+MANAGER)\s+(?:CFG|CONFIGURATION)\s+USING\s+(?:AUTHENTICATION\s+CLIENT"
     r"|TRUST_ALLCLNTS\s+YES|TRUST_CLNTAUTH\s+CLIENT|SYSADM_GROUP|SYSCTRL_GROUP|SYSMAINT_GROUP)\b", "privilege_granted"),
    (r"\bhost_based_authentication\.configuration\b.*\btrust\b|\bWITH\s+PASSWORD\s+NULL\b", "privilege_granted"),
    (r"^\s*GRANT\s+(?:ROLE\s+)?admin\s+TO\b", "privilege_granted"),  # CockroachDB's admin role
    (r"^\s*GRANT\s+ALL\s+PERMISSIONS\s+ON\s+ALL\s+KEYSPACES\b|^\s*GRANT\s+DATA\s+ADMIN\b", "privilege_granted"),  # Cassandra, HANA
    (r"global_auditing_state'\s*\)\s*=\s*'false'", "audit_off"),  # HANA
    (r"^\s*ALTER\s+ROLE\s+\[?db_(?:owner|securityadmin|accessadmin)\]?\s+ADD\s+MEMBER\b"
     r"|^\s*EXEC(?:UTE)?\s+sp_addrolemember\s+N?'db_owner'", "privilege_granted"),
    (r"^\s*ALTER\s+SYSTEM\s+ENABLE\s+RESTRICTED\s+SESSION\b", "writes_blocked"),
    (r"\bttl_expire_after\s*=\s*'(?:[0-9]+\s*(?:minutes?|hours?|seconds?)|1\s*days?)'", "alter_drop"),  # rows expire within a day
    (r"^\s*DISABLE\s+(?:CONFIGURATION|DATABASE|FAST_START\s+FAILOVER)\b|\bSET\s+STATE\s*=\s*'?APPLY-OFF",
     "replication_stopped"),  # Data Guard: the standby stops applying
    (r"\bremote_os_authent\s*=\s*TRUE\b|\bremote_login_passwordfile\s*=\s*'?NONE\b", "privilege_granted"),
    (r"^\s*DETACH\s+(?:TABLE|DATABASE|DICTIONARY|VIEW)\b", "writes_blocked"),
    # Db2's command line: every application thrown off, the database or instance stopped, history and logs deleted
    (r"^\s*FORCE\s+APPLICATIONS?\s+ALL\b|^\s*DEACTIVATE\s+(?:DATABASE|DB)\b|^\s*STOP\s+INSTANCE\b", "server_shutdown"),
    (r"^\s*PRUNE\s+(?:HISTORY|LOGFILE)\b.*\bAND\s+DELETE\b", "backups_deleted"),
    # a partition's rows (ClickHouse, MySQL, Hive), a Db2 table emptied in place, TimescaleDB's chunks
    (r"^\s*ALTER\s+TABLE\s+\S+\s+(?:ON\s+CLUSTER\s+\S+\s+)?(?:DROP|TRUNCATE)\s+(?:DETACHED\s+)?(?:PARTITION|PART)\b",
     "alter_drop"),
    (r"\bACTIVATE\s+NOT\s+LOGGED\s+INITIALLY\s+WITH\s+EMPTY\s+TABLE\b", "truncate"),
    (r"\bdrop_chunks\s*\(", "alter_drop"),
    (r"\bexpire_snapshots\s*\(.*\bretention_threshold\s*=>\s*'0", "backups_deleted"),  # Iceberg: no time travel left
    # (not a retention purge: PURGE BINARY LOGS BEFORE NOW() - INTERVAL 7 DAY keeps a week)
    (r"^\s*(?:PURGE\s+(?:BINARY|MASTER)\s+LOGS\b(?!\s+BEFORE\s+(?:NOW\(\)|CURRENT_TIMESTAMP|DATE_SUB\s*\(\s*NOW\(\))"
     r"\s*[-,]\s*INTERVAL\s+[1-9])|RESET\s+(?:MASTER|BINARY\s+LOGS)\b|RESET\s+(?:SLAVE|REPLICA)\s+ALL\b)",
     "logs_purged"),
    (r"^\s*(?:STOP\s+(?:SLAVE|REPLICA)\b)", "replication_stopped"),
    (r"^\s*STOP\s+HADR\b", "replication_stopped"),  # Db2: the standby stops receiving logs
    (r"^\s*ALTER\s+SYSTEM\s+SET\s+(?:log_statement|log_connections|log_disconnections|pgaudit\.log)\s*(?:=|TO)\s*'?"
     r"(?:none|off|false)\b", "audit_off"),  # Postgres: statements or logins no longer logged
    (r"^\s*UPDATE\s+(?:DB|DATABASE)\s+(?:CFG|CONFIGURATION)\b.*\bLOGARCHMETH1\s+OFF\b", "logs_purged"),  # Db2: no
    # archived logs, no roll-forward recovery
    (r"^\s*CALL\s+(?:SYSPROC\.)?ADMIN_DROP_SCHEMA\s*\(", "drop_database"),  # Db2: a schema and every object in it
    (r"^\s*DROP\s+OWNED\s+BY\b", "drop_owned"),
    (r"^\s*DROP\s+TABLESPACE\b.*\bINCLUDING\s+CONTENTS\b", "drop_database"),
    (r"^\s*DROP\s+USER\b.*\bCASCADE\b", "drop_owned"),
    (r"\bREPAIR_ALLOW_DATA_LOSS\b", "repair_data_loss"),
    (r"^\s*(?:ALTER|CREATE)\s+(?:ROLE|USER)\s+\S+\s+(?:WITH\s+)?(?:\w+\s+)*?(?:SUPERUSER|BYPASSRLS|CREATEROLE)\b"
     r"(?!\s*=\s*false)", "privilege_granted"),  # (Cassandra: WITH SUPERUSER = true)
    (r"^\s*GRANT\s+(?:ROLE\s+)?(?:DBA|SYSDBA|SYSOPER|DATAACCESS|DBADM|SECADM|SYSADM|db_owner|sysadmin|rds_superuser"
     r"|azure_pg_admin|cloudsqlsuperuser|ACCOUNTADMIN|SECURITYADMIN|ORGADMIN|ALL\s+PRIVILEGES\s+ON\s+\*\.\*)\b",
     "privilege_granted"),  # the administrator's role to someone
    (r"\bMINS_TO_BYPASS_MFA\s*=\s*[1-9]|\bDISABLE_MFA\s*=\s*TRUE\b", "privilege_granted"),
    (r"^\s*GRANT\b[\w\s,]*\bANY\s+(?:TABLE|PRIVILEGE|DICTIONARY|PROCEDURE)\b", "privilege_granted"),  # Oracle
    (r"^\s*DROP\s+POLICY\b", "privilege_granted"),  # a row-level security policy: its rows are open
    (r"\bWITH\s+ADMIN\s+OPTION\b|\bSET\s+TRUSTWORTHY\s+ON\b", "privilege_granted"),
    (r"^\s*UPDATE\s+mysql\.user\s+SET\b.*_priv\s*=\s*'Y'", "privilege_granted"),
    (r"^\s*GRANT\s+ALL\b.*\b(?:WITH\s+GRANT\s+OPTION|TO\s+(?:PUBLIC|anon|anonymous|authenticated)\b)", "privilege_granted"),
    (r"^\s*GRANT\s+(?:DBADM|SECADM|SYSADM|ACCESSCTRL|DATAACCESS)\b.*\bTO\s+PUBLIC\b", "privilege_granted"),  # Db2
    (r"^\s*GRANT\s+ROLE\s+(?:ACCOUNTADMIN|SECURITYADMIN|SYSADMIN|ORGADMIN)\b.*\bTO\s+ROLE\s+PUBLIC\b", "privilege_granted"),
    (r"\bDISABLE\s+ROW\s+LEVEL\s+SECURITY\b|\bNO\s+FORCE\s+ROW\s+LEVEL\s+SECURITY\b", "privilege_granted"),
    (r"\bIDENTIFIED\s+WITH\s+no_password\b", "privilege_granted"),  # ClickHouse: a user with no password
    (r"^\s*GRANT\s+(?!(?:SELECT|USAGE|CONNECT|EXECUTE|REFERENCES|TEMP|TEMPORARY)\b)[\w\s,]+\bTO\s+PUBLIC\b",
     "privilege_granted"),  # GRANT DBA TO PUBLIC
    (r"^\s*(?:ALTER|CREATE)\s+(?:USER|ROLE|LOGIN)\s+[\"'`]?(\w+)[\"'`]?\b.*\b(?:PASSWORD\s*(?:=\s*)?N?|IDENTIFIED\s+BY\s+)"
     r"['\"]?(?:\1|admin\d*|password\d*|postgres|root|changeme|secret|123456|12345678|test|guest|sa|welcome\d*|oracle|manager|tiger)['\"]?"
     r"(?:\s|;|$)", "weak_password"),
    (r"^\s*CREATE\s+OR\s+REPLACE\s+TABLE\b", "table_replaced"),  # its rows are replaced by the query's
    (r"^\s*INSERT\s+OVERWRITE\s+(?:TABLE\s+|INTO\s+)?(?!(?:LOCAL\s+)?DIRECTORY\b)", "table_replaced"),  # Hive, Spark, Databricks
    # PostgreSQL: an index built without CONCURRENTLY holds off every write to the table until it is done
    (r"^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?!CONCURRENTLY\b)(?:IF\s+NOT\s+EXISTS\s+)?\w+\s+ON\s+(?:ONLY\s+)?[\w.\"]+\s*"
     r"(?:USING\s+\w+\s*)?\(", "table_locked"),
    # RMAN: backups kept to a single copy or a day
    (r"^\s*CONFIGURE\s+RETENTION\s+POLICY\s+TO\s+(?:REDUNDANCY\s+1\b|RECOVERY\s+WINDOW\s+OF\s+[01]\s+DAYS?\b|NONE\b)",
     "backups_deleted"),
    # a failover forced past the replicas' state; a standby made primary
    (r"\bFORCE_FAILOVER_ALLOW_DATA_LOSS\b|^\s*ALTER\s+DATABASE\s+ACTIVATE\s+(?:PHYSICAL\s+|LOGICAL\s+)?STANDBY\s+DATABASE\b",
     "failover_forced"),
    # statements generated from the catalog (SELECT CONCAT('DROP DATABASE ', ...), format('DROP TABLE %I', ...)):
    # what they drop or kill is whatever the query finds
    (r"^\s*SELECT\s+(?:DISTINCT\s+)?(?:CONCAT|format|string_agg|GROUP_CONCAT|'|\")\s*\(?\s*['\"]\s*(?:DROP|TRUNCATE|KILL|DELETE)\b",
     "generated_destructive"),
    (r"^\s*KILL\s+QUERY\s+WHERE\s+(?!query_id\s*=)", "sessions_terminated"),  # ClickHouse: every query the condition matches
    (r"^\s*ALTER\s+TABLE\s+[\w.\"`]+\s+DROP\s+(?!PARTITION\b|CONSTRAINT\b|INDEX\b|ROW\s+FILTER\b|PRIMARY\b|FOREIGN\b"
     r"|DEFAULT\b|NOT\b|IF\s+EXISTS\s+(?:PARTITION|CONSTRAINT)\b)\w", "alter_drop"),  # CQL: ALTER TABLE t DROP col
    (r"^\s*ALTER\s+(?:TASK|PIPE|ALERT)\s+(?:IF\s+EXISTS\s+)?\S+\s+SUSPEND\b", "server_shutdown"),  # Snowflake: loads stop
    (r"^\s*BACKUP\s+LOG\b.*\bTO\s+DISK\s*=\s*N?'NUL:?'", "backups_deleted"),  # the log chain thrown away
    (r"^\s*GRANT\s+(?:SUPERUSER|pg_write_server_files|pg_execute_server_program|sysadmin)\b", "privilege_granted"),
    (r"^\s*ALTER\s+LOGIN\s+sa\s+ENABLE\b", "privilege_granted"),
    (r"^\s*(?:ALTER\s+SERVER\s+ROLE\s+(?:sysadmin|securityadmin|serveradmin|\[sysadmin\])\s+ADD\s+MEMBER"
     r"|EXEC(?:UTE)?\s+sp_addsrvrolemember\b.*\bsysadmin\b)", "privilege_granted"),
    (r"\bsp_configure\s+'xp_cmdshell'\s*,\s*1\b", "privilege_granted"),
))
_EXPLAIN_ANALYZE = re.compile(r"^\s*EXPLAIN\s*(?:\((?=[^)]*\bANALYZE\b)[^)]*\)|\s+ANALYZE(?:\s+VERBOSE)?)\s+", re.IGNORECASE)
_EXPLAIN_ONLY = re.compile(r"^\s*(?:EXPLAIN|DESCRIBE|DESC)\s+(?!ANALY[SZ]E\b|\([^)]*\bANALY[SZ]E\b)", re.IGNORECASE)
_TEMPORARY = re.compile(r"^\s*DROP\s+TEMPORARY\s+TABLE\b", re.IGNORECASE)
# Oracle RMAN's DELETE names backups, not rows: `DELETE NOPROMPT OBSOLETE` keeps the retention policy's.
_RMAN_DELETE = re.compile(r"^\s*DELETE\s+(?:NOPROMPT\s+|FORCE\s+)*(?:OBSOLETE|EXPIRED|BACKUP|ARCHIVELOG|COPY)\b",
                          re.IGNORECASE)


_TABLE_TARGETS = re.compile(r"^\s*(?:DROP\s+TABLE(?:\s+IF\s+EXISTS)?|TRUNCATE(?:\s+TABLE)?)\s+(.+?)\s*"
                            r"(?:\bCASCADE\b|\bRESTRICT\b|\bPURGE\b)?\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_SCRATCH_TABLE = re.compile(r"^#|^(?:session|pg_temp\w*|\w*scratch|tmp|temp|staging|\w+_tmp|\w+_temp)\.|(?:^|\.)(?:tmp|temp|scratch|cache)_|_(?:tmp|temp|cache)$"
                            r"|(?:^|\.)cache$",
                            re.IGNORECASE)


_THROWAWAY_DATABASE = re.compile(r"^\s*DROP\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?[`\"\[]?\w*?(?:^|_|-|\b)"
                                 r"(?:restore[_-]?test|tmp|temp|scratch|ci|pr[_-]?\d+|sandbox|e2e)(?:_|-|\b|$)\w*[`\"\]]?"
                                 r"\s*;?\s*$", re.IGNORECASE)


# the object a DROP names (past its kind's words, CONCURRENTLY and IF EXISTS), and names that say it is temporary,
# scratch or retired: idx_orders_tmp_backfill, index_users_on_email_old, orders_status_idx_invalid
_DROPPED_NAME = re.compile(r"^\s*DROP\s+(?:(?:MATERIALIZED|PRIMARY|UNIQUE|TEMPORARY|RESTORE)\s+)?\w+\s+(?:CONCURRENTLY\s+)?"
                          r"(?:IF\s+EXISTS\s+)?([^\s;(,]+)", re.IGNORECASE)
_RETIRED_NAME = re.compile(r"(?:^|[._-])(?:tmp|temp|scratch|old|invalid|unused|deprecated|test)(?:$|[._-]|\d)", re.IGNORECASE)


def _retired_object(statement: str) -> bool:
    found = _DROPPED_NAME.match(statement)
    return bool(found) and bool(_RETIRED_NAME.search(re.sub(r"[`\"\[\]]", "", found.group(1)).rsplit(".", 1)[-1]))


def _scratch_tables(statement: str) -> bool:
    """Whether every table a DROP TABLE or TRUNCATE names is a session's temporary table (`#staging`,
    `pg_temp.ids`) or named as scratch (`tmp_backfill_20240312`, `scratch.recon`)."""
    found = _TABLE_TARGETS.match(statement)
    if not found:
        return False
    names = [re.sub(r"[`\"\[\]]", "", n.strip()) for n in found.group(1).split(",")]
    return bool(names) and all(n and _SCRATCH_TABLE.search(n) for n in names)


def pattern_kinds(statement: str) -> frozenset[str]:
    """The kinds DBAs know beyond the parser's (see STATEMENT_PATTERNS)."""
    return frozenset(kind for pattern, kind in STATEMENT_PATTERNS if pattern.search(statement))


_DB2_CONFIG = re.compile(r"^\s*UPDATE\s+(?:DBM|DATABASE\s+MANAGER|DB|DATABASE)\s+(?:CFG|CONFIGURATION)\b", re.IGNORECASE)


def statement_kinds(statement: str, dialect: str | None = None) -> frozenset[str]:
    """The destructive kinds of one SQL statement (empty for harmless ones)."""
    explained = _EXPLAIN_ANALYZE.match(statement)
    if explained:  # EXPLAIN ANALYZE executes the statement: DELETE runs, its rows are gone
        return statement_kinds(statement[explained.end():], dialect)
    if _TEMPORARY.match(statement) or _EXPLAIN_ONLY.match(statement):
        return frozenset()  # a session's temporary table; a plan shown, the statement not run
    if _RMAN_DELETE.match(statement):
        return pattern_kinds(statement)
    kinds = _parsed_kinds(statement, dialect) | pattern_kinds(statement)
    if _DB2_CONFIG.match(statement):
        kinds -= {"update_all", "update_where"}  # Db2's UPDATE DBM CFG USING ...: a setting, not rows
    if "table_replaced" in kinds:
        kinds -= {"drop_table"}
    if "drop_database" in kinds and _THROWAWAY_DATABASE.match(statement):
        kinds -= {"drop_database"}  # a restore test's or a CI run's copy, named as such
    if "drop_other" in kinds and _retired_object(statement):
        kinds = (kinds - {"drop_other"}) | {"drop_scratch"}  # an index or view named as temporary or retired
    if kinds & {"drop_table", "truncate"} and _scratch_tables(statement):
        kinds -= {"drop_table", "truncate"}  # a session's temp table (#t, pg_temp.t) or one named as scratch
    if "delete_where" in kinds and not _EPHEMERAL_DELETE.match(statement):
        kinds = (kinds - {"delete_where"}) | {"delete_rows"}  # a business table's rows, not expired sessions
    if "update_where" in kinds and not _EPHEMERAL_UPDATE.match(statement):
        kinds = (kinds - {"update_where"}) | {"update_rows"}  # a business record changed in place: no undo
    return kinds


# rows that expire by design: sessions, caches, temporary and scratch tables
_TOP = r"(?:TOP\s*\(?\s*\d+\s*\)?\s+)?"  # T-SQL's DELETE TOP (n)
_EPHEMERAL_TABLE = (r"[\w.\[\]\"`]*?(?:sessions?|caches?|cache_\w*|\w*_cache|tmp_\w*|temp_\w*|scratch\w*|#\w+)"
                    r"[\]\"`]?\s")
_EPHEMERAL_DELETE = re.compile(r"^\s*DELETE\s+" + _TOP + r"(?:FROM\s+)?" + _EPHEMERAL_TABLE, re.IGNORECASE)
_EPHEMERAL_UPDATE = re.compile(r"^\s*UPDATE\s+" + _TOP + _EPHEMERAL_TABLE, re.IGNORECASE)


def _parsed_kinds(statement: str, dialect: str | None) -> frozenset[str]:
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
    rehearsed = _rolled_back(statements)
    return [Invocation(program="sql", args=(s,),
                       sql=statement_kinds(s, dialect) - _ROW_CHANGES if n in rehearsed else statement_kinds(s, dialect))
            for n, s in enumerate(statements)]


# what a ROLLBACK undoes in every dialect (MySQL's and Oracle's DDL commits on its own: DROP stays dropped)
_ROW_CHANGES = frozenset({"delete_where", "delete_rows", "delete_all", "update_where", "update_rows", "update_all"})


_BEGIN = re.compile(r"^\s*(?:BEGIN(?:\s+(?:TRAN|TRANSACTION|WORK))?|START\s+TRANSACTION)\s*;?\s*$", re.IGNORECASE)
_ROLLBACK = re.compile(r"^\s*ROLLBACK(?:\s+(?:TRAN|TRANSACTION|WORK))?\s*;?\s*$", re.IGNORECASE)
_END = re.compile(r"^\s*(?:COMMIT|END)\b", re.IGNORECASE)


def _rolled_back(statements: list[str]) -> set[int]:
    """The statements inside a transaction that ends in ROLLBACK (`BEGIN; DELETE ...; ROLLBACK;`): a rehearsal,
    nothing stays changed. A transaction that commits, or never ends on the line, is not one."""
    rehearsed: set[int] = set()
    opened: int | None = None
    for n, statement in enumerate(statements):
        if _BEGIN.match(statement):
            opened = n
        elif opened is not None and _ROLLBACK.match(statement):
            rehearsed.update(range(opened + 1, n))
            opened = None
        elif _END.match(statement):
            opened = None
    return rehearsed
