"""What blind set 24 (an insurer's mainframe, a hospital, Azure SaaS, a CDN, an AWS fintech, a telecom core, a data
platform, BSD hosting, a POS fleet and a macOS fleet) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # files deleted by find or a wildcard outside scratch areas
    ("find /pacs/archive -type f -name '*.dcm' -mtime +30 -delete", "find-delete-path"),
    ("find /srv/nfs/casefiles -type f -mtime +7 -exec rm -f {} +", "find-delete-path"),
    ("sudo find / -name '*.log' -exec rm -f {} +", "find-delete-path"),
    ("rm -f /var/spool/asterisk/monitor/*.wav", "rm-glob-path"),
    ("sudo rm -f /hana/shared/HDB/HDB00/backup/log/*", "rm-glob-path"),
    # z/OS through tsocmd, opercmd and zowe
    ("tsocmd \"DELETE 'PRD.POLICY.MASTER.KSDS' CLUSTER PURGE\"", "zos-dataset-deleted"),
    ("zowe zos-tso issue command \"DELETE 'PAY.PROD.CLEARING.GDG' GDG FORCE\"", "zos-dataset-deleted"),
    ("tsocmd \"PERMIT 'PRD.**' CLASS(DATASET) ID(*) ACCESS(ALTER)\"", "zos-racf-opened"),
    ("tsocmd \"RVARY INACTIVE DATASET(SYS1.RACFDS)\"", "zos-racf-opened"),
    ("zowe zos-tso issue command \"SETROPTS NOAUDIT(DATASET)\"", "zos-racf-opened"),
    ("opercmd \"Z EOD\"", "zos-system-halted"),
    ("opercmd \"-DB2P STOP DB2 MODE(FORCE)\"", "zos-task-stopped"),
    ("zowe zos-console issue command \"C CICSPAY1\"", "zos-task-stopped"),
    ("opercmd \"SETPROG APF,ADD,DSNAME=USER.TEST.LOADLIB,SMS\"", "zos-apf-added"),
    ("zowe zos-jobs submit local-file ./jcl/EODFIX.jcl --wait-for-output", "unseen-script"),
    # PowerShell verbs that restart, restore, close or move
    ("Restart-VM -VM MIRTH02 -Confirm:$false", "verb-takes-down"),
    ("Restore-VMSnapshot -Name 'pre-patch' -VMName FS01 -Confirm:$false", "verb-destroys"),
    ("Move-ClusterVirtualMachineRole -Name FS01 -Node HV02", "verb-takes-down"),
    # passwords written out
    ("Set-ADAccountPassword -Identity svc -Reset -NewPassword (ConvertTo-SecureString 'Summer2024!' -AsPlainText -Force)",
     "credential-on-line"),
    ("aws rds modify-db-instance --db-instance-identifier p --master-user-password 'Temp1234!'", "credential-on-line"),
    ("sudo dscl . -passwd /Users/localadmin 'password1'", "credential-on-line"),
    ("/configure system security user \"admin\" password \"admin\"", "credential-on-line"),
    # rights, defaults and protections
    ("psql \"$U\" -c \"GRANT rds_superuser TO app_rw\"", "sql-privilege-granted"),
    ("snowsql -c prod -q \"GRANT ROLE ACCOUNTADMIN TO USER dbt_ci\"", "sql-privilege-granted"),
    ("snowsql -c prod -q \"ALTER USER svc SET MINS_TO_BYPASS_MFA = 1440\"", "sql-privilege-granted"),
    ("snmp-server community public RO", "snmp-default-community"),
    ("chflags -R noschg /usr/local/www/customers", "immutable-flag-cleared"),
    ("echo 'permit nopass keepenv :staff' >> /etc/doas.conf", "sudoers-redirect"),
    ("esxcli network firewall ruleset set --ruleset-id sshServer --allowed-all true", "security-switched-off"),
    ("az webapp config set -g rg -n app --min-tls-version 1.0", "security-switched-off"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "find /var/log -name '*.gz' -mtime +30 -delete", "find /pacs/tmp/incoming -name '*.part' -mmin +120 -delete",
    "sudo find /var/lib/systemd/coredump -type f -mtime +3 -delete", "find . -name '*.pyc' -delete",
    "rm -f /var/log/app/*.gz", "rm -f /tmp/*.tmp", "rm /opt/app/run/app.pid",
    "tsocmd \"LISTCAT ENTRIES('PRD.POLICY.MASTER.KSDS') ALL\"", "opercmd \"D A,L\"", "tsocmd \"LISTUSER PAYOPS1\"",
    "zowe zos-jobs list jobs", "opercmd \"SETPROG APF,DELETE,DSNAME=USER.TEST.LOADLIB,VOLUME=TSO001\"",
    "Move-Item C:\\a C:\\b", "Restart-WebAppPool -Name StoreAPI", "ConvertTo-SecureString $pw -AsPlainText -Force",
    "aws rds modify-db-instance --master-user-password \"$PW\"", "docker login --password-stdin",
    "snmp-server community Xk29dd RO", "az webapp config set -g rg -n app --min-tls-version 1.2",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
