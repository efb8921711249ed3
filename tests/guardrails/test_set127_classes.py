"""Classes from the false negatives and false alarms of three mainstream blind sets (127, 128, 132): an archive
written over a disk or extracted over a live directory, /dev/null put in a file's place, a filesystem remounted
read-only, a key written over the one in use, kexec, a volume shrunk, several pods or a remote manifest deleted
at once, Redis's foreground SAVE, Tomcat's manager actions; linkerd's install verbs only print manifests."""

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
])
def test_look_alikes_pass(command: str) -> None:
    assert not flagged(command), check_command(command)


def test_linkerd_manifests_piped_into_a_delete_still_warn() -> None:
    assert "manifests-deleted" in flagged("linkerd uninstall | kubectl delete -f -")
