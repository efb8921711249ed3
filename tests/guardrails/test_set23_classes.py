"""What blind set 23 (an airline's IBM i, logistics, a GCP marketplace, a broadcaster, city IT, an ISP, IoT and an ML
platform) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # services restarted, in any syntax
    ("sudo systemctl restart nginx", "systemctl-restart"),
    ("ansible wms -i inv -b -m service -a 'name=wms state=restarted' --forks 1", "systemctl-restart"),
    ("salt 'web07*' service.restart nginx", "systemctl-restart"),
    ("Invoke-Command -ComputerName A -ScriptBlock { Restart-Service -Name W3SVC -Force }", "systemctl-restart"),
    ("sc.exe \\\\CREWAPP03 stop CrewRosterSync", "systemctl-stop"),
    ("net stop W3SVC", "systemctl-stop"),
    # IBM i control language, directly, through PASE's system and inside SBMJOB and RUNSQL
    ("DLTLIB LIB(CREWPROD)", "ibmi-library-cleared"),
    ("CLRPFM FILE(CREWLIB/CREWSCHED) MBR(*ALL)", "ibmi-objects-deleted"),
    ("ssh qsecofr@as400 'system \"CLRPFM FILE(CREWLIB/ROSTER)\"'", "ibmi-objects-deleted"),
    ("PWRDWNSYS OPTION(*IMMED) RESTART(*NO)", "ibmi-system-down"),
    ("ENDSBS SBS(*ALL) OPTION(*IMMED)", "ibmi-all-subsystems-ended"),
    ("ENDJOB JOB(482113/CREWBAT/ROSTSYNC) OPTION(*IMMED)", "ibmi-work-ended"),
    ("INZTAP DEV(TAP01) NEWVOL(BKP001) CHECK(*NO) CLEAR(*YES)", "ibmi-tape-initialised"),
    ("CHGSYSVAL SYSVAL(QSECURITY) VALUE('20')", "ibmi-security-value-changed"),
    ("GRTOBJAUT OBJ(CREWLIB/*ALL) OBJTYPE(*FILE) USER(*PUBLIC) AUT(*ALL)", "ibmi-authority-granted"),
    ("CHGUSRPRF USRPRF(OPSUSER) USRCLS(*SECOFR) SPCAUT(*ALLOBJ *SECADM)", "ibmi-profile-empowered"),
    ("STRTCPSVR SERVER(*TELNET)", "ibmi-cleartext-server"),
    ("SBMJOB CMD(CALL PGM(CREWLIB/FIXROST)) JOB(FIXROST) JOBQ(QBATCH)", "ibmi-program-run"),
    ("RUNSQL SQL('DELETE FROM CREWLIB.DUTYPER') COMMIT(*NONE)", "sql-delete-all"),
    # database rights handed out
    ("psql -c \"CREATE ROLE incident_admin LOGIN SUPERUSER PASSWORD 'x';\"", "sql-privilege-granted"),
    ("cqlsh s -e \"CREATE ROLE ops WITH SUPERUSER = true AND LOGIN = true;\"", "sql-privilege-granted"),
    ("echo 'GRANT DBA TO crew_support;' | sqlplus -s / as sysdba", "sql-privilege-granted"),
    ("sqlcmd -S db -E -Q \"ALTER DATABASE CrewRoster SET TRUSTWORTHY ON\"", "sql-privilege-granted"),
    ("mysql -e \"UPDATE mysql.user SET Super_priv='Y' WHERE user='app'\"", "sql-privilege-granted"),
    ("echo 'ALTER USER system IDENTIFIED BY manager ACCOUNT UNLOCK;' | sqlplus -s / as sysdba", "sql-weak-password"),
    # Kubernetes' security objects are not recreated
    ("kubectl -n istio-system delete peerauthentication default", "kubectl-delete-kept"),
    ("kubectl -n cert-manager delete certificate api-acme-com-tls", "kubectl-delete-kept"),
    # protections switched off, in more names
    ("Set-OrganizationConfig -AuditDisabled $true", "security-switched-off"),
    ("Set-OrganizationConfig -OAuth2ClientProfileEnabled $false", "security-switched-off"),
    ("Set-ADAccountControl -Identity kiosk01 -PasswordNotRequired $true", "security-switched-off"),
    ("gcloud container clusters update g --region r --no-enable-network-policy", "security-switched-off"),
    ("gcloud compute project-info add-metadata --metadata serial-port-enable=TRUE", "security-switched-off"),
    ("ssh admin@rtr '/ip dns set allow-remote-requests=yes'", "security-switched-off"),
    ("isi ssh settings modify --permit-root-login true", "security-switched-off"),
    ("jupyter lab --ip=0.0.0.0 --ServerApp.disable_check_xsrf=True", "security-switched-off"),
    ("aws iot set-v2-logging-options --default-log-level DISABLED --role-arn x", "security-switched-off"),
    ("Disable-NetFirewallRule -DisplayName Block-Telnet-Inbound", "verb-weakens-security"),  # a guard, not an opening
    ("rm -rf /lustre/scratch/*", "rm-rf-path"),  # everyone's shared scratch, not a temporary directory
    # data the system deletes itself: retention cut to a day or less, a retention lock lifted
    ("influx bucket update --id 0a1b --retention 1h", "retention-cut"),
    ("bq update --expiration 3600 proj:analytics.orders", "retention-cut"),
    ("mc ilm rule add --expire-days 1 minio/checkpoints", "retention-cut"),
    ("gcloud storage buckets update gs://backups --clear-retention-period", "retention-cut"),
    # RAID controllers and Ceph's data placement
    ("storcli /c0/v1 del force", "raid-volume-destroyed"),
    ("ssacli ctrl slot=0 ld 2 delete forced", "raid-volume-destroyed"),
    ("storcli /c0/v0 start init full", "raid-volume-destroyed"),
    ("storcli /c0/e252/s4 set offline", "raid-disk-state-forced"),
    ("sudo ceph osd crush reweight osd.12 0", "ceph-data-placement-forced"),
    ("sudo ceph osd set nobackfill && sudo ceph osd set norecover", "ceph-data-placement-forced"),
    ("ceph fs fail cephfs", "ceph-data-placement-forced"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "sudo systemctl restart kubelet", "sudo systemctl restart node_exporter", "net start W3SVC", "sc query W3SVC",
    "DSPLIB LIB(CREWPROD)", "WRKACTJOB SBS(QBATCH)", "DSPFD FILE(CREWLIB/ROSTER)",
    "RUNSQL SQL('SELECT COUNT(*) FROM CREWLIB.DUTYPER')", "CHGUSRPRF USRPRF(CREWBAT) STATUS(*ENABLED)",
    "GRANT SELECT ON orders TO analyst;", "CREATE ROLE app LOGIN PASSWORD 'x';",
    "cqlsh s -e \"CREATE ROLE app WITH SUPERUSER = false AND LOGIN = true;\"",
    "kubectl -n cert-manager get certificate", "Set-OrganizationConfig -AuditDisabled $false",
    "gcloud container clusters update g --enable-network-policy", "kubectl logs x --log-level debug",
    # access taken away, insecure features removed: hardening
    "Revoke-SmbShareAccess -Name Media -AccountName Everyone -Force",
    "Remove-MailboxPermission -Identity mayor@city.gov -User helpdesk01 -AccessRights FullAccess",
    "Disable-WindowsOptionalFeature -Online -FeatureName SMB1Protocol -NoRestart",
    "balena device public-url disable 7c1f2e9", "sudo unbound-control insecure_remove partnerbank.example",
    "icacls D:\\CrewData /remove:g Everyone /T", "CLRLIB LIB(QTEMP)",
    "sqlcmd -S db -E -Q \"ALTER SERVER ROLE sysadmin DROP MEMBER [CORP\\contractor9]\"",
    "ansible wms -i inv -b -m file -a 'path=/opt/wms/run/wms.lock state=absent'",
    "influx bucket update --id x --retention 30d", "aws s3 presign s3://exports/r.csv --expires-in 900",
    "vault token create -policy=read-only -ttl=1h", "redis-cli EXPIRE k 60",
    "storcli /c0/v0 show all", "ssacli ctrl all show config", "ceph osd set noout", "ceph osd unset noout",
    "ceph osd tree", "ceph osd ok-to-stop 12",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
