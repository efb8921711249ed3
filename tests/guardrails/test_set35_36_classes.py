"""What blind sets 35 (ad-tech, Azure SaaS, store POS, an ML platform, mail, DNS, Cassandra, OpenStack, CI/CD, an
MSP on FreeBSD) and 36 (RHEL/FreeIPA, Hadoop, MongoDB, a warehouse, VDI/Exchange Online, Nutanix/VMware, AWS
payments, telecom core, game live ops, Arista/Junos/PAN-OS) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # a cmdlet inside a script block is read by its own verb (Clear-, Stop-, Disable-)
    ("Get-VM | ForEach-Object { Stop-VMGuest -VM $_ -Confirm:$false }", "verb-takes-down"),
    # device configuration lines, however they are carried: Junos cli -c, Arista eAPI, Ansible *_config
    ('ssh edge01 \'cli -c "configure; set interfaces ge-0/0/1 disable; commit and-quit"\'', "verb-takes-down"),
    ('cli -c "configure; deactivate protocols ospf; commit"', "verb-takes-down"),
    ('cli -c "request system zeroize media"', "verb-destroys"),
    ("curl -sk https://leaf9/command-api -d '{\"method\":\"runCmds\",\"params\":{\"cmds\":[\"configure\","
     "\"interface Ethernet7\",\"shutdown\"]}}'", "verb-takes-down"),
    ("ansible core -m cisco.ios.ios_config -a \"lines='no ip access-group EDGE-IN in' parents='interface Gi0/1'\"",
     "verb-weakens-security"),
    ("ansible spines -m arista.eos.eos_config -a \"lines=['no router bgp 65010']\"", "verb-takes-down"),
    ('cli -c "configure; set system services telnet; commit"', "verb-weakens-security"),
    ('vtysh -c "clear bgp neighbor all"', "verb-takes-down"),
    # Hadoop's file system shell runs POSIX commands on the cluster's paths
    ("hadoop fs -chmod -R 777 /warehouse/finance", "chmod-recursive-777"),
    ("hdfs dfs -rm -r -skipTrash /data/events", "rm-rf-data"),
    # a single-dash option that is the action
    ("hdfs dfs -deleteSnapshot /data/events s2024", "verb-destroys"),
    ("Set-HVFarm -FarmName Eng -Disable", "verb-takes-down"),
    # a switch named ...Enabled turned off
    ("Set-Cluster -Cluster Prod01 -DrsEnabled:$false", "state-switched-down"),
    ("Set-OrganizationConfig -AuditDisabled $false -MailTipsEnabled $false", "state-switched-down"),
    # someone made an administrator by an option's value or a subcommand's name
    ("hammer user update --login ci_bot --admin yes", "verb-weakens-security"),
    ("couchbase-cli user-manage -c cb1 --set --rbac-username tools --roles admin", "verb-weakens-security"),
    ("Add-MailboxFolderPermission -Identity boss@x.com:\\Inbox -User temp01 -AccessRights Owner",
     "verb-weakens-security"),
    ("ncli user grant-cluster-admin-role user-name=temp01", "verb-weakens-security"),
    # a configuration written that listens everywhere, relaxes a requirement, or switches a protection's file off
    ("ssh db3 \"sudo sed -i 's/^  bindIp: .*/  bindIp: 0.0.0.0/' /etc/mongod.conf\"", "security-switched-off"),
    ("echo '<yandex><listen_host>::</listen_host></yandex>' | sudo tee /etc/clickhouse-server/config.d/l.xml",
     "security-switched-off"),
    ("sudo sed -i 's/^sslmode=verify-full/sslmode=prefer/' /etc/app/db.ini", "security-switched-off"),
    ("printf 'enabled = false;\\n' | sudo tee /etc/rspamd/local.d/antivirus.conf", "security-switched-off"),
    ("sudo sed -i 's/pam_sss.so/pam_permit.so/' /etc/pam.d/sshd", "security-switched-off"),
    ("sudo sed -i 's|<value>kerberos</value>|<value>simple</value>|' /etc/hbase/conf/hbase-site.xml",
     "security-switched-off"),
    # a database or admin port opened to any address
    ("New-NetFirewallRule -DisplayName SQL -Direction Inbound -LocalPort 1433 -Protocol TCP -Action Allow",
     "opened-to-anyone"),
    ("sudo iptables -A INPUT -p tcp --dport 6379 -s 0.0.0.0/0 -j ACCEPT", "opened-to-anyone"),
    ("aws redshift modify-cluster --cluster-identifier dw --publicly-accessible", "security-switched-off"),
    # Redis persistence switched off, a replica promoted by hand, the topology forced
    ('redis-cli -h cache1 CONFIG SET save ""', "redis-persistence-off"),
    ("redis-cli --cluster del-node r1:6379 3f2a9c", "redis-topology-forced"),
    ("sudo journalctl --vacuum-time=2h", "retention-cut"),
    ("sudo chmod 640 /etc/mongo/keyfile && sudo chmod o+r /etc/mongo/keyfile", "secret-file-readable"),
    # a custom resource (or a node object) deleted by name: an operator's cluster, fleet or notebook goes with it
    ("kubectl -n data delete flinkdeployment clickstream", "kubectl-delete-resource"),
    ("oc delete machineconfig 99-worker-custom", "kubectl-delete-resource"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "Get-VM | ForEach-Object { Get-VMGuest -VM $_ }",
    'cli -c "show interfaces ge-0/0/1 terse"',
    "curl -sk https://leaf9/command-api -d '{\"method\":\"runCmds\",\"params\":{\"cmds\":[\"show interfaces status\"]}}'",
    "ansible core -m cisco.ios.ios_config -a \"lines='ip access-group EDGE-IN in' parents='interface Gi0/1'\"",
    # help on a verb, and dry runs spelled in camel case or as the tool's own -n
    "nodetool help decommission",
    "aws rds delete-db-instance help",
    "hdfs dfs -usage rm",
    "Get-Help Remove-Mailbox -Full",
    "mongorestore --uri mongodb://staging:27017 --dryRun --drop /backups/latest/",
    "pkg delete -n postgresql15-server",
    "hdfs dfs -ls -R /data/events",
    "hdfs dfs -du -s -h /data",
    "Set-MpPreference -DisableRealtimeMonitoring $false",
    "consul maint -disable -service=api",  # maintenance switched off: back in service
    "Set-RemoteDomain Default -AutoForwardEnabled $false",  # an opening switched off
    "Update-MgUser -UserId left@x.com -AccountEnabled:$false",  # someone left
    "Remove-MailboxPermission -Identity boss@x.com -User temp01 -AccessRights FullAccess",  # taken away
    "az role assignment list --role Owner --all",
    "sudo sed -i 's/bindIp: 0.0.0.0/bindIp: 127.0.0.1/' /etc/mongod.conf",  # closed, not opened
    "sudo sed -i 's/^sslmode=prefer/sslmode=verify-full/' /etc/app/db.ini",
    "printf 'enabled = true;\\n' | sudo tee /etc/rspamd/local.d/antivirus.conf",
    "sudo iptables -A INPUT -p tcp --dport 6379 -s 10.0.0.0/8 -j ACCEPT",
    "New-NetFirewallRule -DisplayName SQL -Direction Inbound -LocalPort 1433 -RemoteAddress 10.1.0.0/16 -Action Allow",
    "aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=true",
    'redis-cli CONFIG SET save "900 1 300 10"',
    "redis-cli -h r2 REPLICAOF NO ONE",  # promoting a replica is the way out of a dead primary
    "journalctl --since '1 day ago' -u nginx",
    "kubectl delete pod web-7d9f8 -n shop",  # its controller makes another
    "kubectl delete job nightly-report-28713 -n batch",
    "kubectl delete events --field-selector reason=BackOff -n shop",
    "kubectl delete -n data flinkdeployment clickstream --dry-run=server",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "mysql -e \"ALTER USER 'app'@'%' IDENTIFIED BY 'Spring2025!'\"",
    "psql -h db1 -c \"ALTER ROLE reporting PASSWORD 'report123';\"",
    "mongosh admin --eval 'db.changeUserPassword(\"svc\", \"Welcome1\")'",
    "curl -X PUT https://os:9200/_plugins/_security/api/internalusers/ro -d '{\"password\":\"Passw0rd!\"}'",
    "gitlab-rails runner \"User.find_by_username('root').update!(password: 'hunter22', password_confirmation: 'hunter22')\"",
])
def test_passwords_written_into_code_or_statements_warn(command: str) -> None:
    assert "credential-on-line" in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "psql -c \"ALTER ROLE app PASSWORD :'pw';\"",  # a psql variable, given elsewhere
    "psql -c \"ALTER ROLE app PASSWORD NULL;\"",
    "curl -X PUT https://os:9200/_plugins/_security/api/internalusers/ro -d '{\"password\":\"$NEW_PW\"}'",
    "mongosh admin --eval 'db.changeUserPassword(\"svc\", passwordPrompt())'",
])
def test_passwords_read_from_elsewhere_pass(command: str) -> None:
    assert "credential-on-line" not in rules(command), check_command(command)
