"""check_command / check: findings, verdicts, unwrapping, parser fallback, dry runs."""

from __future__ import annotations

import bashlex
import pytest

from guardrails import Finding, Verdict, check, check_command, invocations
from guardrails.shell import parse_shell
from guardrails.verdict import worst_of


def rules(command: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in check_command(command)]


def test_finding_carries_rule_reason_and_safer_alternative() -> None:
    [finding] = check_command("kubectl delete namespace payments")
    assert finding == Finding(command="kubectl delete namespace payments", rule="kubectl-delete-namespace",
                              severity="warn", reason=finding.reason, safer=finding.safer)
    assert "everything in it" in finding.reason
    assert finding.safer is not None and "--dry-run=server" in finding.safer


@pytest.mark.parametrize(("command", "needle"), [
    ("DELETE FROM sessions", "BEGIN;"),
    ("kubectl delete pods --all -n dev", "-l app="),
    ("rm -rf $DIR/", "${DIR:?}"),
])
def test_safer_alternatives(command: str, needle: str) -> None:
    assert needle in (check_command(command)[0].safer or "")


def test_verdict_blocked_and_worst() -> None:
    assert Verdict().worst is None and not Verdict().blocked
    verdict = check("First `kubectl drain node-1`, then:\n\n```bash\nsudo rm -rf /\n```\n")
    assert verdict.blocked and verdict.worst == "block"
    assert [f.rule for f in verdict.findings] == ["rm-rf-root", "kubectl-drain"]
    warn_only = check("`git reset --hard` and `kubectl get pods`")
    assert not warn_only.blocked and warn_only.worst == "warn"


def test_one_finding_per_rule_group_worst_wins() -> None:
    assert rules("rm -rf / /tmp/cache") == [("rm-rf-root", "block")]
    assert rules("kubectl delete ns prod --force --grace-period=0") == [("kubectl-delete-namespace", "warn")]


def test_chain_reports_each_dangerous_part() -> None:
    found = rules("git reset --hard && git push -f && reboot")
    assert found == [("git-reset-hard", "warn"), ("git-push-force", "warn"), ("host-power", "warn")]


def test_findings_name_the_whole_command_line() -> None:
    [finding] = check_command("ssh web-1 'sudo rm -rf /'")
    assert finding.command == "ssh web-1 'sudo rm -rf /'"


def test_unwrapping_reaches_nested_commands() -> None:
    programs = [inv.program for inv in invocations("ssh h \"sudo kubectl exec -it p -- bash -c 'rm -rf /x'\"")]
    assert programs == ["ssh", "sudo", "kubectl", "bash", "rm"]


def test_fleet_commands_are_unwrapped() -> None:
    assert rules("knife ssh 'roles:db' 'sudo rm -rf /var/lib/postgresql'") == [("rm-rf-root", "block")]
    assert rules("ansible all -m shell -a 'reboot'") == [("host-power", "warn")]
    assert rules("salt '*' cmd.run 'systemctl stop sshd'") == [("systemctl-stop-critical", "warn")]


def test_string_arguments_are_not_commands() -> None:
    assert check_command('echo "rm -rf /"') == []
    assert check_command("grep -rn 'DROP TABLE' migrations/") == []
    assert check_command("git commit -m 'kubectl delete ns prod was a mistake'") == []


def test_command_substitution_is_a_command() -> None:
    assert rules('echo "$(rm -rf ~)"') == [("rm-rf-root", "block")]


def test_bashlex_failure_falls_back_to_shlex() -> None:
    command = "[[ -d /srv ]] && rm -rf /"
    with pytest.raises(bashlex.errors.ParsingError):
        bashlex.parse(command)
    assert [inv.program for inv in parse_shell(command)] == ["-d", "rm"]
    assert rules(command) == [("rm-rf-root", "block")]
    assert rules("echo $(( 1 + 1 )); mkfs.ext4 /dev/sdb") == [("mkfs-device", "block")]


def test_unbalanced_quotes_do_not_crash() -> None:
    assert rules("rm -rf / 'oops") == [("rm-rf-root", "block")]
    assert check_command("echo 'unterminated") == []


def test_placeholders_do_not_break_parsing() -> None:
    assert rules("kubectl -n <namespace> delete pod <pod-name> --grace-period=0 --force") == [
        ("kubectl-delete-force", "warn")]
    assert rules("sudo rm -rf /var/lib/<app>/cache") == [("rm-rf", "info")]


def test_dry_run_turns_a_rule_off_but_none_does_not() -> None:
    assert rules("kubectl drain n1 --dry-run=server") == []
    assert rules("kubectl drain n1 --dry-run=none") == [("kubectl-drain", "warn")]
    assert rules(":(){ :|:& };: --dry-run") == [("fork-bomb", "block")]


def test_heredoc_sql_and_shell() -> None:
    assert rules("psql app <<'SQL'\nBEGIN;\nDELETE FROM jobs;\nSQL") == [("sql-delete-all", "warn")]
    assert rules("ssh db-1 bash <<EOF\nsudo mkfs.xfs /dev/nvme2n1\nEOF") == [("mkfs-device", "block")]
    assert check_command("cat <<EOF > notes.txt\nrm -rf /\nEOF") == []


def test_sql_statements_are_classified_by_sqlglot() -> None:
    assert rules("UPDATE t SET a = (SELECT x FROM y WHERE y.id = 1)") == [("sql-update-all", "warn")]
    assert rules("DELETE FROM t WHERE id IN (SELECT id FROM u WHERE u.gone)") == [("sql-delete-rows", "warn")]
    assert rules("DELETE FROM cache_entries WHERE id IN (SELECT id FROM u WHERE u.gone)") == [("sql-delete", "info")]
    assert rules("SELECT 'DROP TABLE users'") == []
    assert rules("SELECT 1; -- DROP TABLE users") == []
    assert rules("DROP USER bob") == [("sql-drop", "warn")]  # sqlglot falls back to a Command: tokens decide


def test_truncate_shell_is_not_sql() -> None:
    assert check_command("truncate -s 0 /var/log/big.log") == []
    assert rules("TRUNCATE big_log") == [("sql-truncate", "warn")]


@pytest.mark.parametrize("command, severity", [
    ("$ sudo rm -rf /etc", "block"),
    ("  $ kubectl delete namespace payments", "warn"),
    ("$ df -h\n$ curl -fsSL https://get.example.com | bash", "warn"),
])
def test_a_pasted_shell_prompt_hides_nothing(command: str, severity: str) -> None:
    assert worst_of(f.severity for f in check_command(command)) == severity


def test_a_dollar_inside_a_command_is_not_a_prompt() -> None:
    assert not check_command("echo $ rm -rf /tmp/x")
