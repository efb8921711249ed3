"""What blind set 26 (an energy utility, ad-tech, small clouds, an OpenShift government, Oracle EBS, AIX/PowerHA,
VMware, a CI/CD platform, SecOps and Nutanix) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # noun.verb subcommands (acli, govc) and reverting to a snapshot
    ("acli vm.delete prod-sql-01", "verb-destroys"),
    ("acli vg.delete oracle-asm-vg", "verb-destroys"),
    ("govc snapshot.revert -vm prod-sql-01 pre-patch", "verb-destroys"),
    # AIX storage
    ("rmfs -r /oradata", "aix-filesystem-removed"),
    ("rmdev -dl hdisk5", "aix-storage-offline"),
    ("varyoffvg datavg", "aix-storage-offline"),
    ("chdev -l hdisk5 -a pv=clear", "aix-disk-changed"),
    ("chfs -a size=-50G /oradata", "aix-disk-changed"),
    # passwords handed over in the line
    ("echo 'svc:Sup3rs3cret' | sudo chpasswd", "credential-on-line"),
    ("esxcli system account set -i root -p 'VMware1!' -c 'VMware1!'", "credential-on-line"),
    ("cluster stop", "verb-takes-down"),
    ("Remove-Item -Path 'D:\\PI\\arc\\*.arc' -Force", "rm-glob-path"),
    ("allssh 'rm -rf /home/nutanix/data/logs/*'", "rm-rf-path"),
    ("sudo clamscan -r --infected --remove=yes /", "antivirus-removes"),
    ("awx-manage cleanup_jobs --days=0", "retention-cut"),
    ("mlflow gc --backend-store-uri postgresql://m@db/mlflow --older-than 0d", "ml-artifacts-purged"),  # its own rule now
    ("sqlite3 /litefs/app.db \"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;\"", "sql-durability-off"),
    ("sqlplus / as sysdba <<< \"ALTER DATABASE OPEN RESETLOGS;\"", "sql-logs-purged"),
    ("psql -c \"DROP DATABASE contest;\"", "sql-drop-database"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "acli vm.list", "govc vm.info prod-sql-01", "govc snapshot.tree -vm prod-sql-01", "git revert HEAD",
    "lsvg -l datavg", "chfs -a size=+10G /oradata", "chdev -l en0 -a mtu=9000", "chpasswd < /tmp/users.txt",
    # taking an opening away hardens: a rule open to the world, cluster-admin, a user's roles
    "doctl compute firewall remove-rules 7b1e --inbound-rules \"protocol:tcp,ports:5432,address:0.0.0.0/0\"",
    "hcloud firewall delete-rule fw-prod --direction in --protocol tcp --port 6379 --source-ips 0.0.0.0/0",
    "oc adm policy remove-cluster-role-from-user cluster-admin jsmith",
    "kcadm.sh remove-roles -r master --uusername helpdesk1 --rolename admin",
    # throwaway databases and scratch schemas; a cluster manager's status is not SQL
    "psql -h prod-db -c \"DROP DATABASE orders_restore_test_0611;\"",
    "clickhouse-client -q \"DROP TABLE IF EXISTS ads_scratch.backfill_20240610\"",
    "cluster status | grep -v UP", "clamscan -r --infected /srv", "awx-manage cleanup_jobs --days=30",
    "sqlite3 app.db \"PRAGMA journal_mode=WAL;\"", "rm -f ./*.o", "rm -f /tmp/x*",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
