"""What blind set 31 (a Nordic bank on Exadata, ride-hailing on Kafka/Flink/Cassandra, GxP pharma, e-learning on
DigitalOcean/Atlas, broadcast playout, a SOC, a shipping line on Informix/OpenEdge, HPC weather, a web agency,
blockchain nodes) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ('echo "DROP DATABASE cargo;" | dbaccess - -', "sql-drop-database"),
    ("echo VFJVTkNBVEUgVEFCTEUgYm9va2luZ3M7 | base64 -d | dbaccess cargo -", "encoded-code"),
    ('sqlexp -db shipdb -S 20931 -user sysprogress -command "DROP TABLE PUB.Container"', "sql-drop-table"),
    ("/opt/splunk/bin/splunk clean eventdata -index firewall -f", "siem-data-deleted"),
    ('/opt/splunk/bin/splunk search "index=edr | delete" -auth admin:x', "siem-data-deleted"),
    ("/opt/splunk/bin/splunk edit user analyst1 -role admin -auth admin:x", "siem-admin-granted"),
    ("onmode -ky", "informix-progress-down"),
    ("proshut /db/prod/shipdb -by", "informix-progress-down"),
    ("qsub -- /bin/rm -rf /lustre/wxfs/projects/climate", "rm-rf-path"),
    ('sed -i "s/APP_DEBUG=false/APP_DEBUG=true/" /home/forge/acme.com/.env', "security-switched-off"),
    ("sudo ufw allow 8545/tcp", "opened-to-anyone"),
    ("geth --http --http.addr 0.0.0.0 --http.api eth,net,web3,admin,debug,personal", "opened-to-anyone"),
    ("chmod 644 /home/sol/validator-keypair.json", "secret-file-readable"),
    ('cqlsh -e "GRANT ALL PERMISSIONS ON ALL KEYSPACES TO analytics_ro;"', "sql-privilege-granted"),
    ("kubectl -n d create rolebinding default-admin --clusterrole=admin --serviceaccount=d:default",
     "default-account-admin"),
    ("hdbsql -U K \"ALTER SYSTEM ALTER CONFIGURATION ('global.ini','SYSTEM') SET ('auditing configuration',"
     "'global_auditing_state') = 'false' WITH RECONFIGURE\"", "sql-audit-off"),
    ("curl -X POST \"https://kibana:5601/api/detection_engine/rules/_bulk_action\" -H 'kbn-xsrf: true' "
     "-d '{\"action\":\"disable\",\"query\":\"\"}'", "verb-weakens-security"),
    ("curl -X PUT \"https://es:9200/_security/role/soc\" -d '{\"cluster\":[\"all\"],\"indices\":[]}'",
     "verb-weakens-security"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    'echo "SELECT COUNT(*) FROM bookings;" | dbaccess cargo -',
    "zcat dump.sql.gz | psql app",
    '/opt/splunk/bin/splunk search "index=edr | stats count"',
    "onstat -u",
    "sudo ufw allow from 10.0.0.0/8 to any port 8545 proto tcp",
    "chmod 600 /home/sol/validator-keypair.json",
    "kubectl -n d create rolebinding ci-view --clusterrole=view --serviceaccount=d:ci",
    "wp transient delete --expired",
    "vault read sys/mounts/transit/tune",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
