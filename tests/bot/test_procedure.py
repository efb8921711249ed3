"""Reading a runbook's procedure as steps: which sections, which blocks, which commands."""

from __future__ import annotations

from bot.procedure import heading_role, looks_like_command, meaning, procedure

ALERT_RUNBOOK = """---
title: Widget Queue Stalled
---
# WidgetQueueStalled

## Meaning

The widget queue has not been drained for ten minutes. Producers keep writing.

## Impact

Orders pile up and are shipped late.

## Diagnosis

### Consumer pods

Check that the consumer pods are running and not restarting.

```shell
$ kubectl -n widgets get pods -l app=consumer
```

```
NAME             READY   STATUS    RESTARTS   AGE
consumer-0       1/1     Running   0          2d
```

### Broker

Look for `queue full` in the broker logs.

## Mitigation

Other things to check:

- the consumer's credentials
- the broker's disk

1. Restart the consumers:

   ```bash
   kubectl -n widgets rollout restart deployment/consumer
   ```

   Wait until every pod is ready.

2. If the queue still grows, page the widget team.
"""

NUMBERED = """# Gitaly token mismatch

## Symptoms

* Calls fail with PermissionDenied.

## 1. Review the errors

- Use this query to see the error type: `sum(rate(auth_errors_total[5m])) by (error)`
- Compare the clocks of the affected nodes.

## 2. Fix the tokens

| node | token |
|------|-------|
| a    | x     |

Rotate the token on every node, then restart them.
"""

PLAIN = """# Cache notes

Some background on the cache.

## Flushing keys

Run `redis-cli --scan --pattern 'session:*'` to list the keys first, then delete them in batches.
"""


def test_the_procedure_is_diagnosis_then_mitigation_in_order_with_sub_headings() -> None:
    steps = procedure([ALERT_RUNBOOK])
    texts = [s.instruction for s in steps]
    assert texts[0].startswith("*Consumer pods:* Check that the consumer pods")
    assert steps[0].commands == ["$ kubectl -n widgets get pods -l app=consumer"], "sample output is not a command"
    assert texts[1].startswith("*Broker:* Look for `queue full`")
    assert not any("drained for ten minutes" in t or "shipped late" in t for t in texts), "meaning and impact are not steps"
    lead_in = next(t for t in texts if t.startswith("Other things to check"))
    assert "credentials" in lead_in and "disk" in lead_in, "a lead-in and its list are one step"
    restart = next(s for s in steps if s.instruction.startswith("Restart the consumers"))
    assert restart.commands == ["kubectl -n widgets rollout restart deployment/consumer"]
    assert "Wait until every pod is ready" in restart.instruction
    assert texts[-1].startswith("If the queue still grows")


def test_numbered_headings_are_steps_and_tables_are_left_out() -> None:
    steps = procedure([NUMBERED])
    assert steps[0].instruction.startswith("*Review the errors:* Use this query")
    assert steps[0].commands == [], "a PromQL query inline is not a shell command"
    assert any(s.instruction.startswith("*Fix the tokens:* Rotate the token") for s in steps)
    assert not any("PermissionDenied" in s.instruction for s in steps), "symptoms describe, they are not steps"
    assert not any("|" in s.instruction for s in steps)


def test_without_procedure_headings_the_matched_sections_are_read() -> None:
    sections = ["# Cache notes\n\nSome background on the cache.\n", PLAIN.split("\n\n", 2)[2]]
    steps = procedure(sections, matched=[1])
    assert len(steps) == 1 and steps[0].section == 1
    assert steps[0].commands == ["redis-cli --scan --pattern 'session:*'"], "an inline command is copyable"


def test_many_steps_are_shared_between_the_parts_of_the_procedure() -> None:
    diagnosis = "\n".join(f"{n}. Check thing {n} on the host." for n in range(1, 11))
    mitigation = "\n".join(f"{n}. Fix thing {n} on the host." for n in range(1, 11))
    steps = procedure([f"# X\n\n## Diagnosis\n\n{diagnosis}\n\n## Mitigation\n\n{mitigation}\n"], max_steps=6)
    assert [s.group for s in steps] == ["Diagnosis"] * 3 + ["Mitigation"] * 3


def test_meaning_and_heading_roles() -> None:
    assert meaning([ALERT_RUNBOOK]) == "The widget queue has not been drained for ten minutes. Producers keep writing."
    assert meaning([PLAIN]) == "Some background on the cache."
    assert heading_role("Diagnosis") == heading_role("3. Restart") == heading_role("Mitigation steps") == "doing"
    assert heading_role("Impact") == heading_role("Meaning") == "describing"
    assert heading_role("Consumer pods") == ""


def test_commands_are_told_from_output() -> None:
    assert looks_like_command("$ kubectl get pods", "")
    assert looks_like_command("journalctl -u kubelet --since -1h", "bash")
    assert looks_like_command("SELECT * FROM pg_stat_replication;", "sql")
    assert not looks_like_command("NAME   READY   STATUS\nweb-0  1/1     Running", "")
    assert not looks_like_command('{"level": "error"}', "json")
    assert not looks_like_command("- alertname = KubeNodeNotReady", "")
