"""What blind set 28 (an insurer's mainframe, logistics, streaming, a bank's Windows estate, an ISP, biotech,
GCP SaaS, Azure e-commerce, a plant and an observability team) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    # Redis: streams trimmed, consumer groups destroyed, a key that holds data deleted
    ("redis-cli -h streams.wms.internal XTRIM pick-events MAXLEN 0", "redis-stream-trimmed"),
    ("redis-cli -h s XGROUP DESTROY pick-events pickers", "redis-group-destroyed"),
    ("redis-cli -h queue-prod DEL bull:emails:wait", "redis-key-deleted"),
    # a router's configuration lines, on a console option or over ssh
    ('vtysh -c "conf t" -c "no router bgp 64512"', "verb-takes-down"),
    ('vtysh -c "clear ip bgp *"', "verb-takes-down"),
    ('vtysh -c "conf t" -c "router bgp 64512" -c "neighbor 198.51.100.1 shutdown"', "verb-takes-down"),
    ('ssh admin@pe2 "configure port 1/1/1 shutdown"', "verb-takes-down"),
    ('ssh admin@core-rtr1 "/system reset-configuration no-defaults=yes skip-backup=yes"', "router-config-reset"),
    # iRODS, ARM Complete mode, SQL through gcloud, a here-string into diskpart, admin through an API
    ("irm -rf /labZone/home/sequencing/raw", "irods-removed"),
    ("az deployment group create -g rg-shop-prod --template-file main.bicep --mode Complete", "arm-complete-mode"),
    ('gcloud spanner databases execute-sql billing --instance=p --sql="DELETE FROM Invoices WHERE true"',
     "sql-delete-all"),
    ('gcloud sql connect prod-pg-main --user=postgres <<< "DROP TABLE tenant_settings;"', "sql-drop-table"),
    ('@"\nselect disk 1\nclean\n"@ | diskpart', "diskpart-clean"),
    ("curl -X PATCH https://grafana.obs.internal/api/org/users/42 -d '{\"role\":\"Admin\"}'", "verb-weakens-security"),
    ("curl -X PUT https://os:9200/_plugins/_security/api/rolesmapping/all_access -d '{\"users\":[\"*\"]}'",
     "verb-weakens-security"),
    ("curl -X POST http://prometheus:9090/-/quit", "verb-takes-down"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "redis-cli -h cache-prod DEL lock:deploy:payments",
    "redis-cli -h redis-prod DEL ratelimit:user:84123",
    "redis-cli -h s XINFO GROUPS pick-events",
    'vtysh -c "show ip bgp summary"',
    "sudo vtysh -c 'clear ip bgp * soft in'",
    "core-rtr01(config-if)# no shutdown",
    "ils -l /labZone/home/sequencing",
    "az deployment group what-if -g rg-prod --template-file main.bicep --mode Complete",
    "az deployment group create -g rg-prod --template-file main.bicep",
    'gcloud spanner databases execute-sql billing --instance=p --sql="SELECT COUNT(*) FROM Invoices"',
    "curl -X PATCH https://grafana.obs.internal/api/org/users/42 -d '{\"role\":\"Viewer\"}'",
    '@"\nlist disk\n"@ | diskpart',
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


def test_a_carrier_that_is_also_a_sql_client_still_carries() -> None:
    assert "rm-rf-root" in rules('gcloud compute ssh vm1 --command "sudo rm -rf /var/lib/mysql"')


@pytest.mark.parametrize("command, rule", [
    ("kea-shell --host 127.0.0.1 --port 8000 --service dhcp4 lease4-wipe", "verb-destroys"),
    ("gcloud sql instances failover prod-pg-main", "failover-forced"),
    ("aws rds failover-db-cluster --db-cluster-identifier ledger-prod", "failover-forced"),
    ("s3cmd setacl --acl-public --recursive s3://vod-origin-eu/", "public-acl-set"),
    ("ichmod -r read public /labZone/home/sequencing/raw", "public-acl-set"),
    ("influx auth create --org plant-ops --all-access", "all-access-granted"),
    ("radosgw-admin user modify --uid=cdn-origin --admin", "all-access-granted"),
    ("sudo sacctmgr -i modify user where name=intern01 set adminlevel=Admin", "all-access-granted"),
    ("az keyvault set-policy --name kv --upn c@shop.com --secret-permissions all --key-permissions all",
     "all-access-granted"),
    ('Set-NetFirewallRule -DisplayName "Block Modbus from IT" -Enabled False', "firewall-block-rule-off"),
    ("rndc delzone customer-acme.net", "dns-zone-deleted"),
    ('rabbitmqctl close_all_connections "maintenance"', "broker-connections-closed"),
])
def test_more_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "gcloud sql instances describe prod-pg-main",
    "aws rds describe-db-clusters --db-cluster-identifier ledger-prod",
    "s3cmd setacl --acl-private s3://vod-origin-eu/report.csv",
    "influx auth create --org plant-ops --read-bucket 0a1b2c",
    "az keyvault set-policy --name kv --upn app@shop.com --secret-permissions get list",
    'Set-NetFirewallRule -DisplayName "Block Modbus from IT" -Enabled True',
    "rndc reload customer-acme.net",
    "rabbitmqctl list_connections",
])
def test_more_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)


def test_a_listing_piped_into_remove_item_deletes_its_entries() -> None:
    assert "rm-glob-path" in rules("Get-ChildItem -Path E:\\Recordings -Recurse | Remove-Item -Force")
    aged = "Get-ChildItem D:\\Logs\\IIS -Filter *.log | Where-Object LastWriteTime -lt (Get-Date).AddDays(-90) | Remove-Item"
    assert not rules(aged), "old logs aged out are rotation"
