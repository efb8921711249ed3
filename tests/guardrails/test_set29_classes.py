"""What blind set 29 (AWS fintech, bare-metal gaming, OpenShift government, a Windows POS estate, video
surveillance, a university, Oracle/Solaris energy trading, a CDN, a Firebase backend, a DevOps platform)
showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("Set-Service -Name WinDefend -StartupType Disabled", "security-service-disabled"),
    ("manage-bde -protectors -delete C: -type RecoveryPassword", "windows-protection-off"),
    ("mc retention clear --recursive minio-prod/evidence", "immutability-lifted"),
    ("mc version suspend minio-prod/camera-footage", "immutability-lifted"),
    ("chmod 644 /etc/krb5.keytab", "secret-file-readable"),
    ("pfexec passwd -d oracle", "password-removed"),
    ("ssh root@trdsol02 'init 5'", "host-power-systemctl"),
    ("asmcmd umount DATA", "asm-diskgroup-down"),
    ("dd if=/dev/zero of=/dev/rdsk/c0t5000CCA0123D0s2 bs=1024k", "dd-device"),
    ("ipf -Fa", "firewall-off-csf"),
    ('mysql moodle -e "ALTER TABLE mdl_logstore_standard_log ENGINE=BLACKHOLE;"', "sql-truncate"),
    ('dgmgrl / "DISABLE CONFIGURATION;"', "sql-writes-blocked"),
    ("dgmgrl / \"EDIT DATABASE trdstby SET STATE='APPLY-OFF';\"", "sql-writes-blocked"),
    ('echo "ALTER SYSTEM SET remote_os_authent=TRUE SCOPE=SPFILE;" | sqlplus -s / as sysdba', "sql-privilege-granted"),
    ("sudo -u www-data php /var/www/moodle/admin/cli/cfg.php --name=forcelogin --set=0", "security-switched-off"),
    ("sysctl -w net.ipv4.tcp_syncookies=0", "security-switched-off"),
    ("oc patch scc restricted --type=merge -p '{\"allowPrivilegedContainer\": true}'", "security-switched-off"),
    ("firebase database:set / empty.json --project prod-app --force", "cloud-db-overwritten"),
    ("gcloud firestore import gs://prod-app-backups/2024-01-01 --project prod-app", "cloud-db-overwritten"),
    ("gcloud resource-manager org-policies disable-enforce iam.disableServiceAccountKeyCreation --project p",
     "org-policy-unenforced"),
    ("consul acl token update -id anonymous -policy-name global-management", "consul-anonymous-privileged"),
    ("firewall-cmd --permanent --zone=public --set-target=ACCEPT", "firewall-zone-accept"),
    ("birdc -s /run/bird/bird.ctl disable anycast_v6", "bgp-sessions-restarted"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "Set-Service -Name Spooler -StartupType Disabled",
    "Get-Service WinDefend",
    "mc retention info minio-prod/evidence",
    "chmod 600 /etc/krb5.keytab",
    "chmod 644 /etc/nginx/nginx.conf",
    "asmcmd lsdg",
    "dd if=/dev/rdsk/c0t5000CCA0123D0s2 of=/backup/disk.img bs=1024k",
    'dgmgrl / "SHOW CONFIGURATION;"',
    "sysctl -w net.ipv4.tcp_syncookies=1",
    "firebase database:get / --project prod-app",
    "gcloud firestore export gs://prod-app-backups/2024-01-01 --project prod-app",
    "firewall-cmd --panic-off",
    'echo "disable server be_api/api03" | socat stdio /run/haproxy/admin.sock',
    "mysql moodle <<'SQL'\nSELECT id FROM mdl_user\nWHERE suspended = 1;\nSQL",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, flagged", [
    ("ufw allow from any to any port 389 proto tcp", True),
    ("ufw allow from 10.0.0.0/8 to any port 389 proto tcp", False),
    ('ansible edge_lhr -b -m shell -a "$1"', True),
    ('ansible edge_lhr -b -m shell -a "uptime"', False),
    ("kubectl apply -f - <<EOF\nkind: ClusterRoleBinding\nroleRef:\n  kind: ClusterRole\n  name: cluster-admin\n"
     "subjects:\n- kind: Group\n  name: system:authenticated\nEOF", True),
    ("kubectl apply -f - <<EOF\nkind: ClusterRoleBinding\nroleRef:\n  kind: ClusterRole\n  name: view\n"
     "subjects:\n- kind: Group\n  name: system:authenticated\nEOF", False),
])
def test_openings_and_opaque_fleet_commands(command: str, flagged: bool) -> None:
    assert bool(rules(command)) is flagged, check_command(command)
