"""Abbreviations on-call engineers type, written out as runbooks say them."""

from __future__ import annotations

from retrieval.lexicon import expand, expansion
from retrieval.ranking import name_compounds, name_terms


def test_abbreviations_get_the_runbook_words_next_to_them() -> None:
    assert expand("zookeeper sts stuck at 2/3") == "zookeeper sts (StatefulSet) stuck at 2/3"
    assert expand("pvc at 92%, can I grow it?").startswith("pvc (PersistentVolumeClaim persistent volume claim) at")
    assert expand("rx errors on bond0") == "rx (receive) errors on bond0 (network interface)"
    assert expand("nodes on v1.29") == "nodes on v1.29 (version)"


def test_words_already_written_out_are_left_alone() -> None:
    assert expand("the prom Prometheus pod") == "the prom Prometheus pod"
    assert expand("sts sts") == "sts (StatefulSet) sts", "each expansion once"
    assert expand("distsync is fine") == "distsync is fine", "whole words only"
    assert expansion("DS") == "DaemonSet" and expansion("hello") is None


def test_a_camelcase_name_is_matched_by_the_words_a_question_uses() -> None:
    path = "runbooks/kubernetes/KubeStatefulSetReplicasMismatch.md"
    assert {"state", "set", "replica", "mismatch"} <= name_terms(path), "stems of the words, not the whole name"
    joined = dict(name_compounds(path))
    assert "statefulset" in joined and {"set"} <= joined["statefulset"]


def test_symptoms_are_written_in_the_words_runbooks_use() -> None:
    assert expand("worker-3 keeps flipping Ready/NotReady") == "worker-3 keeps flipping (flapping) Ready/NotReady"
    assert expand("the two replicas run different configs") == (
        "the two replicas run different (inconsistent mismatch) configs (configuration)")
    assert "Watchdog" in expand("our deadmanssnitch heartbeat stopped")
    assert expand("eth2 is flapping") == "eth2 (network interface) is flapping", "said the runbook's way already"


def test_a_containers_waiting_reason_says_it_is_waiting() -> None:
    listed = expand("api-6f9c 0/1 ImagePullBackOff 0 61m")
    assert "ImagePullBackOff (container waiting image pull)" in listed
    assert "(container waiting)" in expand("pod stuck in ContainerCreating for 15 min")
    assert expand("pod is Running") == "pod is Running"


def test_a_request_gets_the_words_procedure_runbooks_are_named_by() -> None:
    assert expand("how do I make sidekiq stop processing the mailers queue?").endswith("(disable)")
    assert expand("runners stuck in FAILING, how do I clean them up").endswith("(remove)")
    assert expand("we need another pgbouncer vm").endswith("(add instance)")
    assert expand("can we point the app straight at the database").endswith("(bypass)")
    assert expand("roll the release back").endswith("(rollback)")
    assert expand("make the volume bigger").endswith("(resize expand)")
    assert expand("move the repo to another storage node").endswith("(migrate move)"), "a target, not a new node"


def test_a_symptom_is_not_a_request() -> None:
    assert expand("the backups stopped coming through") == "the backups stopped coming through"
    assert expand("the job stopped running at 3am") == "the job stopped running at 3am"


def test_a_symptom_gets_the_words_of_what_it_points_at() -> None:
    assert "aggregated API" in expand("kubectl top says metrics not available")
    assert "notification integration" in expand("slack alerts stopped coming through but pagerduty still pages")
    assert "inodes" in expand("df shows 40% free but pods fail with 'no space left on device'")
    assert "file descriptors" in expand("nginx: accept() failed (24: Too many open files)")
    assert "out of memory" in expand("container exited with code 137")


def test_a_receiver_named_in_alert_labels_is_not_a_notification_problem() -> None:
    text = "NodeNetworkTransmitErrs instance=node-3 receiver=slack-infra-alerts"
    assert expand(text) == text
