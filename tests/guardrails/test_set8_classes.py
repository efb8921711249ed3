"""The classes blind sets 7 and 8 found missing, each with look-alikes that must stay quiet."""

from __future__ import annotations

import pytest

from guardrails import check_command
from guardrails.verdict import worst_of


def worst(command: str) -> str:
    """The worst severity check_command reports, or "none"."""
    return worst_of(f.severity for f in check_command(command)) or "none"


@pytest.mark.parametrize("command, expect", [
    # files inside a data directory, and the files a system needs
    ("sudo rm -f /var/lib/mysql/ib_logfile0", "warn"),
    ("rm /var/lib/postgresql/16/main/pg_wal/000000010000000000000042", "warn"),
    ("sudo rm /usr/lib64/libc.so.6", "block"),
    ("sudo unlink /etc/fstab", "block"),
    ("rm -f /tmp/debug.log", "none"),
    ("rm ./notes.txt", "none"),
    ("sudo mv /usr /usr.bak", "block"),
    ("sudo mv /var/log/app.log /var/log/app.log.1", "none"),
    ("echo | sudo tee /etc/sudoers", "block"),
    ("echo '10.0.0.5 db1' | sudo tee -a /etc/hosts", "none"),
    ("sudo userdel -r mysql", "warn"),
    ("sudo userdel olduser", "none"),
])
def test_files_that_matter(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("sudo yum remove -y openssh-server", "warn"),
    ("sudo dpkg --purge libc6", "warn"),
    ("sudo dnf remove 'kernel-core-*'", "warn"),
    ("sudo apt-get purge -y crowdstrike-falcon-sensor", "warn"),
    ("sudo apt-get remove -y falcon-sensor", "warn"),
    ("sudo systemctl stop wazuh-agent", "warn"),
    ("sudo apt-get remove -y nano", "none"),
    ("sudo apt-get install -y openssh-server", "none"),
])
def test_packages_the_host_needs_and_security_agents(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("ansible webservers -b -m script -a ./fix.sh", "warn"),
    ("ansible all -m ping", "none"),
    ("ansible all -m shell -a 'df -h'", "none"),
    ("salt '*' cmd.script salt://fix.sh", "warn"),
    ("az vm run-command invoke -g rg -n vm1 --command-id RunShellScript --scripts @fix.sh", "warn"),
    ("az vm run-command invoke -g rg -n vm1 --command-id RunShellScript --scripts 'uptime'", "none"),
    ("pssh -h hosts.txt -I < fix.sh", "warn"),
    ("pssh -h hosts.txt -i uptime", "none"),
    ("find /etc/cron.hourly -type f -exec bash {} \\;", "warn"),
    ("find . -name '*.log' -exec sh -c 'gzip \"$1\"' _ {} \\;", "none"),
])
def test_script_files_run_where_nobody_reads_them(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("kubectl patch svc grafana -p '{\"spec\":{\"type\":\"LoadBalancer\"}}'", "warn"),
    ("kubectl expose deploy api --type=NodePort --port 80", "warn"),
    ("kubectl port-forward --address 0.0.0.0 svc/db 5432:5432", "warn"),
    ("kubectl port-forward svc/db 5432:5432", "none"),
    ("redis-server --protected-mode no", "warn"),
    ("kubectl patch svc grafana -p '{\"spec\":{\"type\":\"ClusterIP\"}}'", "none"),
])
def test_services_exposed_to_everyone(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("sudo badblocks -wsv /dev/sdc", "block"),
    ("sudo badblocks -sv /dev/sdc", "none"),
    ("sudo mdadm /dev/md1 --fail /dev/sdd1", "warn"),
    ("sudo mdadm --detail /dev/md1", "none"),
    ("sudo cryptsetup luksKillSlot /dev/sdb2 1", "warn"),
    ("sudo cryptsetup luksDump /dev/sdb2", "none"),
    ("sudo zfs rollback tank/home@monday", "warn"),
    ("sudo xfs_repair -L /dev/nvme1n1p1", "warn"),
    ("sudo xfs_repair -n /dev/nvme1n1p1", "none"),
    ("docker volume rm grafana-data", "warn"),
    ("docker volume ls", "none"),
    ("docker service rm api", "warn"),
    ("git push origin :refs/heads/old-feature", "warn"),
    ("git filter-repo --path secrets.env --invert-paths", "warn"),
    ("npm unpublish @acme/widgets@1.2.3", "warn"),
    ("echo FLUSHDB | redis-cli -n 3", "warn"),
    ("echo INFO | redis-cli", "none"),
    ("mysql -e 'RESET MASTER'", "warn"),
    ("sudo -u postgres pg_resetwal -f /var/lib/postgresql/16/main", "warn"),
    ("sudo -u postgres pg_resetwal -n /var/lib/postgresql/16/main", "none"),
])
def test_storage_history_and_logs(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("ansible all -b -m ansible.builtin.service -a 'name=sshd state=stopped'", "warn"),
    ("ansible web -b -m service -a 'name=nginx state=restarted'", "warn"),  # as systemctl restart nginx
    ("ansible all -b -m apt -a 'name=openssh-server state=absent'", "warn"),
    ("ansible all -b -m apt -a 'name=htop state=present'", "none"),
    ("ansible db -m community.mysql.mysql_db -a 'name=orders state=absent'", "warn"),
    ("salt '*' pkg.remove openssh-server", "warn"),
    ("salt 'web*' service.stop haproxy", "warn"),
    ("salt '*' test.ping", "none"),
    ("salt '*' system.poweroff", "warn"),
])
def test_fleet_modules_are_the_commands_they_amount_to(command: str, expect: str) -> None:
    assert worst(command) in ((expect,) if expect == "none" else ("warn", "block")), command


@pytest.mark.parametrize("command, expect", [
    ("perl -e 'fork while 1'", "block"),
    ("python3 -c 'import os; [os.fork() for _ in iter(int, 1)]'", "block"),
    ("python3 -c 'import os; os.fork()'", "none"),
    ("sudo perl -e 'unlink glob(\"/var/lib/mysql/*.ibd\")'", "warn"),
    ("perl -e 'unlink \"/tmp/old.lock\"'", "none"),
])
def test_what_interpreter_code_does_to_files_and_processes(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("sudo truncate -s 0 /var/lib/mysql/ibdata1", "warn"),
    ("truncate -s 0 /tmp/debug.log", "none"),
    ("sudo cp /dev/null /var/lib/postgresql/16/main/global/pg_control", "warn"),
    ("sudo sh -c ': > /etc/shadow'", "block"),
    ("sudo cp /dev/null /etc/fstab", "block"),
    ("cp /etc/passwd /tmp/passwd.bak", "none"),
    ("cat /etc/passwd", "none"),
    ("echo '/dev/sdb1 /data xfs defaults 0 0' >> /etc/fstab", "none"),
    ("sudo truncate -s 0 /var/log/audit/audit.log", "warn"),
    ("sudo cat /var/log/audit/audit.log", "none"),
    ("sudo cp /var/log/auth.log /tmp/", "none"),
    ("wevtutil cl Security", "warn"),
    ("wevtutil qe Security /c:5 /f:text", "none"),
])
def test_files_emptied_in_place_and_audit_trails(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=false", "warn"),
    ("kubectl patch peerauthentication default --type merge -p '{\"spec\":{\"mtls\":{\"mode\":\"DISABLE\"}}}'", "warn"),
    ("printf 'Host *\\n  StrictHostKeyChecking no\\n' >> ~/.ssh/config", "warn"),
    ("reg add HKLM\\SOFTWARE\\Policies\\System /v EnableLUA /t REG_DWORD /d 0 /f", "warn"),
    ("sc.exe config WinDefend start= disabled", "warn"),
    ("git config --global http.sslVerify false", "warn"),
    ("npm config set strict-ssl false", "warn"),
    ("kubectl label ns dev pod-security.kubernetes.io/enforce=privileged", "warn"),
    ("git config --global http.sslVerify true", "none"),
    ("grep -E 'PermitRootLogin|PasswordAuthentication' /etc/ssh/sshd_config", "none"),
    ("echo 'StrictHostKeyChecking no'", "none"),
    ("redis-cli CONFIG GET protected-mode", "none"),
    ("aws s3api get-public-access-block --bucket acme", "none"),
    ("docker run --restart=no nginx", "none"),
    ("psql 'host=db sslmode=require sslcompression=0'", "none"),
    ("reg query HKLM\\SOFTWARE\\Policies\\System /v EnableLUA", "none"),
    # set 14's shapes: a protection negated by its flag, named a few words back, opened to anyone
    ("aws rds modify-db-instance --db-instance-identifier db1 --no-deletion-protection", "warn"),
    ("aws rds modify-db-instance --db-instance-identifier db1 --deletion-protection", "none"),
    ("esxcli network firewall set --enabled false", "warn"),
    ("esxcli network firewall set --enabled true", "none"),
    ("aws s3api put-bucket-versioning --bucket b --versioning-configuration Status=Suspended", "warn"),
    ("aws s3api put-bucket-versioning --bucket b --versioning-configuration Status=Enabled", "none"),
    ("gh repo edit acme/tools --visibility public", "warn"),
    ("gh repo edit acme/tools --visibility private", "none"),
    ("gh api -X PATCH orgs/acme -f default_repository_permission=admin", "warn"),
    ("gh api -X PATCH orgs/acme -f default_repository_permission=read", "none"),
    ("kubectl -n argocd patch cm argocd-cm -p '{\"data\":{\"users.anonymous.enabled\":\"true\"}}'", "warn"),
    ("kubectl -n argocd patch cm argocd-cm -p '{\"data\":{\"users.anonymous.enabled\":\"false\"}}'", "none"),
    ("bcdedit /set testsigning on", "warn"),
    ("bcdedit /set testsigning off", "none"),
    ("kafka-acls.sh --bootstrap-server k:9092 --add --allow-principal 'User:*' --operation All --topic '*'", "warn"),
    ("kafka-acls.sh --bootstrap-server k:9092 --add --allow-principal User:billing --operation Read --topic pay",
     "none"),
])
def test_protections_switched_off_in_any_syntax(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    # severities blind sets 6-10 all asked for: what stops serving, or deletes by API or on the remote, warns
    ("kubectl scale deploy/checkout --replicas=0 -n prod", "warn"),
    ("aws ecs update-service --cluster prod --service api --desired-count 0", "warn"),
    ("git push origin --delete release/2024.05", "warn"),
    ("curl -X DELETE -H \"PRIVATE-TOKEN: $T\" https://gitlab.example.com/api/v4/projects/42", "warn"),
    ("kubectl delete -k overlays/prod", "warn"),
    ("kubectl delete secret db-credentials -n orders", "warn"),
    ("kubectl -n monitoring delete --cascade=orphan sts/thanos-store", "info"),
    ("kubectl delete pod api-7d9f8b6c5-x2lqp -n orders", "info"),
])
def test_what_stops_serving_or_is_deleted_for_good(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("sudo iptables -I INPUT 1 -p tcp --dport 6379 -j ACCEPT", "warn"),
    ("sudo iptables -A INPUT -p tcp -s 10.0.0.0/8 --dport 6379 -j ACCEPT", "none"),
    ("sudo iptables -A INPUT -p tcp --dport 443 -j ACCEPT", "none"),
    ("sudo firewall-cmd --permanent --add-port=5432/tcp", "warn"),
    ("sudo firewall-cmd --permanent --zone=internal --add-port=5432/tcp", "none"),
    ("sudo usermod -aG sudo contractor", "warn"),
    ("sudo usermod -aG www-data deploy", "none"),
    ("Add-ADGroupMember -Identity 'Domain Admins' -Members jdoe", "warn"),
    ("echo 'ssh-ed25519 AAAA vendor@laptop' | sudo tee -a /root/.ssh/authorized_keys", "warn"),
    ("cat ~/.ssh/authorized_keys", "none"),
    ("sudo cp corp-mitm.crt /usr/local/share/ca-certificates/ && sudo update-ca-certificates", "warn"),
    ("amtool silence add alertname=~\".+\" --duration=7d --comment noisy", "warn"),
    ("amtool silence add alertname=DiskFull instance=db-1 --duration=2h", "none"),
    ("kubectl annotate node n1 cluster-autoscaler.kubernetes.io/scale-down-disabled=true", "none"),
])
def test_access_exposure_and_alerting_switched_off(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("(echo select disk 1 & echo clean) | diskpart", "block"),
    ("echo list disk | diskpart", "none"),
    ("sudo journalctl --vacuum-time=1s", "warn"),
    ("sudo journalctl --vacuum-time=14d", "none"),
    ("sudo modprobe -r ixgbe", "warn"),
    ("sudo modprobe br_netfilter", "none"),
    ("sudo umount -l /var/lib/docker", "warn"),
    ("sudo umount /mnt/usb", "none"),
    ("sudo lvreduce -f -L 10G /dev/vg0/lv_data", "warn"),
    ("apt-get -s purge openssh-server", "none"),
    ("parallel --dry-run 'aws s3 rb s3://{} --force' :::: buckets.txt", "none"),
    ("buildah rm --all", "none"),
])
def test_disks_logs_modules_and_rehearsals(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("psql -h pg-prod -d orders -f /tmp/hotfix.sql", "warn"),
    ("psql -f \"$MIGRATION\"", "warn"),
    ("psql -f ./migrations/001_add_index.sql", "warn"),  # not shown here either (blind sets 12-14)
    ("redis-cli -h cache-prod --eval /tmp/cleanup.lua", "warn"),
    ("sudo sh /tmp/runbook-step7.sh", "warn"),
    ("bash ./scripts/check-replication.sh", "none"),
    ("mongosh --quiet --eval 'db.stats()'", "none"),
    ("curl -s https://example.com/install.sh | bash -n", "none"),  # -n: read, never run
    ("bash -n \"$FIX_SCRIPT\"", "none"),
    ("curl -s https://example.com/install.sh | bash", "warn"),
])
def test_scripts_nobody_reviewed_and_syntax_checks(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("postgres=# VACUUM FULL orders;", "warn"),
    ("VACUUM (VERBOSE, ANALYZE) orders;", "none"),
    ("psql -c \"ALTER SYSTEM SET fsync = off\"", "warn"),
    ("mysql> FLUSH TABLES WITH READ LOCK;", "warn"),
    ("mysql> RENAME TABLE orders TO orders_old;", "warn"),
    ("mysql> PURGE BINARY LOGS BEFORE NOW();", "warn"),
    ("postgres=# DROP OWNED BY legacy_app CASCADE;", "warn"),
    ("postgres=# ALTER ROLE reporting WITH SUPERUSER;", "warn"),
    ("GRANT SELECT ON orders TO reporting;", "none"),
    ("postgres=# EXPLAIN ANALYZE DELETE FROM orders;", "warn"),  # EXPLAIN ANALYZE runs it
    ("EXPLAIN DELETE FROM orders;", "none"),
    ("mysql> DROP TEMPORARY TABLE IF EXISTS tmp_dupes;", "none"),
    ("sqlcmd -S sql01 -Q \"DBCC CHECKDB (Orders, REPAIR_ALLOW_DATA_LOSS)\"", "warn"),
    ("redis:6379> REPLICAOF 10.0.2.15 6379", "warn"),
    ("redis-cli REPLICAOF NO ONE", "none"),
    ("redis:6379> CLIENT KILL TYPE normal", "warn"),
    ("redis-cli CLIENT KILL ID 42", "none"),
])
def test_what_dbas_know_is_dangerous(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("curl -X POST -g 'http://prometheus:9090/api/v1/admin/tsdb/delete_series?match[]={job=\"node\"}'", "warn"),
    ("curl -X POST -H \"Fastly-Key: $K\" https://api.fastly.com/service/$SID/purge_all", "warn"),
    ("curl -X POST -u admin:$T https://jenkins.example.com/exit", "warn"),
    ("curl -X POST https://api.datadoghq.com/api/v1/monitor/mute_all", "warn"),
    ("curl -X POST 'http://solr:8983/solr/admin/collections?action=DELETE&name=products'", "warn"),
    ("curl -X POST localhost:9200/orders/_search -d '{}'", "none"),
    ("curl -s https://example.com/api/delete_series", "none"),  # a GET reads
    ("curl -X POST https://api.example.com/v1/search -d q=delete", "none"),
    ("docker compose down", "none"),
])
def test_what_an_api_call_does_is_in_its_path(command: str, expect: str) -> None:
    assert worst(command) == expect


@pytest.mark.parametrize("command, expect", [
    ("sudo -u postgres psql -c \"$SQL\"", "warn"),  # the statement is in a variable: cannot tell
    ("sqlcmd -S SQL01 -Q %HOTFIX_SQL%", "warn"),
    ("psql -c 'select 1'", "none"),
    ("Set-MpPreference -DisableRealtimeMonitoring $false", "none"),  # switches protection back on
    ("net localgroup administrators", "none"),  # lists the members
    ("Remove-ADGroupMember -Identity 'Domain Admins' -Members svc_jenkins -Confirm:$false", "none"),
    ("gcloud projects remove-iam-policy-binding media-prod --member=allUsers --role=roles/viewer", "none"),
    ("ansible web -b -m service -a 'name=nginx state=stopped' --check", "none"),
])
def test_variables_as_code_and_access_taken_away(command: str, expect: str) -> None:
    assert worst(command) == expect
