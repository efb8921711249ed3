"""What DBAs type that the parser alone does not judge: statements in capitals that are also shell words,
Oracle's RMAN and recycle bin, restores over a live database, weak passwords, and MongoDB shell lines
written without their prompt."""

from __future__ import annotations

import pytest

from guardrails import check_command


def rules(command: str) -> list[str]:
    return [f.rule for f in check_command(command) if f.severity in ("warn", "block")]


@pytest.mark.parametrize("command, rule", [
    ("SQL> SHUTDOWN ABORT", "sql-writes-blocked"),
    ("SHUTDOWN IMMEDIATE;", "sql-writes-blocked"),
    ("SET GLOBAL read_only = ON;", "sql-writes-blocked"),
    ("SET GLOBAL super_read_only = 1;", "sql-writes-blocked"),
    ("REINDEX DATABASE app;", "sql-table-locked"),
    ("RESTORE DATABASE Payroll FROM DISK = N'\\\\backup01\\sql\\payroll.bak' WITH REPLACE;", "sql-restored-over"),
    ("PURGE DBA_RECYCLEBIN;", "sql-backups-purged"),
    ("RMAN> DELETE NOPROMPT BACKUP;", "sql-backups-purged"),
    ("GRANT DBA TO PUBLIC;", "sql-privilege-granted"),
    ("ALTER USER postgres WITH PASSWORD 'postgres';", "sql-weak-password"),
    ("CREATE USER tmp WITH PASSWORD 'tmp';", "sql-weak-password"),
    ("db.getCollection('events').drop()", "mongo-drop"),
    ("db.fsyncLock()", "mongo-takes-down"),
    ("rs.stepDown(60)", "mongo-takes-down"),
    ('db.createUser({user: "tmp", pwd: "x", roles: ["root"]})', "mongo-root-user"),
])
def test_dba_statements_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "set -euo pipefail", "SET search_path TO app;", "SET GLOBAL read_only = OFF;",
    "REINDEX TABLE CONCURRENTLY orders;", "RESTORE DATABASE Payroll_check FROM DISK = N'x.bak' WITH NORECOVERY;",
    "RMAN> DELETE NOPROMPT OBSOLETE;", "GRANT SELECT ON reports TO PUBLIC;",
    "ALTER USER app WITH PASSWORD 'k3!9dfa-Vq81-long';", "rs.status()", "db.events.find().limit(5)",
    'db.createUser({user: "reporter", pwd: passwordPrompt(), roles: [{role: "read", db: "app"}]})',
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
