"""What blind set 27 (a telecom core, a hospital, a game studio, an exchange, an airline on z/OS, an HPC centre, a
retail chain on SAP, a ground station, a web host and a data platform) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # SQL dialects: partitions and chunks dropped, servers and tenants stopped, tables detached or emptied in place
    ('clickhouse-client -q "ALTER TABLE analytics.events DROP PARTITION 202401"', "sql-alter-drop"),
    ('clickhouse-client -q "SYSTEM SHUTDOWN"', "sql-writes-blocked"),
    ('clickhouse-client -q "DETACH TABLE analytics.events"', "sql-writes-blocked"),
    ('hdbsql -i 00 -d SYSTEMDB -u SYSTEM -p "$PW" "ALTER SYSTEM STOP DATABASE HXP"', "sql-writes-blocked"),
    ('db2 "ALTER TABLE RES.PNR ACTIVATE NOT LOGGED INITIALLY WITH EMPTY TABLE"', "sql-truncate"),
    ("psql -d tlm -c \"SELECT drop_chunks('frames', older_than => INTERVAL '7 days');\"", "sql-alter-drop"),
    ("trino --execute \"ALTER TABLE iceberg.s.o EXECUTE expire_snapshots(retention_threshold => '0d')\"",
     "sql-backups-purged"),
    ("db2 force application all", "sql-writes-blocked"),
    ("db2 prune history 20240101 and delete", "sql-backups-purged"),
    ('plesk db "DROP DATABASE psa"', "sql-drop-database"),
    # a root or another user's shell reading a heredoc
    ("sudo -i <<'EOF'\nsystemctl stop slurmctld\nEOF", "systemctl-stop"),
    ("su - postgres <<'EOF'\npsql -c 'DROP DATABASE orders'\nEOF", "sql-drop-database"),
    # a database's own file deleted
    ("rm -f /var/lib/asterisk/astdb.sqlite3", "rm-database-file"),
    ("iris stop IRIS quietly && rm -f /irissys/db/clinical/IRIS.DAT", "rm-database-file"),
    # find ... | xargs rm is find ... -delete
    ("lfs find /lustre/project -type f -print0 | xargs -0 rm -f", "find-delete-path"),
    ("find /data/lake -type f -name '*.parquet' | xargs rm -f", "find-delete-data"),
    # a whole queue, listed by its own lister
    ("squeue -h -o %i | xargs scancel", "queue-emptied"),
    ("exim -bp | exiqgrep -i | xargs exim -Mrm", "queue-emptied"),
    # firewalls opened, trees made world-writable, a site emptied by rsync from an empty directory
    ("iptables -P INPUT ACCEPT", "firewall-policy-accept"),
    ("csf -x", "firewall-off-csf"),
    ("chmod -R o+rwx /data/hdb", "chmod-recursive-777"),
    ("rsync -a --delete /tmp/empty/ /home/johndoe/public_html/", "rsync-delete-empty-path"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'clickhouse-client -q "SELECT partition, rows FROM system.parts WHERE table = \'events\'"',
    'plesk db "SELECT name FROM domains"',
    "db2 list applications",
    "sudo -i",
    "rm -f /tmp/test.db",
    "rm -f ./local.db",
    "find /tmp -name '*.tmp' | xargs rm -f",
    "squeue -h -u bob -t PD -o %i | xargs scancel",
    "exiqgrep -z -i | xargs -r exim -Mrm",
    "iptables -L -n",
    "csf -a 203.0.113.7",
    "chmod -R g+w /data/hdb",
    "rsync -a --delete /srv/site/ /var/www/site-copy/ --dry-run",
])
def test_look_alikes_pass(command: str) -> None:
    assert not {r for r in rules(command) if r}, check_command(command)


@pytest.mark.parametrize("command, rule", [
    # a console's own commands, in its command option or a heredoc
    ('asterisk -rx "core stop now"', "verb-takes-down"),
    ('asterisk -rx "module unload res_pjsip.so"', "verb-takes-down"),
    ('fs_cli -x "fsctl shutdown elegant"', "verb-takes-down"),
    ('asterisk -rx "database del SIP/Registry 1001"', "verb-destroys"),
    ("mccommand -a https://mirth01:8443 -u admin <<'EOF'\nchannel stop \"ADT_Inbound\"\nEOF", "verb-takes-down"),
    ("ssh netops@mx1 \"cli -c 'configure; delete protocols bgp group IX-PEERS; commit and-quit'\"", "verb-destroys"),
])
def test_console_commands_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'asterisk -rx "core show channels"',
    'fs_cli -x "show calls"',
    "iris session IRIS -U APP <<'EOF'\nwrite $data(^PATIENT(48213))\nhalt\nEOF",
    "cat > /etc/app.conf <<'EOF'\nstop_timeout 30\nEOF",
    'git commit -m "stop the consumer before the migration"',
    'docker run -e "MODE=stop all" busybox true',
])
def test_console_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    # what an option names as the action, a long option that is the verb, a method named by a verb
    ("oci compute instance action --action STOP --instance-id ocid1.instance.oc1.x", "verb-takes-down"),
    ("beegfs-ctl --removenode --nodetype=storage --nodeid=3", "verb-destroys"),
    ("iris session IRIS -U %SYS '##class(SYS.Database).DeleteDatabase(\"/db/clinical/\")'", "verb-destroys"),
    ("iris session IRIS -U HSLIB '##class(Ens.Director).StopProduction()'", "verb-takes-down"),
    ("whmapi1 suspendacct user=johndoe", "verb-takes-down"),
    # protections by their product names
    ("sed -i 's/SecRuleEngine On/SecRuleEngine Off/' /etc/apache2/conf.d/modsec2.conf", "security-switched-off"),
    # stacks down, production rebuilt, VMs rolled back, faults injected, weak keys, admin granted, nodes powered
    ("docker compose -f /opt/cosmos/compose.yaml down", "compose-stack-down"),
    ("dbt run --full-refresh --target prod", "dbt-full-refresh"),
    ("qm rollback 105 pre-upgrade", "vm-rolled-back"),
    ("tc qdisc add dev ens2f0 root netem loss 30%", "network-fault-injected"),
    ("openssl req -x509 -nodes -newkey rsa:1024 -keyout k.pem -out c.pem", "weak-key-generated"),
    ("pveum acl modify / --users support@pve --roles Administrator", "hypervisor-admin-granted"),
    ("rpower cn[0001-0512] off", "hpc-nodes-power"),
    ("mmdelsnapshot gpfs01 nightly-2024-05-01", "gpfs-deleted"),
    ('ssh cisco@pe1 "admin reload location all noprompt"', "device-reload"),
    ('snowsql -c prod -q "ALTER WAREHOUSE TRANSFORM_WH SUSPEND;"', "sql-writes-blocked"),
])
def test_named_actions_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "sapcontrol -nr 00 -function GetProcessList",
    "docker compose up -d --remove-orphans",
    "docker compose -f docker-compose.dev.yml down",
    "dbt run --full-refresh --target dev",
    "qm listsnapshot 105",
    "tc qdisc show dev ens2f0",
    "openssl req -new -newkey rsa:3072 -nodes -keyout k.pem -out r.csr",
    "rpower cn0001 stat",
    "mmlssnapshot gpfs01",
    "mongosh app --eval 'db.killOp(12345)'",
    "kafka-acls.sh --bootstrap-server k:9092 --remove --allow-principal User:legacy --operation Read --topic t --force",
    "sudo gitlab-runner verify --delete",
    "minikube delete --all --purge",
])
def test_named_action_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    ("p4 depot -d -f Art", "perforce-spec-deleted"),
    ("p4 shelve -d -c 48213", "perforce-spec-deleted"),
    ("bash /opt/runbooks/eod/$(date +%a)_step.sh", "opaque-command"),
    ('salt -N store-servers cmd.run "$1"', "opaque-command"),
    ('"select disk 0", "clean all" | diskpart', "diskpart-clean"),
])
def test_more_of_set_27(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "p4 depot -o Art", "p4 client -d -f build-agent-07-old", '"list disk", "list volume" | diskpart',
    "salt -N store-servers cmd.run 'uptime'",
])
def test_more_look_alikes_of_set_27(command: str) -> None:
    assert not rules(command), check_command(command)
