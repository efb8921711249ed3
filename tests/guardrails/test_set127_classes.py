"""Classes from the false negatives and false alarms of mainstream blind sets (127, 128, 132; then 133, 135): an
archive written over a disk or extracted over a live directory, /dev/null put in a file's place, a filesystem
remounted read-only, a key written over the one in use, kexec, a volume shrunk, several pods or a remote manifest
deleted at once, Redis's foreground SAVE, Tomcat's manager actions, a container stopped or killed, pg_hba trust
from a network, a join token that never expires; linkerd's install verbs only print manifests, a program run by
its Windows path is that program, xargs fed a listing of scratch deletes in scratch, --query picks what the AWS
and Azure CLIs print."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged


@pytest.mark.parametrize("command, rule", [
    ("tar -cf /dev/sdb ./release", "archive-to-device"),
    ("sudo tar --create --file=/dev/nvme1n1 /srv/media", "archive-to-device"),
    ("sudo tar -xpf etc-2023.tar -C /", "archive-extracted-over"),
    ("tar -xzf uploads-jan.tgz --directory=/srv/app/shared/uploads", "archive-extracted-over"),
    ("tar -xf pgdata.tar -C /var/lib/postgresql/16/main", "archive-extracted-over"),
    ("ln -sfn /dev/null /srv/shop/shared/db/production.sqlite3", "null-over-file"),
    ("cp /dev/null /etc/nginx/conf.d/upstreams.conf", "null-over-file"),
    ("scp /dev/null web-2:/srv/app/shared/config/master.key", "null-over-remote-file"),
    ("sudo mount -o remount,ro /", "remount-read-only"),
    ("mount -o ro,remount /var/lib/docker", "remount-read-only"),
    ("openssl genrsa -out /etc/ssl/private/api.example.com.key 4096", "key-written-over"),
    ("openssl req -x509 -nodes -newkey rsa:2048 -keyout /etc/haproxy/certs/site.pem -out /etc/haproxy/certs/site.pem -days 7",
     "key-written-over"),
    ("sudo kexec -e", "host-kexec"),
    ("rbd resize --size 20G --allow-shrink rbd/pg-data-01", "volume-shrink"),
    ("qemu-img resize --shrink /var/lib/libvirt/images/db01.qcow2 40G", "volume-shrink"),
    ("kubectl -n kafka delete pod kafka-0 kafka-1 kafka-2", "kubectl-delete-several-pods"),
    ("kubectl delete pod/zk-0 pod/zk-1", "kubectl-delete-several-pods-slashed"),
    ("kubectl delete -f https://github.com/cert-manager/cert-manager/releases/download/v1.14.0/cert-manager.yaml",
     "kubectl-delete-remote-manifest"),
    ("redis-cli -h cache-prod-1 -a \"$REDIS_PW\" SAVE", "redis-blocking-save"),
    ("curl -u admin:$PW 'http://app-3:8080/manager/text/undeploy?path=/checkout'", "tomcat-manager-action"),
    ("curl -s -u admin:$PW \"http://app-3:8080/manager/text/reload?path=/checkout\"", "tomcat-manager-action"),
    ("wget -qO- --user=admin --password=$PW 'http://app-3:8080/manager/text/expire?path=/shop&idle=0'",
     "tomcat-manager-action"),
    ("docker kill api", "container-stopped"),
    ("sudo docker stop $(docker ps -q --filter name=api)", "container-stopped"),
    ("podman pause web-1", "container-stopped"),
    ("docker container kill -s KILL worker-3", "container-stopped-long-form"),
    ("echo 'host all app 10.0.0.0/8 trust' >> /etc/postgresql/16/main/pg_hba.conf", "pg-hba-trust"),
    ("kubeadm token create --ttl 0 --print-join-command", "join-token-forever"),
    ("C:\\Windows\\System32\\inetsrv\\appcmd.exe stop site \"Default Web Site\"", "verb-takes-down"),
    ("& $env:windir\\system32\\inetsrv\\appcmd.exe stop apppool /apppool.name:Shop", "verb-takes-down"),
    ("ls /tmp | xargs rm -rf", "rm-rf-variable"),  # (bare names: removed where it runs, not in /tmp)
    ("ls -d /var/lib/jenkins/* | xargs rm -rf", "rm-rf-variable"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in flagged(command), check_command(command)


@pytest.mark.parametrize("command", [
    "tar -czf /var/backups/etc-$(date +%F).tgz /etc",
    "tar -xzf /srv/backups/uploads.tgz -C /tmp/restore-check",
    "tar -tvf /dev/st0",  # (a tape: what tar is for)
    "tar -cf /dev/nst0 /srv/archive",
    "cp /dev/null /tmp/probe.txt",
    "ln -s /srv/app/releases/42 /srv/app/current-next",
    "mount",
    "mount | grep /var/lib/docker",
    "mount -o remount,rw /",
    "openssl genrsa -out /tmp/test.key 2048",
    "openssl x509 -in /etc/ssl/certs/api.pem -noout -enddate",
    "kexec -l /boot/vmlinuz-6.8 --initrd=/boot/initrd.img-6.8 --reuse-cmdline",
    "rbd resize --size 200G rbd/pg-data-01",
    "kubectl -n kafka delete pod kafka-2",
    "kubectl delete pod $(kubectl get pods -o name | grep Evicted)",
    "kubectl delete --dry-run=server -f https://example.com/install.yaml",
    "redis-cli -h cache-prod-1 BGSAVE",
    "curl -u admin:$PW 'http://app-3:8080/manager/text/list'",
    "linkerd uninstall > /var/tmp/linkerd-uninstall.yaml",
    "linkerd uninstall | kubectl delete --dry-run=server -f -",
    "linkerd upgrade --set proxy.logLevel=debug | kubectl diff -f -",
    "docker kill -s HUP nginx",
    "docker stop tmp-build-42",
    "docker exec api-1 rm -rf /tmp/cache/*",
    "ls -d /tmp/jenkins-* | xargs rm -rf",
    "find /var/tmp/build -mtime +3 -print0 | xargs -0 rm -rf",
    "echo 'host all all 127.0.0.1/32 trust' >> /etc/postgresql/16/main/pg_hba.conf",
    "kubeadm token create --ttl 2h --print-join-command",
    "& $env:windir\\system32\\inetsrv\\appcmd.exe list site",
    "az keyvault secret show --vault-name kv-prod --name stripe-key --query attributes",
    "aws secretsmanager get-secret-value --secret-id prod/db --query VersionStages",
])
def test_look_alikes_pass(command: str) -> None:
    assert not flagged(command), check_command(command)


def test_linkerd_manifests_piped_into_a_delete_still_warn() -> None:
    assert "manifests-deleted" in flagged("linkerd uninstall | kubectl delete -f -")
