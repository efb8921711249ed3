"""Classes from the false negatives of the training sets (sets 4-108): a DROP of anything queries, jobs or
logins stand on warns; only objects named as temporary or retired stay at info. PowerShell's `;` inside a quoted
argument does not end its statement."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged


def rules(command: str) -> dict[str, str]:
    return {f.rule: f.severity for f in check_command(command)}


@pytest.mark.parametrize("statement", [
    "DROP USER etl_loader;",
    "mysql -e \"DROP USER 'reporting'@'%';\"",
    "sqlcmd -S sql01 -Q \"DROP LOGIN [CORP\\svc_reports]\"",
    "DROP ROLE IF EXISTS incident_admin;",
    "psql -d app -c 'DROP INDEX orders_customer_id_idx;'",
    "cockroach sql -e 'DROP INDEX payments.transactions@idx_merchant;'",
    "DROP MATERIALIZED VIEW hourly_rollup;",
    "trino --execute 'DROP VIEW hive.marts.v_daily'",
    "sqlcmd -S db01 -Q \"USE master; DROP CERTIFICATE TDE_Cert\"",
    "DROP EXTENSION timescaledb CASCADE;",
    "echo \"DROP RESTORE POINT before_patch;\" | sqlplus -s / as sysdba",
])
def test_dropping_what_clients_stand_on_warns(statement: str) -> None:
    assert rules(statement).get("sql-drop") == "warn", check_command(statement)


@pytest.mark.parametrize("statement", [
    "DROP INDEX CONCURRENTLY index_users_on_email_old;",
    "DROP INDEX CONCURRENTLY IF EXISTS idx_orders_tmp_backfill;",
    "psql -c 'DROP INDEX CONCURRENTLY IF EXISTS orders_status_idx_invalid;'",
    "DROP VIEW IF EXISTS scratch.v_check_tmp;",
])
def test_dropping_a_retired_object_is_info(statement: str) -> None:
    found = rules(statement)
    assert found.get("sql-drop-scratch") == "info" and not flagged(statement), found


@pytest.mark.parametrize("command, rule", [
    ("DROP PLUGGABLE DATABASE claimspdb INCLUDING DATAFILES;", "sql-drop-database"),
    # a single-quoted query holding `;` after a backslash path: one PowerShell statement, its SQL read whole
    ("Invoke-Sqlcmd -ServerInstance 'zvm01\\SQLEXPRESS' -Query 'DROP DATABASE ZVM;'", "sql-drop-database"),
    ("Invoke-Sqlcmd -ServerInstance 'hq\\SQL01' -Query \"TRUNCATE TABLE dbo.Orders; SELECT 1\"", "sql-truncate"),
])
def test_whole_databases_and_quoted_statements(command: str, rule: str) -> None:
    assert rules(command).get(rule) == "warn", check_command(command)


@pytest.mark.parametrize("command, hit", [
    ("sudo shred -u /etc/ssh/ssh_host_ed25519_key", True),  # keys, certificates, backups: never recoverable
    ("shred -u ~/vault-recovery/unseal-key-*.asc", True),
    ("ssh backup01 'shred -u /srv/backups/*.xml'", True),
    ("shred -n1 -u /backup/erp/*.tgz", True),
    ("shred -u /tmp/leaked-api-key.txt", False),  # a copy in scratch, destroyed on purpose
    ("shred -u ./old-api-token.txt", False),
])
def test_shred_outside_scratch_warns(command: str, hit: bool) -> None:
    found = rules(command)
    assert (found.get("shred-path") == "warn") is hit and (found.get("shred") == "info") is not hit, found


@pytest.mark.parametrize("command", [
    "octo delete-releases --project Checkout --minversion 1.0.0 --maxversion 4.9.9 --whatif --server https://octo.example.com",
    "opkg --noaction remove dnsmasq",
    "spire-server agent purge -expiredFor 720h -dryRun",
    "apt-get --simulate purge nginx",
    "choco uninstall all --whatif",
])
def test_rehearsals_spelled_other_ways_stay_quiet(command: str) -> None:
    assert not flagged(command), check_command(command)


@pytest.mark.parametrize("command, rule, severity", [
    # a CDN purge of named keys or URLs is routine; everything at once sends all traffic to the origin
    ("fastly purge --service-id SU1Z0 --key article-48213 --soft", "cdn-purged-named", "info"),
    ("akamai purge invalidate https://www.example.com/index.html", "cdn-purged-named", "info"),
    ("fastly purge --all --service-id \"$PROD_SID\"", "cdn-purged-everything", "warn"),
    ("akamai purge delete --cpcode 847261", "cdn-purged-code", "warn"),
])
def test_cdn_purges_by_scope(command: str, rule: str, severity: str) -> None:
    found = rules(command)
    assert found.get(rule) == severity and ("verb-destroys" not in found), found


@pytest.mark.parametrize("command, rule, severity", [
    # a warning silenced is not a protection switched off
    ("redis-cli -h 10.20.0.3 -a \"$REDIS_AUTH\" --no-auth-warning DBSIZE", None, None),
    ("aws rds modify-db-instance --db-instance-identifier orders --no-deletion-protection", "security-switched-off", "warn"),
    # pt-kill only reports unless told to kill
    ("pt-kill --host db-orders-primary --busy-time 30 --match-command Query --print", "pt-kill-prints", "info"),
    ("pt-kill --host db-orders-primary --busy-time 30 --match-command Query --kill", "pt-kill-kills", "warn"),
])
def test_notices_and_reports_are_not_actions(command: str, rule: str | None, severity: str | None) -> None:
    found = rules(command)
    if rule is None:
        assert not flagged(command), found
    else:
        assert found.get(rule) == severity and not set(flagged(command)) - {rule}, found
