"""The learned second opinion (guardrails/learned.py): what it adds to the rules, what it is never asked about,
how an operator turns it off, and that it was never trained on the sets kept unseen."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest

from guardrails import check_command, default_policy, invocations, learned, parse_policy
from guardrails.commands import LEARNED, asks_learned

WITH_LEARNED = True  # tests/guardrails/conftest.py: the learned score stays on here

REPO = Path(__file__).resolve().parents[2]
RULES_ONLY = default_policy().with_severities({LEARNED: "off"})

# Commands no rule names, in tools and dialects the rules do not know well (written for this test).
RULES_MISS_LEARNED_WARNS = [
    "sudo sed -i 's/all_squash/no_all_squash/' /etc/exports && sudo exportfs -ra",  # NFS squashing off
    "sudo unbound-control set_option val-permissive-mode: yes",  # DNSSEC failures let through
    "maas admin subnet update 3 dhcp_on=False",  # DHCP off on a subnet
    "curl -X POST http://pacs:8042/tools/execute-script --data-binary @purge.lua",  # a script run by the server
    "isi audit settings global modify --config-auditing-enabled=false",  # audit off
    "sudo nft add rule inet filter input tcp dport 5432 accept",  # the database port opened
    "db2 restore db ORDERS from /backup taken at 20250101020000 replace existing without prompting",
]

# Their look-alikes: reads of the same tools, and what runbooks' code blocks hold besides commands.
QUIET = [
    "sudo unbound-control list_forwards",
    "maas admin subnets read",
    "git remote add ops git@example.com:infra/chef-repo",
    "kubectl config use-context prod-eu",
    "isi audit settings global view",
    "sudo nft list ruleset",
    "db2 list history backup all for ORDERS",
    "exportfs -v",
    "curl -s http://pacs:8042/system",
    "dig +short api.example.com",
    "kubectl get pods -A -o wide",
    "git push origin fix/typo",
    "gcloud config set project acme-staging",
    # pasted output, config and prose: not commands
    "log_hostname                | off",
    "api-7c9f8d-xk2lp    1/1     Running   0          24h",
    "public and secret key created and signed.",
    "Re-enter password:",
    "NAME   READY   STATUS",
    "Plan: 3 to add, 0 to change, 2 to destroy.",
]


@pytest.fixture(scope="module")
def shipped() -> learned.Model:
    found = learned.model()
    assert found is not None, "guardrails/learned.bin and learned.json must ship with the package"
    return found


@pytest.mark.parametrize("command", RULES_MISS_LEARNED_WARNS)
def test_learned_warns_where_the_rules_are_silent(command: str, shipped: learned.Model) -> None:
    assert check_command(command, RULES_ONLY) == []
    found = check_command(command)
    assert [(f.rule, f.severity) for f in found] == [(LEARNED, "warn")]
    assert re.search(r"Score [01]\.\d\d, from '[^']+'", found[0].reason)  # why, in the command's words
    assert shipped.score(command) > shipped.threshold


@pytest.mark.parametrize("command", QUIET)
def test_reads_and_pasted_output_stay_quiet(command: str) -> None:
    assert check_command(command) == []


def test_a_rule_verdict_stands() -> None:
    # a rule's finding is never doubled or raised by the learned score; a throwaway target stays housekeeping
    assert [f.rule for f in check_command("rm -rf /var/lib/postgresql/15/main")] != [LEARNED]
    assert all(f.rule != LEARNED for f in check_command("helm uninstall preview-pr-123 -n previews"))


def test_an_operator_turns_it_off_or_down() -> None:
    command = RULES_MISS_LEARNED_WARNS[0]
    off = parse_policy(f"disable: [{LEARNED}]", base=default_policy())
    assert check_command(command, off) == []
    lowered = parse_policy(f"severity: {{{LEARNED}: info}}", base=default_policy())
    assert [(f.rule, f.severity) for f in check_command(command, lowered)] == [(LEARNED, "info")]


def test_what_an_operator_silenced_is_not_brought_back() -> None:
    command = "zorkctl cluster delete prod-east --force"  # the verb detector's warning
    assert [f.rule for f in check_command(command)] == ["verb-destroys"]
    silenced = parse_policy("disable: [verb-destroys]", base=default_policy())
    assert check_command(command, silenced) == []


def test_without_its_weights_the_rules_still_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(learned, "WEIGHTS", tmp_path / "missing.bin")
    learned.model.cache_clear()
    try:
        assert learned.model() is None
        assert check_command(RULES_MISS_LEARNED_WARNS[0]) == []
        assert [f.rule for f in check_command("rm -rf /")] != []
    finally:
        monkeypatch.undo()
        learned.model.cache_clear()
    assert learned.model() is not None


def test_weights_trained_with_another_word_table_are_not_used(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    table = tmp_path / "learned_words.bin"
    table.write_bytes(zlib.compress(b"halt 1 2 3\n"))
    for words in (tmp_path / "missing.bin", table):  # no table, or one the weights were not trained with
        monkeypatch.setattr(learned, "WORDS", words)
        learned.model.cache_clear()
        learned._word_table.cache_clear()
        try:
            assert learned.model() is None
            assert [f.rule for f in check_command("rm -rf /")] != []  # the rules still run
        finally:
            monkeypatch.undo()
            learned.model.cache_clear()
            learned._word_table.cache_clear()
    assert learned.model() is not None


def test_words_fall_in_clusters_of_meaning() -> None:
    assert learned.words("sudo resetToDefault --force /srv/x_y") == ["sudo", "reset", "default", "force", "srv"]
    table, crc = learned._word_table()
    assert len(table) > 10_000 and crc
    fine = {w: table[w][-1] for w in ("halt", "pause", "stop", "describe", "show")}
    assert fine["halt"] == fine["pause"] == fine["stop"] and len({fine["halt"], fine["describe"], fine["show"]}) == 3
    assert {g for g in learned.grams("halt the node") if g.startswith("c")} >= set(table["halt"])


def test_scores_are_probabilities_and_long_input_is_bounded(shipped: learned.Model) -> None:
    for text in ("", "   ", "x" * 100_000, "rm " * 50_000, "\x00\ufffd", "abc-" * 50_000):
        assert 0.0 <= shipped.score(text) <= 1.0
    assert len(learned.grams("a " * 100_000)) < 20 * learned.MAX_TOKENS
    assert len(learned.grams("stop " * 100_000)) < 20 * learned.MAX_TOKENS


def test_never_trained_on_the_sets_kept_unseen(shipped: learned.Model) -> None:
    meta = shipped.meta
    trained, held_out = set(meta["trained_on_sets"]), set(meta["held_out_sets"])
    assert trained and held_out and not trained & held_out
    kept_unseen = {int(re.search(r"(\d+)", p.stem).group(1)) for p in (REPO / "bench").glob("guard_heldout*.yaml")
                   if "kept unseen" in p.read_text(encoding="utf-8").split("\n", 1)[0]}
    assert kept_unseen and kept_unseen <= held_out
    assert meta["threshold"] == shipped.threshold and 0.5 <= shipped.threshold < 1.0
    assert json.loads((REPO / "guardrails" / "learned.json").read_text(encoding="utf-8"))["bits"] == learned.BITS


# On real runbooks (the eval corpora, read in place, and the project's examples): what the learned score adds.
from tests.guardrails.test_corpora import EXAMPLES, corpus_commands, is_diagnostic, needs_eval  # noqa: E402


@needs_eval
def test_on_real_runbooks_diagnostics_stay_clean_and_warnings_stay_few() -> None:
    rows = [(doc, c, check_command(c)) for doc, c in corpus_commands()]
    assert [(doc, c) for doc, c, found in rows if is_diagnostic(c) and found] == []
    added = [c for _, c, found in rows if any(f.rule == LEARNED for f in found)]
    # 3,903 commands: the rules warn on 127; the learned score adds about 270 (fleet-wide chef-client runs,
    # ALTER SYSTEM, kill -9 and killall, services started and restarted, GRANTs, users moved between groups,
    # umount, `chmod -R`, `find / -exec chgrp`; and noise: a profiler run, `git push`, VACUUM FREEZE), never a block.
    # 314 since the tenth session's model (solver run to convergence, word clusters, threshold 0.75): more
    # remediation (`tf apply -target`, `SET statement_timeout=0`, socat listening on port 22, data moved aside)
    # and more noise (`ssh git@gitlab.com`, `gem install bundler`, an exception's name pasted from a log).
    # 350 with the eleventh session's (threshold 0.71, chosen by cross-validation as before; 320 at 0.75): git
    # objects unpacked over every pack, CREATE ROLE, services started on a fleet, `chown` over a tree; and noise
    # (`source ~/.rvm/scripts/rvm`, `bundle update --bundler`, a `perf stat` run, `gcloud compute ssh`, a pasted
    # sentence)
    assert 50 <= len(added) <= 360, len(added)
    assert not any(f.severity == "block" and f.rule == LEARNED for _, _, found in rows for f in found)


def test_example_runbooks_diagnostics_stay_clean_with_the_learned_score() -> None:
    from guardrails import extract_commands
    added = []
    for doc in EXAMPLES.glob("*.md"):
        for command in extract_commands(doc.read_text(encoding="utf-8")):
            found = check_command(command)
            if is_diagnostic(command):
                assert found == [], (doc.name, command)
            added += [command for f in found if f.rule == LEARNED]
    # 20 when written: rollouts restarted, services restarted and started, CONFIG SET and CLIENT KILL on Redis, a
    # feature flag off in production, Argo CD's sync turned off, an HPA and an ingress patched, a DLQ skipped,
    # logs truncated in place; all remediation steps a runbook gives, none a read
    assert len(added) <= 30, added


def test_training_and_the_shipped_reader_agree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What bench/guard_train.py fits is what learned.py scores: same features, weights through int16."""
    pytest.importorskip("sklearn", reason="scikit-learn trains the model (pip install scikit-learn); not needed to run")
    import sys
    sys.path.insert(0, str(REPO / "bench"))
    import guard_train

    rows = guard_train.labelled(REPO / "tests" / "guardrails" / "cases.yaml")
    fitted = guard_train.fit([c for c, _ in rows], [y for _, y in rows])
    monkeypatch.setattr(learned, "WEIGHTS", tmp_path / "learned.bin")
    monkeypatch.setattr(learned, "META", tmp_path / "learned.json")
    learned.model.cache_clear()
    try:
        learned.save([float(w) for w in fitted.coef_[0]], float(fitted.intercept_[0]), {"threshold": 0.5})
        reader = learned.model()
        assert reader is not None
        sample = [c for c, _ in rows[:200]]
        expected = fitted.predict_proba(guard_train.matrix(sample))[:, 1]
        assert max(abs(reader.score(c) - e) for c, e in zip(sample, expected)) < 0.01
    finally:
        monkeypatch.undo()
        learned.model.cache_clear()


@pytest.mark.parametrize("command, asked", [
    # a POST to an endpoint named for a read, or asked to rehearse, only reads
    ("curl -s -X POST 'http://es-prod:9200/logs-*/_search' -d '{\"query\":{\"match_all\":{}}}'", False),
    ("curl -s -X POST -u \"$KEY:\" https://api.tailscale.com/api/v2/tailnet/-/acl/validate -d @policy.hujson", False),
    ("curl -s -X POST \"$PREFECT_API_URL/flow_runs/filter\" -d '{\"limit\": 5}'", False),
    ("curl -s -X POST \"https://$TITLE.playfabapi.com/Admin/GetTasks\" -H \"X-SecretKey: $K\"", False),
    ("curl -s -X POST \"$CTRL/tables/events/rebalance?type=REALTIME&dryRun=true\"", False),
    # the same shapes that act
    ("curl -s -X POST \"$CTRL/tables/events/rebalance?type=REALTIME\"", True),
    ("curl -X POST \"https://$TITLE.playfabapi.com/Admin/IncrementPlayerStatisticVersion\" -d '{}'", True),
    ("curl -X POST -u admin:pw https://os:9200/_plugins/_ism/change_policy/logs-app-000123 -d '{}'", True),
    ("curl -s \"$ES/_snapshot/nightly/snap-1/_restore\"", True),  # a URL in a variable is read as a URL
    # Redis commands that only read, past redis-cli's options and their values; those that act are asked about
    ("redis-cli --tls -h $REDIS_HOST --user ops --pass \"$REDIS_PASS\" LLEN queue:jobs", False),
    ("redis-cli -h cache-1 -n 2 hgetall session:42", False),
    ("redis-cli -h cache-1 CONFIG GET maxmemory-policy", False),
    ("redis-cli -h cache-1 SCRIPT EXISTS 9b1c0e", False),
    ("redis-cli -h cache-1 CONFIG SET maxmemory-policy noeviction", True),
    ("redis-cli -h cache-1 SCRIPT FLUSH", True),
    ("redis-cli -h cache-1 CLIENT KILL TYPE pubsub", True),
    # a plain login is an interactive session; a tunnel opened is not
    ("ssh git@gitlab.com", False),
    ("sudo ssh root@db-01.internal", False),
    ("ssh -R 2222:localhost:22 me@home-vps.example.net", True),
    # a target named as throwaway does not keep a grant, a script or a listener from being asked about; a
    # diagnostic that writes over a file outside scratch, or a mount that mounts, does not only read
    ("icacls D:\\Shares\\HR /grant *S-1-1-0:(OI)(CI)F /T", True),
    ("New-NetFirewallRule -DisplayName 'temp any' -Direction Inbound -Action Allow -RemoteAddress Any", True),
    ("openssl genrsa -out /etc/ssl/private/www.key 2048", True),
    ("openssl genrsa -out /tmp/www.key 2048", False),
    ("mount -o remount,rw /srv", True),
    ("mount | grep nfs", False),
    # a wrapper that carries a read to where it runs is a read; what it carries decides
    ("ssh web-3 'df -h /var/lib/docker'", False),
    ("kubectl -n shop exec api-0 -- curl -sI http://localhost:8080/health", False),
    ("docker exec api cat /etc/app/app.conf", False),
    ("ssh web-3 'systemctl restart nginx'", True),
    ("docker run --rm -v /:/host alpine ls /host", True),  # (a new container, with the host's root mounted)
])
def test_http_and_redis_reads_are_not_asked_about(command: str, asked: bool) -> None:
    policy = default_policy()
    assert asks_learned(command, invocations(command, policy), policy) is asked
