"""Tools no rule knows, judged by their verb (guardrails/verbs.py through check_command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrails import check_command, load_policy
from guardrails.commands import invocations
from guardrails.verbs import parts, verb_effect


def _rules(command: str, policy=None) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.rule, f.severity) for f in check_command(command, policy)]


@pytest.mark.parametrize("command, rule", [
    ("hcloud server delete web-prod-1", "verb-destroys"),
    ("linode-cli linodes delete 12345678", "verb-destroys"),
    ("oci os bucket delete --bucket-name prod-exports --empty --force", "verb-destroys"),
    ("eksctl delete cluster --name prod --wait", "eksctl-deleted"),  # (a rule of its own now)
    ("vault kv metadata delete secret/prod/db", "verb-destroys"),
    ("couchbase-cli bucket-flush -c localhost --bucket travel --force", "verb-destroys"),
    ("diskutil eraseDisk APFS Blank /dev/disk2", "verb-destroys"),
    ("rabbitmqctl stop_app", "verb-takes-down"),
    ("gluster volume stop gv0 force", "verb-takes-down"),
    ("Disable-ScheduledTask -TaskName NightlyBackup", "verb-takes-down"),
    ("sudo talosctl shutdown -n 10.0.0.2", "verb-takes-down"),
    ("vault audit disable file/", "verb-weakens-security"),
    ("hcloud firewall delete fw-prod", "verb-weakens-security"),
    # topic verbs (heroku pg:reset) and scripts named for what they do
    ("heroku pg:reset DATABASE_URL --confirm acme-api", "verb-destroys"),
    ("firebase firestore:delete --all-collections --force", "verb-destroys"),
    ("kafka-server-stop.sh", "verb-takes-down"),
    ("sudo /usr/local/bin/k3s-uninstall.sh", "verb-destroys"),
])
def test_a_tool_no_rule_knows_is_judged_by_its_verb(command: str, rule: str) -> None:
    assert _rules(command) == [(rule, "warn")]


@pytest.mark.parametrize("command", [
    "hcloud server list", "oci os bucket get --bucket-name prod-exports", "vault audit list",
    "kubectl auth can-i delete nodes", "ceph osd safe-to-destroy 17", "last -x reboot shutdown",
    "type -a rm", "Get-Disk | Format-Table Number, FriendlyName", "gcloud compute reset-windows-password vm1",
    "eksctl delete cluster --name prod --dry-run", "pip uninstall -y requests", "git rm -r --cached build/",
    "Terraform will destroy all your managed infrastructure", "acl is_delete method DELETE",
    "oci compute instance action --action START --instance-id x",
])
def test_reads_rehearsals_software_and_prose_are_not_verbs_to_fear(command: str) -> None:
    assert not [r for r in _rules(command) if r[0].startswith("verb-")]


def test_the_rules_verdict_stands_where_a_rule_looked() -> None:
    assert _rules("sudo zfs destroy -nv tank/data@old") == [], "zfs's rules know -n is a dry run"
    assert _rules("rm -rf ./build") == [("rm-rf", "info")], "rm's rules judge its paths"
    assert _rules("supervisorctl stop worker-3") == [("process-manager-stop", "info")]
    assert _rules("sudo service chef-client stop") == [("service-stop", "warn")]


def test_an_operator_can_silence_a_rule_or_the_verbs(tmp_path: Path) -> None:
    off = tmp_path / "policy.yaml"
    off.write_text("severity: {kubectl-drain: 'off', verb-destroys: 'off'}\n", encoding="utf-8")
    policy = load_policy(off)
    assert _rules("kubectl drain n1", policy) == [], "a rule turned off is not replaced by the verb detector"
    assert _rules("hcloud server delete web-1", policy) == []
    assert _rules("gluster volume stop gv0", policy) == [("verb-takes-down", "warn")]


def test_verbs_are_read_from_compound_words() -> None:
    assert parts("delete-hosted-zone") == ["delete", "hosted", "zone"]
    assert parts("eraseDisk") == ["erase", "disk"]
    assert parts("stop_app") == ["stop", "app"]
    found = verb_effect(invocations("scw instance server terminate 11111111")[0])
    assert found is not None and found.effect == "destroys_data" and found.verb == "terminate"
    assert verb_effect(invocations("ceph osd ok-to-stop 12")[0]) is None, "a question, not an action"


def test_local_sandboxes_and_rehearsals_are_quiet() -> None:
    for command in ("kind delete cluster --name dev", "minikube delete --all", "k3d cluster delete dev",
                    "heroku logs --tail", "kafka-topics.sh --list", "sudo mke2fs -n /dev/sdb1",
                    "rsync -avn --delete /srv/data/ backup01:/srv/data/", "pulumi destroy --preview-only --stack prod"):
        assert [r for r in _rules(command) if r[1] != "info"] == [], command
    assert _rules("mkfs.xfs -f -n size=64k /dev/sdb") == [("mkfs-device", "block")], "-n names xfs options"
    assert _rules("rsync -av --delete /tmp/e/ /var/lib/mysql/") == [("rsync-delete", "warn")]


@pytest.mark.parametrize("command, severity", [
    ("kubectl delete deployment api -n prod", "warn"),
    ("kubectl delete secret -n prod tls-wildcard", "warn"),
    ("kubectl delete cluster.postgresql.cnpg.io pg-main -n db", "warn"),
    ("kubectl delete -k overlays/prod", "warn"),
    ("kubectl delete pod api-7d9f8b6c5-x2lqp -n prod", "info"),
    ("kubectl delete job db-migrate-20240512 -n prod", "info"),
    ("kubectl delete pods -n ci --field-selector=status.phase==Succeeded", "info"),
    ("kubectl delete node ip-10-0-1-12", "warn"),  # every blind writer warns: cordon and drain first
    ("kubectl delete -f old-job.yaml", "info"),
])
def test_deleting_what_kubernetes_does_not_recreate_warns(command: str, severity: str) -> None:
    assert [s for _, s in _rules(command)] == [severity]


@pytest.mark.parametrize("command, rule", [
    ("Set-MpPreference -DisableRealtimeMonitoring $true", "defender-off"),
    ("Set-NetFirewallProfile -Profile Domain,Public -Enabled False", "firewall-off"),
    ("Format-Volume -DriveLetter D -FileSystem NTFS -Force", "mkfs-device"),
    ("format D: /FS:NTFS /Q /Y", "mkfs-device"),
    ("del /f /s /q C:\\*.*", "windows-remove-system"),
    ("Remove-Item -Path 'D:\\SQLData\\*' -Recurse -Force", "windows-remove-data"),
])
def test_cmdlets_and_cmd_builtins_written_directly_are_read(command: str, rule: str) -> None:
    assert rule in [r for r, _ in _rules(command)], "not only inside powershell -Command"
    assert _rules("rmdir /tmp/empty-dir") == [], "the POSIX rmdir is not cmd.exe's rd"


@pytest.mark.parametrize("command, rule", [
    ("Get-ChildItem -Path C:\\ -Recurse -Force | Remove-Item -Recurse -Force", "windows-remove-system"),
    ("Invoke-Command -ComputerName web01,web02 -ScriptBlock { Stop-Computer -Force }", "host-reset-forced"),
    ("Get-ADComputer -Filter * | ForEach-Object { Restart-Computer -ComputerName $_.Name -Force }",
     "host-reset-forced"),
])
def test_powershell_pipelines_and_script_blocks_are_read(command: str, rule: str) -> None:
    assert rule in [r for r, _ in _rules(command)]
    assert _rules("Get-Service | Where-Object { $_.Status -eq 'Running' }") == []
    assert [s for _, s in _rules("Get-ChildItem -Path C:\\temp\\old -Recurse | Remove-Item -Recurse -Force")] == ["info"]


@pytest.mark.parametrize("command, expect", [
    ("[root@mongo-02 ~]# rm -rf /var/lib/mongodb", "block"),
    ("user@db-primary:~$ sudo reboot", "warn"),
    ("PS C:\\> Format-Volume -DriveLetter D -FileSystem NTFS -Force", "block"),
    ("postgres=# TRUNCATE TABLE payments;", "warn"),
    ("mysql> RESET MASTER;", "warn"),
    ("127.0.0.1:6379> FLUSHDB", "warn"),
    ("rs0:PRIMARY> db.events.drop()", "warn"),
    ("cqlsh> TRUNCATE app.events;", "warn"),
    ("# rm -rf / would wipe the host", "none"),  # a comment, not a root prompt
    ("postgres=# SELECT count(*) FROM payments;", "none"),
    ("127.0.0.1:6379> INFO memory", "none"),
])
def test_a_pasted_prompt_says_which_tool_reads_the_line(command: str, expect: str) -> None:
    found = [s for _, s in _rules(command)]
    assert (found[0] if found else "none") == expect


def test_retention_and_caches_are_not_deletions() -> None:
    assert _rules("wal-g delete retain FULL 7") == []
    assert _rules("sudo resolvectl flush-caches") == []
    assert _rules("wal-g delete before FIND_FULL base_0001") == [("verb-destroys", "warn")]
    assert _rules("shutdown /a") == [], "Windows: cancels a pending shutdown"
    assert [s for _, s in _rules("Remove-Item C:\\Windows\\Temp\\* -Recurse -Force")] == ["info"]
