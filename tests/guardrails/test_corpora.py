"""The detector on real runbooks: the eval corpora (../shared/eval) and the project's examples/runbooks.

Nothing from the eval corpora is copied here: the tests read them in place.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from bot import EXAMPLE_RUNBOOKS
from guardrails import Finding, check_command, default_policy, extract_commands, invocations
from guardrails.invocation import Invocation, read_args
from guardrails.commands import LEARNED

REPO = Path(__file__).resolve().parents[2]
EVAL = REPO.parent / "shared" / "eval"
EXAMPLES = EXAMPLE_RUNBOOKS

# Read-only programs, and for multi-purpose tools the read-only subcommands.
READ_ONLY = frozenset("""
df du top htop free vmstat iostat ps pgrep lsof netstat ss journalctl promtool amtool dig nslookup host ping
traceroute mtr cat less head tail grep egrep zgrep rg awk sed sort uniq wc jq yq cut tr column echo printf
openssl uptime dmesg date hostname id whoami ls stat file which lsblk blkid findmnt mount nproc env
""".split())
READ_ONLY_SUB = {
    "kubectl": {"get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version",
                "cluster-info", "events", "auth", "config"},
    "systemctl": {"status", "show", "list-units", "list-timers", "is-active", "is-enabled", "is-failed", "cat"},
    "docker": {"ps", "logs", "inspect", "stats", "images", "version", "info", "top"},
    "git": {"log", "status", "show", "diff", "rev-parse", "branch", "remote", "fetch"},
    "helm": {"list", "ls", "status", "history", "get", "show", "version"},
}
DESTRUCTIVE_WORDS = re.compile(r"rm\b|delete|drop|drain|flush|prune|terminate|truncate|reset|destroy|kill|"
                               r"stop|reboot|shutdown|force|-f\b|\bdel\b|uninstall|mkfs|dd\b|purge|remove|disable|replicas=0|vacuum full|leave|seek|reinit|failover|rebuild|pause|maint|promote|create index|upgrade|"
                               r"snapshot restore|restart", re.I)  # a restore overwrites the live state; a restart drops connections


def _read_only(inv: Invocation) -> bool:
    if any(not r.startswith("/dev/") for r in inv.redirects):
        return False  # writes its output over a file (`cat > config.yml <<EOF`)
    if inv.program == "sudo":
        return True
    if inv.program in READ_ONLY_SUB:
        options = default_policy().value_options.get(inv.program, frozenset())
        words = read_args(inv.args, {}, options).positionals
        return bool(words) and words[0] in READ_ONLY_SUB[inv.program]
    if inv.program in ("sed", "perl") and any(a == "--in-place" or re.match(r"-\w*i", a) for a in inv.args):
        return False  # edits the file in place
    if inv.program == "curl":  # a GET: no method other than GET, no request body
        args = " ".join(inv.args)
        return not re.search(r"(-X|--request)\s*(?!GET)\w|(^|\s)(-d|--data\S*|-F|--form|-T)\b", args)
    return inv.program in READ_ONLY


def is_diagnostic(command: str) -> bool:
    """Every part of the command is a read-only diagnostic (kubectl get, df, du, curl GET, ...)."""
    parts = invocations(command)
    return bool(parts) and all(_read_only(inv) for inv in parts)


@lru_cache(maxsize=1)
def corpus_commands() -> tuple[tuple[str, str], ...]:
    """(document, command) for every command of every eval corpus."""
    rows = []
    for corpus in sorted(EVAL.glob("*/corpus")):
        for doc in sorted(corpus.rglob("*.md")):
            for command in extract_commands(doc.read_text(encoding="utf-8", errors="replace")):
                rows.append((str(doc.relative_to(EVAL)), command))
    return tuple(rows)


@lru_cache(maxsize=1)
def eval_commands() -> tuple[tuple[str, str, tuple[Finding, ...]], ...]:
    """(document, command, findings of the rules) for every command of every eval corpus."""
    rules = default_policy().with_severities({LEARNED: "off"})
    return tuple((doc, command, tuple(check_command(command, rules))) for doc, command in corpus_commands())


needs_eval = pytest.mark.skipif(not any(EVAL.glob("*/corpus")), reason=f"eval corpora not found under {EVAL}")


@needs_eval
def test_ordinary_diagnostics_in_real_runbooks_are_not_flagged() -> None:
    diagnostics = [(doc, c, f) for doc, c, f in eval_commands() if is_diagnostic(c)]
    assert len(diagnostics) >= 250  # the test is not vacuous (283 when written)
    programs = Counter(invocations(c)[0].program for _, c, _ in diagnostics)
    assert programs["kubectl"] >= 80 and programs["curl"] >= 20 and programs["journalctl"] >= 5
    assert [(doc, c, [x.rule for x in f]) for doc, c, f in diagnostics if f] == []  # not even info


@needs_eval
def test_real_runbooks_have_no_block_and_every_warning_is_destructive() -> None:
    rows = eval_commands()
    assert len(rows) >= 3000
    findings = [f for _, _, found in rows for f in found]
    assert [f for f in findings if f.severity == "block"] == []
    warnings = [f for f in findings if f.severity == "warn"]
    # 29 from the rules; about 40 more since tools no rule knows are judged by their verb (knife
    # node delete, gitlab-ctl stop, tf state rm, sentry queues purge, chef-client-disable: each
    # really deletes, stops or disables) and deleting what Kubernetes does not recreate warns; then
    # SQL files run against production, a Ruby file run in the production Rails console (sq.rb), a
    # replica reinit, Pub/Sub seeks, consul leave, personal-namespace images, an object made public to
    # AllUsers, a Sentinel failover, Discourse's `launcher rebuild app` (the site is down while it rebuilds);
    # then any service stopped (chef-client on a fleet, haproxy, patroni), a datastore restarted (pgbouncer,
    # influxdb, any other service: teleport, thanos-compact), recursive deletes outside scratch areas (a
    # Patroni data directory, uploads.old), a superuser created (CREATE USER "gitlab-superuser" ... SUPERUSER),
    # every file of a non-scratch directory deleted by find or a wildcard (/var/log/gitlab, conf.d/db-replica*);
    # then guessable passwords in CREATE USER examples (hunter1, pass1) and a replication slot dropped;
    # then Patroni paused (no automatic failover), Consul maintenance mode entered twice, pg_ctl promote,
    # a long-lived service-account key created (gcloud iam service-accounts keys create), an index built
    # without CONCURRENTLY on the users table (printed by pg_get_indexdef, to be run again), a playbook run
    # for real against production, every pod of a service deleted by label at once (app=kas), a GKE control
    # plane and a node pool upgraded, a Chef run with a one-off run list; a registry blob deleted from the
    # production bucket with gsutil rm (an object store keeps no copy); then objects queries and logins stand
    # on dropped (a corrupted index on users before it is rebuilt, a role, pg_repack's extension and trigger);
    # then pods picked by a jq filter deleted at once
    assert 5 <= len(warnings) <= 134
    # a warning destroys something, runs code nobody reviewed (curl ... | bash in one runbook),
    # weakens security (the bastions' ssh config turns StrictHostKeyChecking off) or runs a file
    # the runbook does not show (`psql < backup-roles.sql`, `gitlab-psql ... < rebuild_indexes.sql`)
    unreviewed = {r.id for r in default_policy().rules
                  if r.effect in ("runs_unreviewed_code", "weakens_security", "cannot_tell")}
    assert [f.command for f in warnings if not DESTRUCTIVE_WORDS.search(f.command) and f.rule not in unreviewed] == []


def example_findings() -> dict[str, list[tuple[str, str]]]:
    """Rule and severity of every finding, per example runbook."""
    return {doc.name: [(f.rule, f.severity) for c in extract_commands(doc.read_text(encoding="utf-8"))
                       for f in check_command(c)] for doc in sorted(EXAMPLES.glob("*.md"))}


def test_example_runbooks_findings() -> None:
    found = example_findings()
    assert len(found) == 10
    warnings = {(doc, rule) for doc, pairs in found.items() for rule, severity in pairs if severity == "warn"}
    assert warnings == {
        ("disk-full.md", "docker-system-prune-all"),
        ("node-not-ready.md", "kubectl-drain"),
        ("node-not-ready.md", "kubectl-delete-force"),
        ("node-not-ready.md", "kubectl-delete-node"),  # the stale Node object: its pods go at once, so drain first
        ("node-not-ready.md", "aws-compute-delete"),  # aws ec2 terminate-instances: takes the node down
        ("redis-memory.md", "redis-flush"),
        ("kafka-consumer-lag.md", "kubectl-scale-zero"),  # scaling the consumers to zero stops them
        ("postgres-replication-lag.md", "patroni-cluster-change"),  # reinit wipes the replica's data directory
        ("redis-memory.md", "redis-pattern-delete"),  # --scan --pattern ... | xargs redis-cli UNLINK
        ("redis-memory.md", "redis-memory-changed"),  # allkeys-lru: session keys are evicted when memory is full
        ("disk-full.md", "systemctl-stop"),  # the frontend is down until started again
        ("node-not-ready.md", "systemctl-restart-datastore"),  # containerd: every container on the node restarts
        ("postgres-replication-lag.md", "systemctl-restart-datastore"),  # patroni: the member restarts its postgres
        ("postgres-replication-lag.md", "verb-takes-down"),  # "never trigger `patronictl failover`": it would
        ("postgres-replication-lag.md", "sql-replication-changed"),  # the slot's standby can no longer catch up
    }
    assert not any(severity == "block" for pairs in found.values() for _, severity in pairs)
    infos = {rule for pairs in found.values() for rule, severity in pairs if severity == "info"}
    assert infos == {"rm-rf", "find-delete", "kubectl-delete", "sql-admin-function"}
    assert ("rm-rf", "info") in found["disk-full.md"]  # sudo rm -rf /var/cache/app-assets/*


def test_example_runbooks_diagnostics_are_clean() -> None:
    for doc in EXAMPLES.glob("*.md"):
        for command in extract_commands(doc.read_text(encoding="utf-8")):
            if is_diagnostic(command):
                assert check_command(command) == [], (doc.name, command)
