"""Rights handed out to everyone, network and storage clusters, HPC schedulers and macOS: the classes blind
set 15 showed, each with look-alikes that stay quiet."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("rabbitmqctl set_user_tags guest administrator", "broker-admin-user"),
    ("mc admin policy attach minio-prod consoleAdmin --user tempadmin", "broker-admin-user"),
    ("openstack role add --user vnf-vendor --project admin admin", "broker-admin-user"),
    ("ceph auth get-or-create client.everyone mon 'allow *' osd 'allow *'", "broker-admin-user"),
    ("sudo dscl . -append /Groups/admin GroupMembership guest", "broker-admin-user"),
    ("vault policy write everyone-admin - <<< 'path \"*\" { capabilities = [\"sudo\"] }'", "vault-policy-everything"),
    ('gitlab-rails runner "User.where(admin: false).update_all(admin: true)"', "rails-admin-everyone"),
    ("gitlab-rails runner /tmp/fix_users.rb", "rails-runner-file"),
    ("sudo usermod -aG wheel,docker contractor01", "admin-group-grant"),
    ("1> ALTER SERVER ROLE sysadmin ADD MEMBER [STUDIO\\Domain Users];", "sql-privilege-granted"),
    ("core-rtr01# debug all", "device-debug-all"),
    ("core-rtr01(config)# no logging host 10.50.0.20", "device-remote-logging-off"),
    ("dc-spine01# install all nxos bootflash:nxos64-cs.10.3.4a.M.bin", "device-software-install"),
    ("dc-spine01# rollback running-config checkpoint pre-change-0611", "device-software-install"),
    ("noc@mx960-edge1# deactivate protocols bgp group TRANSIT", "device-software-install"),
    ("noc@mx960-edge1# set interfaces xe-0/0/0 disable", "device-interface-disabled"),
    ("admin@PA-5220> clear session all", "device-sessions-cleared"),
    ("FGT-EDGE01 # diagnose sys session clear", "device-sessions-cleared"),
    ("admin@PA-5220# set rulebase security rules r1 source any destination any application any action allow",
     "firewall-allow-any"),
    ("tmsh run sys failover standby", "f5-failover-standby"),
    ("ceph config set mon mon_allow_pool_delete true", "ceph-pool-protection-off"),
    ("ceph osd pool set rbd nodelete false", "security-switched-off"),
    ("ceph osd pool set rbd size 1", "ceph-pool-size-one"),
    ("mc anonymous set public minio-prod/media-masters", "object-store-public"),
    ("mc admin service restart minio-prod", "object-store-restart"),
    ("mc mirror --remove --overwrite ./masters/ minio-prod/media-masters", "sync-mirror-delete"),
    ("qm delsnapshot 105 pre-upgrade-0611", "hypervisor-cluster-change"),
    ("ha-manager set vm:105 --state disabled", "hypervisor-cluster-change"),
    ("zpool export tank", "zfs-pool-exported"),
    ('zfs set sharenfs="rw=@0.0.0.0/0,no_root_squash" tank/home', "zfs-share-open"),
    ("scancel -u alice", "hpc-jobs-cancelled"),
    ('scontrol update NodeName=gpu[01-32] State=DOWN Reason="IB firmware"', "hpc-nodes-down"),
    ("mmdelfs gpfs01 -p", "gpfs-destroyed"),
    ("mmshutdown -a", "gpfs-changes"),
    ('ldapdelete -x -H ldaps://ldap1 -D cn=admin -W -r "ou=People,dc=x"', "ldap-deleted"),
    ("setfacl -R -m o::rwx /gpfs/projects/trials", "acl-world-writable"),
    ("xattr -dr com.apple.quarantine /Applications/Tool.app", "macos-protection-off"),
    ("sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setglobalstate off", "security-switched-off"),
    ("unset HISTFILE; history -c", "macos-protection-off"),
    ("redis-cli EVAL \"for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end\" 0 cart:*",
     "redis-script-deletes"),
    ("curl -XPUT 'http://es:9200/_cluster/settings' -d '{\"persistent\":{\"action.destructive_requires_name\":false}}'",
     "search-destructive-guard-off"),
    ('pt-online-schema-change --alter "DROP COLUMN legacy_sku" D=shop,t=products --execute', "mysql-schema-change-drop"),
    ("gcloud compute instances add-metadata w1 --metadata enable-oslogin=FALSE", "security-switched-off"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "rabbitmqctl list_users", "sudo usermod -aG developers bob", "core-rtr01(config)# no logging console",
    "noc@mx960-edge1# delete interfaces xe-0/0/0 disable", "ceph osd pool set rbd size 3",
    "ha-manager set vm:105 --state started", "scancel 12345", "scontrol update NodeName=gpu01 State=RESUME",
    "setfacl -m g:ops:rx /srv/x", "history | tail", "ROLLBACK;", "BEGIN; DELETE FROM t WHERE id = 1; ROLLBACK;",
    'pt-online-schema-change --alter "DROP COLUMN legacy_sku" D=shop,t=products --dry-run',
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
