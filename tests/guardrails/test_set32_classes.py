"""What blind set 32 (an AWS travel marketplace, a bank core on IBM i and MQ, hospital PACS/EHR, telecom OSS,
a game build farm, research HPC, Azure retail, a tape archive, municipal VMware/AD, GCP fintech) showed
missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("pyinfra inventory.py exec -- sudo rm -rf /var/lib/clickhouse", "rm-rf-root"),
    ("az sql server update -n sql-retail-prod -g rg --enable-public-network true", "security-switched-off"),
    ('sqlcmd -S x -Q "ALTER ROLE db_owner ADD MEMBER [reporting_user];"', "sql-privilege-granted"),
    ('echo "ALTER SYSTEM ENABLE RESTRICTED SESSION;" | sqlplus -s / as sysdba', "sql-writes-blocked"),
    ("db2 quiesce instance db2inst1 immediate", "sql-writes-blocked"),
    ("nohup dd if=/dev/zero of=/dev/nst0 bs=256k &", "dd-device"),
    ("sudo chmod 644 /var/mqm/qmgrs/QM_CORE01/ssl/key.kdb", "secret-file-readable"),
    ("gsutil retention clear gs://fintech-prod-audit-logs", "immutability-lifted"),
    ("mt -f /dev/nst0 rewind && mt -f /dev/nst0 weof 1", "tape-overwritten"),
    ("mkltfs --device=/dev/sg3 --force --tape-serial=A00123", "tape-overwritten"),
    ("amqsget PAYMENTS.DLQ.HOLD QM_CORE01 > /dev/null", "mq-queue-drained"),
    ("Add-MpPreference -ExclusionProcess 'powershell.exe'", "defender-exclusion"),
    ("exportfs -o rw,no_root_squash,insecure '*:/stornext/archive'", "nfs-export-open"),
    ('net conf setparm archive "guest ok" yes', "samba-guest"),
    ("ssh root@esx01.city.local 'vim-cmd vmsvc/power.off 42'", "esxi-vm-power"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "kubectl exec oss-pg-0 -n oss-db -- rm -f /tmp/circuits_export.csv",
    'db2 "DROP TABLE SESSION.RECON_WORK"',
    "irm https://studio-tools.s3.amazonaws.com/bootstrap-agent.ps1 -OutFile C:\\Temp\\bootstrap-agent.ps1",
    "mt -f /dev/nst0 status",
    'Add-MpPreference -ExclusionExtension ".mdf",".ldf"',
    "exportfs -v",
    'mysql -e "KILL QUERY 12345"',
    'mysql -h db-news-primary -e "PURGE BINARY LOGS BEFORE NOW() - INTERVAL 7 DAY;"',
    "echo 'RESET CHANNEL(CREW.TO.OPS)' | runmqsc QMCREW1",
    "ssh root@esx01.city.local 'vim-cmd vmsvc/getallvms'",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
