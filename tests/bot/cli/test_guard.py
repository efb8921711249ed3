"""`runbook-bot guard check`: the typer sub-app on its own."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.guard import guard_app
from bot import EXAMPLE_RUNBOOKS

RUNNER = CliRunner()
EXAMPLES = EXAMPLE_RUNBOOKS
TEXT = "Clean up:\n\n```bash\ndf -h\nsudo rm -rf /\nkubectl drain node-1\n```\nThen `docker system prune`.\n"


def test_json_lines_one_per_finding(tmp_path: Path) -> None:
    path = tmp_path / "answer.md"
    path.write_text(TEXT, encoding="utf-8")
    result = RUNNER.invoke(guard_app, ["check", str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["rule"], r["severity"]) for r in rows] == [
        ("rm-rf-root", "block"), ("kubectl-drain", "warn"), ("docker-prune", "info")]
    assert rows[0]["command"] == "sudo rm -rf /" and rows[0]["reason"] and rows[0]["safer"]
    assert set(rows[0]) >= {"command", "rule", "severity", "reason", "safer"}


def test_stdin_and_table() -> None:
    result = RUNNER.invoke(guard_app, ["check", "-"], input=TEXT)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split() == ["SEVERITY", "RULE", "COMMAND"]
    assert lines[1].split()[:2] == ["block", "rm-rf-root"] and "sudo rm -rf /" in lines[1]
    assert any(line.strip().startswith("safer:") for line in lines)
    assert lines[-1] == "4 commands checked: 1 block, 1 warn, 1 info."


def test_nothing_found() -> None:
    result = RUNNER.invoke(guard_app, ["check", "-", "--json"], input="just `kubectl get pods`")
    assert (result.exit_code, result.output) == (0, "")
    result = RUNNER.invoke(guard_app, ["check", "-"], input="no commands")
    assert result.output.strip() == "0 commands checked: 0 block, 0 warn, 0 info."


def test_example_runbook_warns() -> None:
    result = RUNNER.invoke(guard_app, ["check", str(EXAMPLES / "disk-full.md"), "--json"])
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert result.exit_code == 0
    assert ("docker-system-prune-all", "warn") in [(r["rule"], r["severity"]) for r in rows]
    assert not any(r["severity"] == "block" for r in rows)


def test_operator_policy_and_channel(tmp_path: Path) -> None:
    policy = tmp_path / "ops.yaml"
    policy.write_text("severity: {kubectl-drain: block}\nchannels: {C1: {rm-rf-root: warn}}\n", encoding="utf-8")
    rows = [json.loads(line) for line in RUNNER.invoke(
        guard_app, ["check", "-", "--json", "--policy", str(policy)], input=TEXT).output.splitlines()]
    assert ("kubectl-drain", "block") in [(r["rule"], r["severity"]) for r in rows]
    args = ["check", "-", "--json", "--policy", str(policy), "--channel", "C1"]
    rows = [json.loads(line) for line in RUNNER.invoke(guard_app, args, input=TEXT).output.splitlines()]
    assert ("rm-rf-root", "warn") in [(r["rule"], r["severity"]) for r in rows]


def test_unreadable_file_exits_2(tmp_path: Path) -> None:
    result = RUNNER.invoke(guard_app, ["check", str(tmp_path / "missing.md")])
    assert result.exit_code == 2 and "cannot read" in result.output
    result = RUNNER.invoke(guard_app, ["check", str(tmp_path)])
    assert result.exit_code == 2


def test_bad_policy_exits_2(tmp_path: Path) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text("severity: {no-such-rule: warn}\n", encoding="utf-8")
    result = RUNNER.invoke(guard_app, ["check", "-", "--policy", str(policy)], input=TEXT)
    assert result.exit_code == 2 and "no-such-rule" in result.output
