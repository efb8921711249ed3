"""What blind sets 49 (Heroku/RDS MySQL, a council's Windows estate, a PBS/BeeGFS cluster, Linkerd/CockroachDB,
broadcast playout storage, ClickHouse/Kafka/Druid, a campus network, mainframe batch and MQ, GitLab, a Debian
VPS fleet), 50 (Moodle, Hyper-V clusters, Flink/Pulsar, the HashiCorp stack, bare metal, DynamoDB/Cognito,
MongoDB, core routers, WordPress hosting, Crossplane/Karpenter) and 52 (Azure Postgres/AKS, Exchange and
Microsoft 365, time series, research storage, IoT fleets, AIX, Cassandra/Elasticsearch, AWS edge, Nomad/Podman,
small-office firewalls) showed missing, as classes, each with look-alikes that must stay quiet. Every class also
recurs in earlier sets or in another estate's dialect."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


LISTED_KINDS_WARN = [
    # `kubectl get KIND -o name | ... | xargs kubectl delete`: the names carry their kind
    ("kubectl get ns -o name | grep -v kube- | xargs kubectl delete", "kubectl-delete-namespace"),
    ("kubectl get ns -o name | grep -v -E 'kube-|default' | xargs -r kubectl delete", "kubectl-delete-namespace"),
    ("kubectl get pv -o name | grep cockroach | xargs kubectl delete", "kubectl-delete-storage"),
    ("oc get namespaces -o name | grep -v openshift | xargs oc delete", "kubectl-delete-namespace"),
    ("kubectl get ns -o name | grep -v kube- | sudo xargs kubectl delete", "kubectl-delete-namespace"),  # (through sudo)
]

LISTED_KINDS_LOOK_ALIKES_PASS = [
    "kubectl get pods -o name | grep Evicted | xargs kubectl delete",  # pods a controller recreates
    "kubectl get pods -n prod --field-selector=status.phase=Failed -o name | xargs -r kubectl delete -n prod",
    "kubectl get ns -o name | grep -v kube- | xargs -n1 kubectl describe",
]

REMOTE_SHELL_QUOTING_WARN = [
    # a carrier that hands its words to a remote shell: the quoted argument is one argument to the writer
    ("heroku run rails runner 'Review.where(status: \"spam\").delete_all' -a reviews-prod", "rails-console-destroys"),
    # Ci:: is GitLab's namespace, not a throwaway CI target
    ("sudo gitlab-rails runner 'Ci::JobArtifact.where(\"created_at < ?\", 30.days.ago).find_each(&:destroy!)'",
     "rails-console-destroys"),
]

REMOTE_SHELL_LOOK_ALIKES_PASS = [
    "heroku run rails runner 'puts Review.where(status: \"spam\").count' -a reviews-prod",
    "sudo gitlab-rails runner \"puts Ci::Runner.instance_type.count\"",
]

XML_API_WARN = [
    # PAN-OS's XML API writes through a GET (type=config&action=set|edit); `<x>` bodies
    ("curl -sk \"https://fw1/api/?type=config&action=set&xpath=/config/mgt-config/users/entry[@name='tmp']"
     "&element=<permissions><role-based><superuser>yes</superuser></role-based></permissions>&key=$K\"",
     "verb-weakens-security"),
    ("curl -sk \"https://fw1/api/?type=config&action=set&xpath=/config/devices/entry/vsys/entry/rulebase/security"
     "/rules/entry[@name='deny-in']&element=<disabled>yes</disabled>&key=$K\"", "verb-weakens-security"),
    ("curl -k \"https://fw2/api/?type=config&action=edit&xpath=/config/devices/entry/vsys/entry/rulebase/security"
     "/rules/entry[@name='ot-to-it']/log-end&element=<log-end>no</log-end>&key=$K\"", "verb-weakens-security"),
    # a body that makes someone a superuser, in NetBox's and Okta's words
    ("curl -X PATCH -H \"Authorization: Token $T\" https://netbox/api/users/users/12/ -d '{\"is_superuser\": true}'",
     "verb-weakens-security"),
    ("curl -s -X POST -H \"Authorization: SSWS $T\" -d '{\"type\":\"SUPER_ADMIN\"}' "
     "https://acme.okta.com/api/v1/users/00u1/roles", "verb-weakens-security"),
]

XML_API_LOOK_ALIKES_PASS = [
    "curl -k \"https://fw1/api/?type=config&action=get&xpath=/config/devices/entry/vsys/entry/rulebase/security&key=$K\"",
    "curl -k \"https://fw1/api/?type=config&action=show&xpath=/config/mgt-config/users&key=$K\"",
    "curl -s -H \"Authorization: Token $T\" https://netbox/api/users/users/?is_superuser=true",
    "curl -X PATCH -H \"Authorization: Token $T\" https://netbox/api/users/users/12/ -d '{\"is_superuser\": false}'",
]

MAINFRAME_LINES_WARN = [
    # TSO/RACF and operator console commands typed bare, as a mainframe runbook lists them
    ("PERMIT 'PROD.CLAIMS.**' CLASS(DATASET) ID(*) ACCESS(ALTER)", "zos-racf-opened"),
    ("ALTDSD 'PROD.**' UACC(ALTER)", "zos-racf-opened"),
    ("SETROPTS NOPROTECTALL", "zos-racf-opened"),
    ("HBDELETE 'PROD.CLAIMS.MASTER' ALL", "zos-backups-deleted"),
    ("V 0A80,OFFLINE", "zos-task-stopped"),
    ("Z EOD", "zos-system-halted"),
    ("$PJES2,ABEND", "zos-task-stopped"),
    ("-DB2P STOP DATABASE(CLAIMSDB)", "zos-task-stopped"),
    ("F CICSPROD,CEMT SET FILE(POLMAST) CLOSED DISABLED", "zos-cics-changed"),
    # IBM MQ commands typed without runmqsc around them
    ("CLEAR QLOCAL(SYSTEM.DEAD.LETTER.QUEUE)", "mq-admin-change"),
    ("ALTER QMGR CONNAUTH(' ')", "mq-admin-change"),
]

MAINFRAME_LOOK_ALIKES_PASS = [
    "$DJ1234", "$D I", "D A,L", "LISTUSER JSMITH", "RLIST FACILITY BPX.SUPERUSER", "-DB2P DISPLAY DATABASE(CLAIMSDB)",
    "ALTDSD 'PROD.**' UACC(NONE)", "HLIST DSNAME(PROD.X) BCDS", "DISPLAY QLOCAL(CLAIMS.IN) CURDEPTH",
    "DIS CHSTATUS(*)", "C",
]

CONFIGURATION_EDITS_WARN = [
    # an in-place edit whose new text weakens: SMB1's dialect, privileged containers, a key in brackets, Ruby's =>,
    # a value list, a camelCase loosening, an address range before the s command, a back-reference, a value emptied
    ("sudo sed -i 's/server min protocol = SMB2/server min protocol = NT1/' /etc/samba/smb.conf", "security-switched-off"),
    ("sudo sed -i 's/^\\(\\s*server min protocol\\).*/\\1 = NT1/' /etc/samba/smb.conf", "security-switched-off"),
    ("sudo sed -i 's/privileged = false/privileged = true/' /etc/gitlab-runner/config.toml", "security-switched-off"),
    ("sudo sed -i \"s/^nginx\\['redirect_http_to_https'\\] = true/nginx['redirect_http_to_https'] = false/\" "
     "/etc/gitlab/gitlab.rb", "security-switched-off"),
    ("sudo sed -i 's/ssl_verification_mode => \"full\"/ssl_verification_mode => \"none\"/' /etc/logstash/conf.d/out.conf",
     "security-switched-off"),
    ("sudo sed -i 's/^druid.auth.authenticatorChain=.*/druid.auth.authenticatorChain=[\"allowAll\"]/' "
     "/opt/druid/conf/common.runtime.properties", "security-switched-off"),
    ("sed -i 's/^tlsAllowInsecureConnection=false/tlsAllowInsecureConnection=true/' conf/client.conf",
     "security-switched-off"),
    ("sudo sed -i '/^\\[http\\]/,/^\\[/ s/auth-enabled = true/auth-enabled = false/' /etc/kapacitor/kapacitor.conf",
     "security-switched-off"),
    ("sed -i 's/^ssl.endpoint.identification.algorithm=.*/ssl.endpoint.identification.algorithm=/' client.properties",
     "security-switched-off"),
    ("sed -i 's/^disable_functions =.*/disable_functions =/' /etc/php/8.2/fpm/php.ini", "security-switched-off"),
    ("sudo sed -i 's/^hostssl/host/' /etc/postgresql/15/main/pg_hba.conf", "security-switched-off"),
    ("sudo sed -i 's/^-l 127.0.0.1/-l 0.0.0.0/' /etc/memcached.conf", "security-switched-off"),
    ("sudo sed -i 's/^#server.host: \"localhost\"/server.host: \"0.0.0.0\"/' /etc/kibana/kibana.yml", "security-switched-off"),
    # a security tool's own switches, in its own file
    ("sudo sed -i 's/\"disable_events\": \"false\"/\"disable_events\": \"true\"/' /etc/osquery/osquery.conf",
     "security-switched-off"),
    ("sudo sed -i 's|<disabled>no</disabled>|<disabled>yes</disabled>|' /var/ossec/etc/ossec.conf", "security-switched-off"),
    ("sed -i 's/^\\(\\s*stats auth\\).*/\\1 admin:admin/' /etc/haproxy/haproxy.cfg", "security-switched-off"),
    ("sudo yq -i '.[\"xpack.security.enabled\"] = false' /etc/elasticsearch/elasticsearch.yml", "security-switched-off"),
    # configuration text written to a file
    ("printf '[media]\\n   path = /mnt/media\\n   guest ok = yes\\n' | sudo tee -a /etc/samba/smb.conf",
     "security-switched-off"),
    ("echo 'DEFAULT Auth-Type := Accept' | sudo tee -a /etc/freeradius/3.0/mods-config/files/authorize",
     "security-switched-off"),
    ("echo 'skipACL=yes' | sudo tee -a /opt/zookeeper/conf/zoo.cfg", "security-switched-off"),
    ("sudo tee /etc/nomad.d/acl.hcl <<< 'acl { enabled = false }'", "security-switched-off"),
    ("echo '{\"default\":[{\"type\":\"insecureAcceptAnything\"}]}' | sudo tee /etc/containers/policy.json",
     "security-switched-off"),
    ("echo 'pattern readwrite #' | sudo tee -a /etc/mosquitto/acl", "security-switched-off"),
    ("echo 'PublishPort=0.0.0.0:6379:6379' | sudo tee -a /etc/containers/systemd/redis.container", "security-switched-off"),
    ("echo 'management 0.0.0.0 7505' | sudo tee -a /etc/openvpn/server/server.conf", "security-switched-off"),
    ("printf 'xpack.security.authc.anonymous.roles: superuser\\n' | sudo tee -a /etc/elasticsearch/elasticsearch.yml",
     "security-switched-off"),
]

CONFIGURATION_LOOK_ALIKES_PASS = [
    "sudo sed -i 's/server min protocol = NT1/server min protocol = SMB2/' /etc/samba/smb.conf",
    "sudo sed -i 's/privileged = true/privileged = false/' /etc/gitlab-runner/config.toml",
    "sed -i 's/^tlsAllowInsecureConnection=true/tlsAllowInsecureConnection=false/' conf/client.conf",
    "sed -i 's/^ssl.endpoint.identification.algorithm=$/ssl.endpoint.identification.algorithm=https/' client.properties",
    "sudo sed -i 's/^host /hostssl /' /etc/postgresql/15/main/pg_hba.conf",
    "sudo sed -i 's/^-l 0.0.0.0/-l 127.0.0.1/' /etc/memcached.conf",
    "sudo sed -i 's|<disabled>yes</disabled>|<disabled>no</disabled>|' /var/ossec/etc/ossec.conf",
    "sudo sed -i 's/^#\\?MaxRetentionSec=.*/MaxRetentionSec=1month/' /etc/systemd/journald.conf",
    "sudo yq -i '.[\"xpack.security.enabled\"] = true' /etc/elasticsearch/elasticsearch.yml",
    "yq '.[\"xpack.security.enabled\"]' /etc/elasticsearch/elasticsearch.yml",
    "printf '[media]\\n   path = /mnt/media\\n   guest ok = no\\n' | sudo tee -a /etc/samba/smb.conf",
    "echo 'skipACL=no' | sudo tee -a /opt/zookeeper/conf/zoo.cfg",
    "echo 'pattern read $SYS/#' | sudo tee -a /etc/mosquitto/acl",
    "echo 'PublishPort=127.0.0.1:6379:6379' | sudo tee -a /etc/containers/systemd/redis.container",
    "Invoke-VMScript -VM web-03 -ScriptText 'uptime' -GuestUser root -GuestPassword $pw",
    "Set-ADAccountControl -Identity svc_hl7 -DoesNotRequirePreAuth $false",
    "powershell -ExecutionPolicy RemoteSigned -File C:\\ops\\report.ps1",
]

DEVICES_AND_ACCESS_WARN = [
    # telnet switched on, in every device's words
    ("telnet-server", "verb-weakens-security"),
    ("telnet server enable", "verb-weakens-security"),
    ("/configure system security telnet-server", "verb-weakens-security"),
    ("set deviceconfig system service disable-telnet no", "verb-weakens-security"),
    ("telnet vrf default ipv4 server max-servers 10", "verb-weakens-security"),
    ("ansible pe -m cisco.ios.ios_config -a \"lines='transport input telnet ssh' parents='line vty 0 4'\"",
     "verb-weakens-security"),
    # Huawei VRP's undo and reset, SR OS and PAN-OS states, protections removed
    ("undo bgp 65001", "verb-takes-down"),
    ("undo peer 198.51.100.9", "verb-takes-down"),
    ("reset bgp all", "verb-takes-down"),
    ("reset saved-configuration", "verb-takes-down"),
    ("undo info-center enable", "verb-weakens-security"),
    ("/configure port 1/1/c1/1 admin-state disable", "verb-takes-down"),
    ("set network interface ethernet ethernet1/1 link-state down", "verb-takes-down"),
    ("no dhcp-snooping", "verb-weakens-security"),
    ("no password all", "verb-weakens-security"),
    ("snmp-agent community write cipher public", "verb-weakens-security"),
    ("erase flash primary", "device-wipe"),
    # a vendor's default password, set
    ("racadm set iDRAC.Users.2.Password calvin", "security-switched-off"),
    ("emqx ctl admins passwd admin public", "security-switched-off"),
    ("local-user tmpadmin password irreversible-cipher Huawei@123", "security-switched-off"),
    ("ldappasswd -x -H ldap://ldap01 -D cn=admin,dc=x -w \"$PW\" -s Welcome1 \"uid=jdoe,ou=people,dc=x\"",
     "security-switched-off"),
    ("ALTUSER CLMBATCH PASSWORD(WELCOME1) NOEXPIRED", "security-switched-off"),
    # a firewall rule that lets any source in
    ("access-rule ipv4 from WAN to LAN action allow source address any service any destination address any",
     "verb-weakens-security"),
    ("FastCli -p 15 -c $'configure\\nip access-list MGMT-IN\\n5 permit ip any any'", "verb-weakens-security"),
    ("curl -s -X POST https://fw01/api/firewall/filter/addRule -d '{\"rule\":{\"action\":\"pass\",\"interface\":\"wan\","
     "\"source_net\":\"any\",\"destination_net\":\"any\"}}'", "verb-weakens-security"),
    ("curl -k -X PUT https://fw01/api/v2/cmdb/firewall/policy/12 -d '{\"srcaddr\":[{\"name\":\"all\"}],"
     "\"service\":[{\"name\":\"ALL\"}]}'", "verb-weakens-security"),
    # every principal
    ("consul intention create -allow '*' '*'", "verb-weakens-security"),
    ("pulsar-admin namespaces grant-permission analytics/clicks --role '*' --actions produce,consume",
     "verb-weakens-security"),
    ("bin/zkCli.sh -server zk1:2181 setAcl -R / world:anyone:cdrwa", "verb-weakens-security"),
    ("qmgr -c \"set server managers += *@*\"", "verb-weakens-security"),
    ("globus endpoint permission create \"$EP:/clinical/\" --permissions r --all-authenticated", "verb-weakens-security"),
    # MongoDB statements and Redis settings that lose data or stall clients
    ("db.players.aggregate([{$match: {region: \"eu\"}}, {$out: \"players\"}])", "mongo-drop"),
    ("db.match_history.createIndex({createdAt: 1}, {expireAfterSeconds: 0})", "mongo-drop"),
    ("cfg = rs.conf(); cfg.members = [cfg.members[0]]; rs.reconfig(cfg, {force: true})", "mongo-takes-down"),
    ("db.adminCommand({removeShard: \"shard03\"})", "mongo-takes-down"),
    ("redis-cli -h redis-prod CONFIG SET maxmemory-policy allkeys-lru", "redis-memory-changed"),
    ("redis-cli -h redis-prod CLIENT PAUSE 60000", "redis-clients-paused"),
]

DEVICES_AND_ACCESS_LOOK_ALIKES_PASS = [
    "no telnet-server", "undo telnet server enable", "show telnet", "telnet 10.0.0.1 25", "display bgp peer",
    "show running-config | include telnet", "delete system services telnet", "transport input ssh",
    "display current-configuration | include info-center", "reset counters interface GigabitEthernet0/0/1",
    "show port 1/1/c1/1", "set deviceconfig system service disable-telnet yes", "dhcp-snooping",
    "racadm get iDRAC.Users.2.UserName", "racadm set iDRAC.Users.2.Password \"$IDRAC_PW\"",
    "emqx ctl admins passwd admin \"$NEW_PW\"", "lssec -f /etc/security/user -s default -a minlen",
    "snmpwalk -v2c -c public 10.0.0.1 sysUpTime",
    "access-rule ipv4 from WAN to LAN action deny source address any service any destination address any",
    "FastCli -p 15 -c 'show ip access-lists MGMT-IN'", "5 deny ip any any log",
    "curl -s https://fw01/api/firewall/filter/searchRule?source_net=any",
    "permit tcp 10.0.0.0 0.255.255.255 any eq 22",
    "consul intention create -deny '*' '*'", "consul intention check web db",
    "pulsar-admin namespaces permissions analytics/clicks", "bin/zkCli.sh -server zk1:2181 getAcl /",
    "qmgr -c \"list server managers\"",
    "db.players.aggregate([{$match: {region: \"eu\"}}, {$count: \"n\"}])",
    "db.sessions.createIndex({createdAt: 1}, {expireAfterSeconds: 2592000})", "db.adminCommand({listShards: 1})",
    "rs.conf()", "redis-cli -h redis-prod CONFIG GET maxmemory-policy", "redis-cli -h redis-prod CLIENT LIST",
]

CARRIED_WARN = [
    # an SQL statement given to a tool's query option, whatever the tool
    ("aql -h aerospike-prod -c \"TRUNCATE bidder\"", "sql-truncate"),
    ("cbq -e http://cb01:8093 -u Administrator -p \"$CB_PW\" -s \"DELETE FROM player_profiles;\"", "sql-delete-all"),
    ("ksql http://ksqldb:8088 -e \"DROP TABLE card_totals;\"", "sql-drop-table"),
    ("Invoke-DbaQuery -SqlInstance sql-prod01 -Database Logistics -Query \"DROP TABLE dbo.RouteHistory\"", "sql-drop-table"),
    ("vtctldclient --server vtctld:15999 ApplySchema --sql \"DROP TABLE fares\" travel", "sql-drop-table"),
    # a command of consequence in a quoted argument of a fan-out or terminal tool
    ("isi_for_array -s 'shutdown -p now'", "host-power"),
    ("xdsh compute 'systemctl stop slurmd'", "systemctl-stop"),
    ("dcli -g ~/cell_group -l root \"cellcli -e drop griddisk all prefix=DATA force\"", "verb-destroys"),
    ("tmux send-keys -t prod:0 'DROP DATABASE app;' Enter", "sql-drop-database"),
    ("iocage exec web099 'rm -rf /usr/local/www'", "rm-rf-path"),
    ("screen -S db -X stuff $'systemctl stop mysqld\\n'", "systemctl-stop-shared"),
    ("xdsh all 'rm -rf /srv/run'", "rm-rf-path"),  # (the Enter typed is stripped, not the path's last letter)
    # a device told what to do in a JSON field, over MQTT or a provisioning API
    ("mosquitto_pub -h mqtt.fleet.io -t 'fleet/dev-0042/cmd' -m '{\"action\":\"reboot\"}'", "verb-takes-down"),
    ("mosquitto_pub -h mqtt -t 'fleet/all/cmd' -q 1 -m '{\"action\":\"factory_reset\"}'", "verb-destroys"),
    ("openstack baremetal node clean n4 --clean-steps '[{\"interface\": \"deploy\", \"step\": \"erase_devices\"}]'",
     "verb-destroys"),
    # AWS: MFA taken away, the WAF detached, a listener given TLS 1.0, a resize now, a bare --disabled, admin-delete-*
    ("aws iam deactivate-mfa-device --user-name ops-admin --serial-number arn:aws:iam::1:mfa/ops-admin", "mfa-removed"),
    ("aws wafv2 disassociate-web-acl --resource-arn arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/app/a/b",
     "waf-detached"),
    ("aws elbv2 modify-listener --listener-arn $L --ssl-policy ELBSecurityPolicy-TLS-1-0-2015-04", "elb-legacy-tls"),
    ("aws rds modify-db-instance --db-instance-identifier bookings-prod --db-instance-class db.r6g.large "
     "--apply-immediately", "rds-resized-now"),
    ("aws route53 update-health-check --health-check-id 8f1e2d3c --disabled", "state-switched-down"),
    ("aws globalaccelerator update-accelerator --accelerator-arn $GA --no-enabled --region us-west-2",
     "state-switched-down"),
    ("aws cognito-idp admin-delete-user --user-pool-id eu-west-1_Ab12 --username 7c9e6679", "verb-destroys"),
]

CARRIED_LOOK_ALIKES_PASS = [
    "aql -h aerospike-prod -c \"SELECT * FROM bidder.users LIMIT 5\"",
    "ksql http://ksqldb:8088 -e \"SHOW STREAMS;\"",
    "Select-String -Path .\\migrations\\*.sql -Pattern 'DROP TABLE'",
    "psql -d shop -c \"BEGIN; DELETE FROM orders WHERE id = 42; ROLLBACK;\"",
    "tmpdir=$(mktemp -d) && trap 'rm -rf \"$tmpdir\"' EXIT",
    "git commit -m \"rm -rf the old build dir\"",
    "tmux new -s logs 'tail -f /var/log/syslog'",
    "xdsh compute 'systemctl status slurmd'",
    "mosquitto_pub -h mqtt -t 'fleet/dev-1/cmd' -m '{\"action\":\"status\"}'",
    "mosquitto_sub -h mqtt -t 'fleet/#' -v",
    "aws iam list-mfa-devices --user-name ops-admin",
    "aws wafv2 get-web-acl-for-resource --resource-arn arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/app/a/b",
    "aws elbv2 modify-listener --listener-arn $L --ssl-policy ELBSecurityPolicy-TLS13-1-2-2021-06",
    "aws rds modify-db-instance --db-instance-identifier prod-pg --deletion-protection --apply-immediately",
    "aws rds modify-db-instance --db-instance-identifier bookings-prod --db-instance-class db.r6g.large",
    "ipa user-find --disabled=true --sizelimit=0",
    "aws cognito-idp admin-get-user --user-pool-id eu-west-1_Ab12 --username 7c9e6679",
]

KUBERNETES_WARN = [
    ("kubectl -n rook-ceph patch cephcluster rook-ceph --type merge "
     "-p '{\"spec\":{\"cleanupPolicy\":{\"confirmation\":\"yes-really-destroy-data\"}}}'", "rook-cleanup-confirmed"),
    ("kubectl apply -f /tmp/hotpatch.yaml", "kubectl-apply-scratch"),
    ("kubectl get csr -o name | xargs kubectl certificate approve", "csr-approved-in-bulk"),
    ("oc get csr -o name | xargs oc adm certificate approve", "csr-approved-in-bulk"),
    ("kubectl -n kube-system create token admin-user --duration=8760h", "long-lived-token"),
    ("kubectl patch fleetautoscaler eu -n gs --type merge -p '{\"spec\":{\"policy\":{\"buffer\":{\"maxReplicas\":0}}}}'",
     "kubectl-patch-replicas-zero"),
    ("echo \"$PATCH_B64\" | base64 -d | kubectl apply -f -", "opaque-command"),
    ("kubectl apply -f - <<< \"$MANIFEST\"", "opaque-command"),
]

KUBERNETES_LOOK_ALIKES_PASS = [
    "kubectl -n rook-ceph get cephcluster rook-ceph -o jsonpath='{.spec.cleanupPolicy}'",
    "kubectl apply -f /tmp/hotpatch.yaml --dry-run=server", "kubectl diff -f /tmp/hotpatch.yaml",
    "kubectl apply -f deploy/overlays/prod/", "kubectl certificate approve csr-8x2k", "kubectl get csr",
    "kubectl create token default -n prod --duration=1h",
    "kubectl patch hpa api -p '{\"spec\":{\"maxReplicas\":10}}'",
    "echo \"$B64\" | base64 -d | kubectl apply --dry-run=server -f -",
]

API_BODIES_WARN = [
    # a write whose body switches something off, or loosens a protection
    ("curl -X PATCH \"https://api.cloudflare.com/client/v4/zones/$Z/rulesets/$R/rules/$ID\" -H \"Authorization: Bearer $T\" "
     "--data '{\"enabled\":false}'", "verb-takes-down"),
    ("curl -u admin:$PW -X PATCH https://solace01:943/SEMP/v2/config/msgVpns/payments/queues/settlement.in "
     "-d '{\"ingressEnabled\":false,\"egressEnabled\":false}'", "verb-takes-down"),
    ("curl -X PATCH -u \"$K:$S\" -d '{\"paused\": true}' https://api.fivetran.com/v1/connectors/fiery_pancake",
     "verb-takes-down"),
    ("curl -X PUT -H \"Authorization: Bearer $T\" -d false https://teamcity.local/app/rest/agents/id:14/enabled",
     "verb-takes-down"),
    ("curl -k -u admin:$PW https://splunk:8089/servicesNS/nobody/ES/saved/searches/Brute%20Force -d disabled=1",
     "verb-takes-down"),
    ("curl -u admin:$PW -X PUT -d '{\"metadata\":{\"prevent_vul\":\"false\"}}' https://harbor/api/v2.0/projects/payments",
     "verb-weakens-security"),
    ("curl -X PATCH \"https://api.supabase.com/v1/projects/$REF/config/auth\" -d '{\"mailer_autoconfirm\": true}'",
     "verb-weakens-security"),
    ("curl -s -X PUT http://emqx:18083/api/v5/authorization/settings -d '{\"no_match\":\"allow\",\"deny_action\":\"ignore\"}'",
     "verb-weakens-security"),
]

API_BODIES_LOOK_ALIKES_PASS = [
    "curl -X PATCH \"https://api.cloudflare.com/client/v4/zones/$Z/rulesets/$R/rules/$ID\" --data '{\"enabled\":true}'",
    "curl -s https://api.fivetran.com/v1/connectors/fiery_pancake -u \"$K:$S\"",
    "curl -X PATCH -u \"$K:$S\" -d '{\"paused\": false}' https://api.fivetran.com/v1/connectors/fiery_pancake",
    "curl -X PUT -d '{\"debug_enabled\": false}' https://app.internal/api/settings",
    "curl -X PUT -d '{\"anonymous_access_enabled\": false}' https://nexus.internal/service/rest/v1/security/anonymous",
    "curl -s -X PUT http://emqx:18083/api/v5/authorization/settings -d '{\"no_match\":\"deny\"}'",
    "kubectl patch cronjob nightly -n batch -p '{\"spec\":{\"suspend\":true}}'",  # writers split: left alone
]

CLOUD_WARN = [
    ("az network front-door waf-policy update --name wafSaasProd --resource-group rg-edge --mode Detection",
     "security-switched-off"),
    ("az cosmosdb sql container throughput update -a cosmos-prod -g rg-prod -d orders -n events --throughput 400",
     "capacity-cut-to-minimum-spaced"),
    ("az sql db update -g rg-prod -s sql-prod -n orders --service-objective Basic", "capacity-cut-to-minimum-spaced"),
    ("gcloud spanner instances update media-spanner --nodes=1", "capacity-cut-to-minimum"),
    ("aws dynamodb update-table --table-name t --billing-mode PROVISIONED "
     "--provisioned-throughput ReadCapacityUnits=1,WriteCapacityUnits=1", "capacity-cut-to-minimum"),
    ("bq cp -f learn-prod:staging.enrollments learn-prod:analytics.enrollments", "bq-table-overwritten"),
    ("az cosmosdb failover-priority-change -n cosmos-prod -g rg-prod --failover-policies westus=0 eastus=1",
     "cosmos-failover"),
    ("gcloud projects add-iam-policy-binding fin-core-prod --member=user:dev@gmail.com --role=roles/editor",
     "admin-grant"),
    ("az aks update -g rg-prod -n aks-prod --enable-local-accounts", "security-switched-off"),
    ("az redis update -g rg-prod -n redis-prod --set enableNonSslPort=true", "security-switched-off"),
]

CLOUD_LOOK_ALIKES_PASS = [
    "az network front-door waf-policy update --name wafSaasProd --resource-group rg-edge --mode Prevention",
    "esxcli network firewall ruleset set --ruleset-id sshServer --enabled false",
    "az cosmosdb sql container throughput update -a cosmos-prod -g rg-prod -d orders -n events --throughput 4000",
    "az cosmosdb sql container throughput show -a cosmos-prod -g rg-prod -d orders -n events",
    "az sql db update -g rg-prod -s sql-prod -n orders --service-objective S3",
    "gcloud spanner instances update media-spanner --nodes=5",
    "bq cp learn-prod:analytics.enrollments learn-prod:backups.enrollments_20240601",
    "gcloud projects add-iam-policy-binding p --member=user:dev@example.com --role=roles/viewer",
    "az aks update -g rg-prod -n aks-prod --disable-local-accounts",
    "az redis update -g rg-prod -n redis-prod --set enableNonSslPort=false",
]

SCRIPTS_AND_SITES_WARN = [
    ("make deploy ENV=prod", "deploy-target-run"),
    ("make -C /opt/ops fix-prod ENV=production", "deploy-target-run"),
    ("npm run migrate:prod", "deploy-target-run"),
    ("sudo -u www-data php /tmp/fix_enrolments.php", "scratch-script-run"),
    ("wp option update siteurl 'http://staging.client42.test'", "wordpress-site-url-changed"),
    ("wp config set WP_DEBUG_DISPLAY true --raw", "security-switched-off"),
    ("sudo -u www-data php admin/cli/cfg.php --name=debugdisplay --set=1", "security-switched-off"),
    ("rsync -av --delete /mnt/mam/hires/ /mnt/dr/hires/", "rsync-delete-tree"),
    ("rsync -a --delete /srv/www/ web02:/srv/www/", "rsync-delete-tree"),
]

SCRIPTS_AND_SITES_LOOK_ALIKES_PASS = [
    "make -n deploy ENV=prod", "make clean", "make test", "npm run | grep -A1 'db:fix'", "npm run lint",
    "php -l /tmp/fix.php", "bash -n /tmp/fix.sh", "wp option get siteurl", "wp config get WP_DEBUG_DISPLAY",
    "wp config set WP_DEBUG_DISPLAY false --raw", "rsync -avn --delete /srv/www/ web02:/srv/www/",
    "rsync -av /srv/www/ backup01:/backups/www/",
]

TOOLS_WARN = [
    ("sudo sed -i 's/^num_logs.*/num_logs = 1/' /etc/audit/auditd.conf", "retention-cut"),
    ("clickhouse-client -q \"SYSTEM STOP MERGES ads.impressions_local\"", "sql-writes-blocked"),
    ("clickhouse-client -q \"ALTER TABLE ads.i ON CLUSTER prod MODIFY TTL event_date + INTERVAL 1 DAY\"", "sql-alter-drop"),
    ("clickhouse-client -q \"ALTER USER default HOST ANY\"", "sql-privilege-granted"),
    ("balena device public-url enable 7cf02a6", "balena-public-url"),
    ("balena device os-update 7f3c9a1 --version 5.3.6 --yes", "balena-fleet-changed"),
    ("balena ssh 7f3c9a1 \"dd if=/dev/zero of=/dev/mmcblk0 bs=4M\"", "dd-device"),
    ("p4 protect -i < /tmp/protections.txt", "p4-protections-replaced"),
    ("sudo gitlab-runner register --non-interactive --url https://g --token x --executor docker --docker-privileged",
     "ci-runner-privileged"),
]

TOOLS_LOOK_ALIKES_PASS = [
    "sudo sed -i 's/^num_logs.*/num_logs = 10/' /etc/audit/auditd.conf",
    "clickhouse-client -q \"SYSTEM START MERGES ads.i\"",
    "clickhouse-client -q \"ALTER TABLE ads.i MODIFY TTL event_date + INTERVAL 90 DAY\"",
    "balena device public-url 7cf02a6", "balena device public-url disable 7cf02a6", "balena ssh 7f3c9a1 sensor-agent",
    "p4 protect -o", "p4 protect -o > /tmp/protect-backup.txt",
    "sudo gitlab-runner register --non-interactive --url https://g --token x --executor docker --docker-image alpine:3.19",
]

DOWNLOADS_AND_API_WARN = [
    ("wget http://example.org/fix.tar.gz && tar xzf fix.tar.gz && cd fix && sudo ./install.sh", "remote-code"),
    ("wget https://example-tools.io/t.tar.gz && tar xzf t.tar.gz && sudo ./t/install", "remote-code"),
    ("curl -s -X \"$METHOD\" \"$SR_URL/subjects/$SUBJECT\"", "opaque-command"),
    ("curl -k \"https://fw1/api/?type=commit&cmd=<commit><force></force></commit>&key=$K\"", "firewall-force-commit"),
    ("http PUT es-prod:9200/_cluster/settings transient:='{\"cluster.routing.allocation.exclude._ip\":\"10.0.4.21\"}'",
     "verb-takes-down"),
]

DOWNLOADS_AND_API_LOOK_ALIKES_PASS = [
    "tar xzf release.tar.gz && ./install.sh",  # nothing downloaded on the line
    "wget https://x/y.tar.gz && sha256sum -c y.sha256 && tar xzf y.tar.gz && ./install.sh",  # verified first
    "wget https://x/y.tar.gz && tar xzf y.tar.gz && ls y/",
    "curl -s \"$SR_URL/subjects\"",
    "curl -k \"https://fw1/api/?type=op&cmd=<show><config><diff></diff></config></show>&key=$K\"",
    "curl -X PUT es:9200/_cluster/settings -d '{\"persistent\":{\"cluster.routing.allocation.exclude._name\":null}}'",
]

STORAGE_AND_DURATIONS_WARN = [
    ("aws s3 rm s3://fintech-ledger-prod/exports/2023-01-15/settlements.csv", "aws-s3-rm"),
    ("gcloud storage rm gs://prod-app-user-uploads/avatars/uid_8812.jpg", "gcloud-storage-rm"),
    ("az servicebus queue update -g rg -n q --namespace-name sb --default-message-time-to-live PT1M", "retention-cut"),
    ("az sql db ltr-policy set -g rg -s s -n t --weekly-retention P0W --monthly-retention P0M --yearly-retention P0Y",
     "retention-cut"),
    ("aws cognito-idp update-user-pool --user-pool-id x --deletion-protection INACTIVE", "security-switched-off"),
    ("aws globalaccelerator update-endpoint-group --endpoint-group-arn x --traffic-dial-percentage 0",
     "capacity-cut-to-zero"),
    ("aws gamelift update-fleet-capacity --fleet-id f --desired-instances 0 --min-size 0", "capacity-cut-to-zero"),
]

STORAGE_AND_DURATIONS_LOOK_ALIKES_PASS = [
    "gcloud storage rm gs://media-transcode-scratch/jobs/8812/*.tmp",  # a scratch prefix: info
    "aws s3 ls s3://fintech-ledger-prod/exports/2023-01-15/",
    "az servicebus queue update -g rg -n q --namespace-name sb --default-message-time-to-live P14D",
    "az sql db ltr-policy set -g rg -s s -n t --weekly-retention P4W",
    "aws cognito-idp update-user-pool --user-pool-id x --deletion-protection ACTIVE",
    "influx auth inactive --id 0c1d2e3f4a5b6c7d",
    "aws autoscaling set-desired-capacity --auto-scaling-group-name api-prod --desired-capacity 12",
]

HEROKU_WARN = [
    ("heroku pg:backups:restore b101 DATABASE_URL --app newsapp-api --confirm newsapp-api", "heroku-database-overwritten"),
    ("heroku pg:copy stg::DATABASE_URL DATABASE_URL --app crm-prod --confirm crm-prod", "heroku-database-overwritten"),
    ("heroku pg:backups:unschedule DATABASE_URL -a reviews-prod", "heroku-database-overwritten"),
    ("heroku releases:rollback v211 --app newsapp-api", "heroku-app-changed"),
    ("heroku redis:maintenance --run --force -a bookings-prod", "heroku-app-changed"),
    ("heroku buildpacks:add https://github.com/random/heroku-buildpack-fix --app newsapp-api", "heroku-app-changed"),
    ("heroku ps:restart --app bookings-prod", "heroku-every-dyno-restarted"),
    ("heroku run -a bookings-prod -- rails runner 'Sidekiq::Queue.new(\"default\").clear'", "rails-console-destroys"),
]

HEROKU_LOOK_ALIKES_PASS = [
    "heroku ps:restart web.3 -a bookings-prod", "heroku pg:backups:capture --app acme-prod",
    "heroku pg:backups:schedules -a reviews-prod", "heroku pg:backups:info b101 --app crm-prod",
    "heroku releases -a bookings-prod -n 20", "heroku redis:info -a bookings-prod", "heroku buildpacks --app x",
    "heroku run -a bookings-prod -- rails runner 'puts Sidekiq::Queue.new(\"default\").size'",
]


@pytest.mark.parametrize("command, rule", [
    *LISTED_KINDS_WARN, *REMOTE_SHELL_QUOTING_WARN, *XML_API_WARN, *MAINFRAME_LINES_WARN, *CONFIGURATION_EDITS_WARN,
    *DEVICES_AND_ACCESS_WARN, *CARRIED_WARN, *KUBERNETES_WARN, *API_BODIES_WARN, *CLOUD_WARN, *SCRIPTS_AND_SITES_WARN, *TOOLS_WARN,
    *DOWNLOADS_AND_API_WARN, *STORAGE_AND_DURATIONS_WARN, *HEROKU_WARN,
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    *LISTED_KINDS_LOOK_ALIKES_PASS, *REMOTE_SHELL_LOOK_ALIKES_PASS, *XML_API_LOOK_ALIKES_PASS,
    *MAINFRAME_LOOK_ALIKES_PASS, *CONFIGURATION_LOOK_ALIKES_PASS, *DEVICES_AND_ACCESS_LOOK_ALIKES_PASS,
    *CARRIED_LOOK_ALIKES_PASS, *KUBERNETES_LOOK_ALIKES_PASS,
    *API_BODIES_LOOK_ALIKES_PASS, *CLOUD_LOOK_ALIKES_PASS,
    *SCRIPTS_AND_SITES_LOOK_ALIKES_PASS, *TOOLS_LOOK_ALIKES_PASS,
    *DOWNLOADS_AND_API_LOOK_ALIKES_PASS, *STORAGE_AND_DURATIONS_LOOK_ALIKES_PASS, *HEROKU_LOOK_ALIKES_PASS,
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
