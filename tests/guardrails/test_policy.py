"""The policy as data: the default file, operator files, per-channel overrides, validation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import guardrails
from guardrails import PolicyError, check, check_command, default_policy, load_policy, parse_policy

PACKAGE = Path(guardrails.__file__).parent


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_default_policy_covers_the_spec() -> None:
    policy = default_policy()
    ids = {r.id for r in policy.rules}
    for rule in ("rm-rf-root", "fork-bomb", "dd-device", "mkfs-device", "write-to-device", "sql-drop-table",
                 "sql-truncate", "sql-delete-all", "sql-update-all", "sql-alter-drop", "kubectl-delete-namespace",
                 "kubectl-drain", "helm-uninstall", "terraform-destroy", "aws-s3-rm-recursive", "redis-flush",
                 "git-push-force", "git-reset-hard", "docker-system-prune-all", "etcdctl-del", "shred-device",
                 "chmod-recursive-777", "chown-recursive", "host-power", "firewall-flush", "systemctl-stop-critical",
                 "gcloud-delete", "aws-terminate"):
        assert rule in ids
    blocking = {r.id for r in policy.rules if r.severity == "block"}
    assert {"rm-rf-root", "fork-bomb", "dd-device", "mkfs-device", "write-to-device"} <= blocking
    assert all(r.reason for r in policy.rules)
    assert sum(r.safer is not None for r in policy.rules) == len(policy.rules)


def test_operator_file_adds_rules_and_overrides(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, """
rules:
  - id: kafka-delete-topic
    severity: warn
    program: ["kafka-topics*"]
    flags_any: [--delete]
    reason: Deletes a Kafka topic and its data.
    safer: Set retention instead.
  - id: rm-rf
    severity: warn
    group: rm-rf
    program: [rm]
    flags_all: [-r]
    targets: [path, scratch, relative]
    reason: We treat every recursive delete as risky.
severity:
  docker-system-prune-all: info
disable: [git-reset-hard]
system_paths: [/data]
"""))
    [topic] = check_command("kafka-topics.sh --bootstrap-server k:9092 --delete --topic orders", policy)
    assert (topic.rule, topic.severity, topic.safer) == ("kafka-delete-topic", "warn", "Set retention instead.")
    assert [(f.rule, f.severity) for f in check_command("rm -rf ./build", policy)] == [("rm-rf", "warn")]
    assert [f.severity for f in check_command("docker system prune -a", policy)] == ["info"]
    assert check_command("git reset --hard", policy) == []
    assert [f.rule for f in check_command("rm -rf /data", policy)] == ["rm-rf-root"]
    assert [f.rule for f in check_command("git reset --hard")] == ["git-reset-hard"]  # default untouched


def test_severity_off_disables(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, "severity: {kubectl-drain: 'off'}\n"))
    assert check_command("kubectl drain n1", policy) == []


def test_channel_overrides() -> None:
    policy = parse_policy("channels:\n  C123: {kubectl-delete: block, rm-rf-root: warn}\n  C9: {}\n",
                          base=default_policy())
    strict = policy.for_channel("C123")
    assert check("`kubectl delete pod p -n dev`", strict).blocked
    assert check("`rm -rf /`", strict).worst == "warn"
    assert not check("`kubectl delete pod p -n dev`", policy).blocked
    assert policy.for_channel("C-other") is policy and policy.for_channel(None) is policy
    assert policy.for_channel("C9") is policy


@pytest.mark.parametrize(("text", "message"), [
    ("severity: {no-such-rule: warn}\n", "no-such-rule"),
    ("disable: [nope]\n", "nope"),
    ("channels: {C1: {ghost: block}}\n", "ghost"),
    ("rules:\n  - {id: x, severity: fatal, program: [rm], reason: r}\n", "severity"),
    ("rules:\n  - {id: x, severity: warn, reason: r}\n", "needs one of"),
    ("rules:\n  - {id: x, severity: warn, program: [rm], reason: r, colour: red}\n", "colour"),
    ("rules: [\n", "policy.yaml"),
    ("version: 2\n", "version"),
    ("rules:\n  - {id: x, severity: warn, program: [rm], reason: r}\n"
     "  - {id: x, severity: block, program: [dd], reason: r}\n", "used more than once: x"),
])
def test_invalid_operator_files_are_rejected(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        load_policy(write(tmp_path, text))


def test_missing_operator_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="missing.yaml"):
        load_policy(tmp_path / "missing.yaml")


def test_default_policy_is_package_data() -> None:
    assert (PACKAGE / "policy.yaml").is_file()
    assert load_policy() is default_policy()


def test_guardrails_imports_nothing_from_bot_or_retrieval() -> None:
    allowed = {"guardrails", "bashlex", "sqlglot", "yaml", "pydantic", "__future__"}
    for module in PACKAGE.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                assert top in allowed or top in _stdlib(), f"{module.name} imports {name}"


def _stdlib() -> frozenset[str]:
    import sys

    return frozenset(sys.stdlib_module_names)
