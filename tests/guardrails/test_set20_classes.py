"""What blind set 20 (a junior's copy-paste from old wikis and post-mortems) showed missing, in classes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("mt -f /dev/nst0 erase", "tape-or-fs-erased"),
    ("newfs -U /dev/ada1p1", "newfs-device"),
    ("hdfs namenode -format", "hdfs-format"),
    ("hdfs dfsadmin -safemode enter", "hdfs-safemode"),
    ("php artisan migrate:fresh --force", "schema-rolled-back"),
    ("oci os bucket update --bucket-name reports --public-access-type ObjectRead", "object-store-public-oci"),
    ("gam all users turnoff2sv", "directory-2sv-off"),
    ("kcadm.sh add-roles -r master --uusername helpdesk --rolename admin", "broker-admin-user"),
    ("Get-Mailbox -ResultSize Unlimited | Search-Mailbox -DeleteContent -Force", "mailbox-content-deleted"),
    ("sudo dseditgroup -o edit -a guest -t user admin", "broker-admin-user"),
    ("restic -r /srv/restic-repo restore latest --target /", "backup-restore-over-root"),
    ("borg prune --keep-last=1 /mnt/backup/borg-repo", "backup-restore-over-root"),
    ('echo "[$(date +%s)] DISABLE_NOTIFICATIONS" > /var/spool/nagios/cmd/nagios.cmd', "monitoring-notifications-off"),
    ("Invoke-Expression (Get-Content .\\steps.ps1 -Raw)", "powershell-script-unseen"),
    ('echo "delete volume=Full-0042 yes" | bconsole', "backup-console-change"),
    ("yes | sudo apt-get purge 'postgresql*'", "server-package-purged"),
    ("sed -i 's/^bind 127.0.0.1.*/bind 0.0.0.0/' /etc/redis/redis.conf", "security-switched-off"),
    ("reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\SecurityProviders\\WDigest /v UseLogonCredential /t REG_DWORD "
     "/d 1 /f", "security-switched-off"),
    ("sudo defaults write /Library/Preferences/com.apple.loginwindow GuestEnabled -bool YES", "security-switched-off"),
    ("hcloud server rebuild db-master --image ubuntu-22.04", "verb-takes-down"),
    ("ibmcloud resource service-instance-delete prod-cos --recursive -f", "verb-destroys"),
    ('doctl compute firewall add-rules 84a2 --inbound-rules "protocol:tcp,ports:all,address:0.0.0.0/0"', "firewall-open-world"),
    ("ssh bastion -t ssh db2 'sudo systemctl stop postgresql'", "systemctl-stop-shared"),
    ("java -jar jenkins-cli.jar -s https://j/ -auth @creds install-plugin https://plugins.example.net/x.hpi -restart",
     "plugin-from-url"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "mt -f /dev/nst0 status", "hdfs dfsadmin -safemode get", "php artisan migrate --force", "sudo apt-get remove htop",
    "restic -r /srv/restic-repo restore latest --target /tmp/restore", "borg prune --keep-daily=7 --keep-weekly=4 /repo",
    'rm -rf "${TMPDIR:-/tmp}/myjob-$$"', "TRUNCATE TABLE staging.import_buffer;",
    "bq query --use_legacy_sql=false --dry_run 'DELETE FROM analytics.events WHERE true'", "npx prisma migrate status",
    "kubectl delete pods --field-selector=status.phase==Failed -A",
    "aws iam delete-access-key --user-name departed --access-key-id AKIAIOSFODNN7EXAMPLE",
    "ceph osd safe-to-destroy 17", "ceph osd ok-to-stop 12", "npm rebuild",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
