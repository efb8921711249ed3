"""What DBAs type that the parser alone does not judge: statements in capitals that are also shell words,
Oracle's RMAN and recycle bin, restores over a live database, weak passwords, and MongoDB shell lines
written without their prompt."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


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


@pytest.mark.parametrize("command", [
    # a session's temporary tables and tables named as scratch; retention purges; soft resets; help
    "DROP TABLE IF EXISTS scratch.tmp_recon_20240611;", "1> DROP TABLE IF EXISTS #LeaderboardStaging;",
    "DROP TABLE IF EXISTS tmp_orders_backfill_20240611;", "DROP TABLE IF EXISTS pg_temp.batch_ids;",
    "mysql> PURGE BINARY LOGS BEFORE NOW() - INTERVAL 7 DAY;",
    "core-rtr01# clear ip bgp * soft in", "terraform destroy -help", "python3 -m json.tool /tmp/payload.json",
    "mc rm --recursive --force --older-than 7d minio-prod/transcode-tmp",
    "tmsh modify ltm pool web members modify { 10.20.1.15:443 { session user-disabled } }",
])
def test_scratch_retention_and_rehearsals_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)


@pytest.mark.parametrize("command", [
    "DROP TABLE orders;", "DROP TABLE tmp_x, orders;", "TRUNCATE payments;", "DROP TABLE customers_temp_backup;",
    "mysql> PURGE BINARY LOGS TO 'mysql-bin.010';",
])
def test_real_tables_and_purges_still_warn(command: str) -> None:
    assert rules(command), command
