"""What blind sets 37 (hosting, SQL Server logistics, DigitalOcean SaaS, Kafka/Flink, a hospital's Pacemaker/DRBD,
Rook/Ceph, identity, Heroku e-commerce, an ISP, backup and storage) and 38 (GCP fintech, Vitess, a game
publisher, a pharma lab, AWS media, a Kubernetes platform, Postgres DBAs, a utility, Elastic, macOS laptops)
showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # a console's command given as a quoted argument, not through an option
    ('dsmadmc -id=admin -password="$TSM_PW" "delete volume VOL0042 discarddata=yes"', "verb-destroys"),
    ('dgmgrl sys@PROD "REMOVE DATABASE prod_stby"', "verb-destroys"),
    ('mmcli "stop server api01"', "verb-takes-down"),
    # failing over, switching over, taking over, hanging up, disconnecting
    ("orchestrator-client -c force-master-failover -alias orders", "verb-takes-down"),
    ("storage failover takeover -ofnode node-02", "verb-takes-down"),
    ("repmgr -f /etc/repmgr.conf standby switchover --siblings-follow", "verb-takes-down"),
    # how long data is kept, written as a setting: its unit read from its name
    ("kafka-configs.sh --alter --entity-type topics --entity-name clicks --add-config retention.ms=7200000",
     "retention-cut"),
    ('mysql -e "SET GLOBAL binlog_expire_logs_seconds=1800"', "retention-cut"),
    ("cqlsh -e \"ALTER TABLE t.events WITH default_time_to_live = 600;\"", "retention-cut"),
    ("whmapi1 backup_config_set backup_daily_retention=1", "retention-cut"),
    # an API told what to do by a named field, whatever the method
    ("curl -s -X POST -d '{\"command\":\"subnet4-del\",\"arguments\":{\"id\":7}}' http://kea:8000/", "verb-destroys"),
    ('curl -sk "https://fw1/api/?type=op&cmd=<request><restart><system></system></restart></request>&key=$K"',
     "verb-takes-down"),
    ("curl -s -X POST http://ksqldb:8088/ksql -d '{\"ksql\":\"DROP TABLE totals;\"}'", "verb-destroys"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'git commit -m "delete the old exporter"',  # a message, not a command
    "trap 'rm -rf \"$tmpdir\"' EXIT",  # a scratch directory cleaned up on exit
    'db2 "DROP TABLE SESSION.RECON_WORK"',  # SQL: its own rules (a session table)
    "Get-Content .\\purge.sql | Select-String 'DELETE FROM'",
    'logger -t ops "stop requested for api01"',
    "storage failover show",  # the verb names what is shown
    "pcs status resources",
    "kafka-configs.sh --alter --entity-type topics --entity-name audit --add-config retention.ms=2592000000",  # 30 days
    "curl -s 'https://storage.googleapis.com/b/o.tar.gz?X-Goog-Expires=3600&X-Goog-Signature=ab12'",
    "redis-cli SET session:42 x EX 600",
    'curl -sk "https://fw1/api/?type=op&cmd=<show><system><info></info></system></show>&key=$K"',
    "curl -s -X POST -d '{\"command\":\"config-get\"}' http://kea:8000/",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    # the data left with one copy, or none
    ('cockroach sql -e "ALTER RANGE default CONFIGURE ZONE USING num_replicas = 1;"', "copies-cut"),
    ("curl -X PUT es:9200/logs-*/_settings -d '{\"index\":{\"number_of_replicas\":0}}'", "copies-cut"),
    ("hdfs dfs -setrep -R -w 1 /warehouse", "copies-cut"),
    ("couchbase-cli bucket-edit -c cb1 --bucket orders --bucket-replica 0", "copies-cut"),
    # configuration that opens or switches off, however it is written
    ("sudo sed -i 's|<security-enabled>true</security-enabled>|<security-enabled>false</security-enabled>|' b.xml",
     "security-switched-off"),
    ("echo 'stats socket ipv4@0.0.0.0:9999 level admin' >> /etc/haproxy/haproxy.cfg", "security-switched-off"),
    ("sudo sed -i 's|^AuthType=auth/munge|AuthType=auth/none|' /etc/slurm/slurm.conf", "security-switched-off"),
    ("kubectl annotate namespace shop linkerd.io/inject=disabled --overwrite", "security-switched-off"),
    ("sudo sed -i 's/admin localhost:2019/admin 0.0.0.0:2019/' /etc/caddy/Caddyfile", "security-switched-off"),
    ("sudo sed -i 's|access_log /var/log/nginx/access.log;|access_log off;|' /etc/nginx/nginx.conf",
     "security-switched-off"),
    # everyone given access
    ("sudo fail2ban-client set sshd addignoreip 0.0.0.0/0", "verb-weakens-security"),
    ('icacls "D:\\\\Shares\\\\QA" /grant "Domain Users":F', "verb-weakens-security"),
    ("kubectl create rolebinding all-view --clusterrole=edit --group=system:authenticated -n ml", "verb-weakens-security"),
    # a service's account disabled stops the service (a person's is offboarding)
    ("Disable-ADAccount -Identity svc_backup", "verb-takes-down"),
])
def test_more_classes_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "kubectl scale deploy/api --replicas=1 -n shop",  # scaling: its own rules
    "hdfs dfs -setrep -w 3 /warehouse",
    "curl -X PUT es:9200/logs-*/_settings -d '{\"index\":{\"number_of_replicas\":2}}'",
    "sudo sed -i 's/bindIp: 0.0.0.0/bindIp: 127.0.0.1/' /etc/mongod.conf",
    "aws ec2 revoke-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 0.0.0.0/0",
    'icacls "D:\\\\Shares\\\\QA" /remove "Domain Users"',
    "aws ec2 describe-security-groups --filters Name=ip-permission.cidr,Values=0.0.0.0/0",
    "Disable-ADAccount -Identity jdoe",
])
def test_more_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("statement, rule", [
    ("DROP PUBLICATION billing_cdc;", "sql-drop-access"),
    ("DROP POLICY tenant_isolation ON invoices;", "sql-drop-access"),
    ("DROP WAREHOUSE LOADING_WH;", "sql-drop-access"),
    ("DROP TABLESPACE TS_CLAIMS_DATA", "sql-drop-database"),
    ("DROP STREAM payments_enriched DELETE TOPIC;", "sql-drop-table"),
    ("SELECT pg_drop_replication_slot('standby_eu');", "sql-replication-changed"),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'billing';", "sql-sessions-terminated"),
])
def test_sql_that_clients_stand_on_warns(statement: str, rule: str) -> None:
    assert rule in rules(statement), check_command(statement)


@pytest.mark.parametrize("statement", [
    "DROP INDEX CONCURRENTLY index_users_on_email_old;",  # a definition a migration recreates
    "SELECT pg_terminate_backend(12345);",  # one stuck session
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'"
    " AND now() - state_change > interval '10 minutes';",
])
def test_sql_look_alikes_stay_quiet(statement: str) -> None:
    assert not rules(statement), check_command(statement)


@pytest.mark.parametrize("command, rule", [
    # a rule's info verdict does not hide an action that is not on the line
    ("for ns in $(kubectl get ns -o name | grep -v kube-); do kubectl delete $ns; done", "opaque-command"),
    # everything another program's manifests list, deleted
    ("helm template payments charts/payments | kubectl delete -f -", "manifests-deleted"),
    ("istioctl manifest generate --set profile=default | kubectl delete --filename=-", "manifests-deleted"),
])
def test_beyond_rules_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "kustomize build overlays/prod | kubectl delete --dry-run=server -f -",
    "kubectl delete pod api-7d9f8 -n shop",
    "kustomize build overlays/prod | kubectl diff -f -",
])
def test_beyond_rules_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    # IBM MQ's commands through runmqsc: channels deleted, listeners stopped, queues disabled, security lifted
    ("echo \"DELETE CHANNEL(TO.PARTNER)\" | runmqsc QM1", "mq-admin-change"),
    ("echo \"STOP LISTENER(QM1.LSTR)\" | runmqsc QM1", "mq-admin-change"),
    ("echo \"ALTER QLOCAL(ORDERS.IN) PUT(DISABLED)\" | runmqsc QM1", "mq-admin-change"),
    ("echo \"ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(NONE)\" | runmqsc QM1",
     "mq-admin-change"),
    ("echo \"SET CHLAUTH('*') TYPE(BLOCKUSER) USERLIST('nobody')\" | runmqsc QM1", "mq-admin-change"),
    # RouterOS over ssh, and trust files that let every host in
    ("ssh admin@edge1 '/ip service enable telnet'", "verb-weakens-security"),
    ("ssh admin@edge1 '/user set admin password=\"\"'", "verb-weakens-security"),
    ("ssh admin@edge1 '/import file-name=change.rsc'", "unseen-script"),
    ('echo "+ +" >> /root/.rhosts', "security-switched-off"),
])
def test_consoles_and_trust_files_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "echo \"DISPLAY CHANNEL(TO.PARTNER) ALL\" | runmqsc QM1",
    "echo 'RESET CHANNEL(TO.PARTNER)' | runmqsc QM1",  # resynchronises with the partner
    "ssh admin@edge1 '/ip service print'",
    "ssh admin@edge1 '/export file=backup-2024'",
    "ip route show",
])
def test_consoles_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    # z/OS through Zowe: a subsystem's own command after its prefix, CICS through CEMT, Db2 for z/OS statements
    ('zowe zos-console issue command "-DB2P STOP DB2 MODE(FORCE)"', "zos-task-stopped"),
    ('zowe zos-console issue command "-MQP1 CLEAR QLOCAL(ORDERS.IN)"', "zos-task-stopped"),
    ('zowe zos-console issue command "-DB2P START DATABASE(DB1) SPACENAM(TS1) ACCESS(FORCE)"', "zos-access-forced"),
    ('zowe zos-console issue command "F CICSPRD1,CEMT SET FILE(ORDERS) CLOSED DISABLED"', "zos-cics-changed"),
    ('zowe db2 execute sql --query "DROP TABLESPACE DB1.TS1"', "sql-drop-database"),
])
def test_zos_through_zowe_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'zowe zos-console issue command "-DB2P DISPLAY UTILITY(*)"',
    'zowe zos-console issue command "-MQP1 DISPLAY QLOCAL(ORDERS.IN) CURDEPTH"',
    'zowe zos-console issue command "F CICSPRD1,CEMT INQUIRE FILE(ORDERS)"',
    'zowe db2 execute sql --query "SELECT COUNT(*) FROM DB1.ORDERS"',
])
def test_zos_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    # IBM i: QShell runs CL and Db2 like any shell; records replaced, journaling stopped, receivers deleted
    ("qsh -c 'system \"CLRPFM FILE(APP/ORDERS) MBR(*ALL)\"'", "ibmi-objects-deleted"),
    ('system "CPYF FROMFILE(TEST/ROSTER) TOFILE(PROD/ROSTER) MBROPT(*REPLACE)"', "ibmi-data-replaced"),
    ('system "ENDJRNPF FILE(PROD/*ALL) JRN(PROD/JRN)"', "ibmi-journaling-stopped"),
    ('system "CHGJRN JRN(PROD/JRN) JRNRCV(*GEN) DLTRCV(*YES)"', "ibmi-receivers-deleted"),
    ("system \"CHGAUT OBJ('/home/sftp/keys') USER(*PUBLIC) DTAAUT(*RWX) OBJAUT(*ALL)\"", "ibmi-authority-granted"),
])
def test_ibmi_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'system "CHGJRN JRN(PROD/JRN) JRNRCV(*GEN)"',  # a new receiver, the old one kept
    'system "CPYF FROMFILE(PROD/ORDERS) TOFILE(QTEMP/ORDERS) MBROPT(*ADD) CRTFILE(*YES)"',
    "qsh -c 'ls /home/sftp'",
])
def test_ibmi_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


@pytest.mark.parametrize("command, rule", [
    ("VAULT_SKIP_VERIFY=true vault login -method=oidc", "security-switched-off"),
    ("GOVC_INSECURE=1 govc vm.info web01", "security-switched-off"),
    ("PYTHONHTTPSVERIFY=0 python3 sync.py", "security-switched-off"),
    ('zowe zos-uss issue ssh "chmod -R 777 /u/app"', "chmod-recursive-777"),
    ("flink cancel a1b2c3d4e5f6", "verb-takes-down"),
    ('psql -c "ALTER SYSTEM SET log_statement = \'none\';"', "sql-audit-off"),
    ('db2 "STOP HADR ON DATABASE POLICYDB"', "sql-writes-blocked"),
    ('db2 "UPDATE DB CFG FOR POLICYDB USING LOGARCHMETH1 OFF"', "sql-logs-purged"),
    ('db2 "CALL SYSPROC.ADMIN_DROP_SCHEMA(\'UW\', NULL, \'ERRSCHEMA\', \'ERRTAB\')"', "sql-drop-database"),
])
def test_env_switches_carriers_and_dialects_warn(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "VAULT_ADDR=https://vault.internal:8200 vault status",
    "GOVC_INSECURE=0 govc ls /DC1/vm",
    "aws kms cancel-key-deletion --key-id alias/ledger",  # undoes a deletion
    'psql -c "ALTER SYSTEM SET log_statement = \'ddl\';"',
])
def test_env_switches_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
