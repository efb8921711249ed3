"""Alert extraction from threads: Alertmanager, Grafana and PagerDuty notifications as Slack delivers
them (hand-written fixtures), flattened by the Slack adapter, read by the platform-neutral core."""

from __future__ import annotations

from typing import Any

import pytest

from bot.chat.alerts import (
    ThreadMessage, alert_question, extract_alert, find_alert, says_little, search_filters, thread_question,
)
from bot.context import IncidentContext
from bot.slack.blocks import plain_text, slack_question, thread_message

BOT_USER, BOT_ID = "UBOT0001", "BBOT0001"

# Alertmanager's Slack receiver with a common custom template: group title with key=value pairs,
# then an attachment text listing the labels.
ALERTMANAGER: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0ALERTMGR", "username": "Alertmanager",
    "ts": "1759990000.000100", "text": "",
    "attachments": [{
        "id": 1, "color": "a30200", "mrkdwn_in": ["text"],
        "fallback": "[FIRING:1] KubePodCrashLooping (namespace=payments severity=critical) | "
                    "http://alertmanager.monitoring.svc:9093/#/alerts?receiver=slack-payments",
        "title": "[FIRING:1] KubePodCrashLooping (cluster=prod-eu-1 namespace=payments severity=critical)",
        "title_link": "http://alertmanager.monitoring.svc:9093/#/alerts?receiver=slack-payments",
        "text": (
            "*Alert:* Pod payments/checkout-api-7d9f8b6c4-x2x7q is crash looping - `critical`\n"
            "*Description:* Pod payments/checkout-api-7d9f8b6c4-x2x7q (api) is in waiting state "
            "(reason: &quot;CrashLoopBackOff&quot;) for more than 15 minutes.\n"
            "*Runbook:* <https://runbooks.example.com/kubernetes/k8s-pod-crashloop|:notebook:>\n"
            "*Details:*\n"
            "  • *alertname:* `KubePodCrashLooping`\n"
            "  • *cluster:* `prod-eu-1`\n"
            "  • *container:* `api`\n"
            "  • *namespace:* `payments`\n"
            "  • *pod:* `checkout-api-7d9f8b6c4-x2x7q`\n"
            "  • *prometheus:* `monitoring/k8s`\n"
            "  • *service:* `checkout-api`\n"
            "  • *severity:* `critical`\n"
        ),
    }],
}

# Alertmanager's default Slack title: group label values, then the other common label values.
ALERTMANAGER_DEFAULT: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0ALERTMGR", "ts": "1759990000.000200", "text": "",
    "attachments": [{"title": "[FIRING:2] NodeFilesystemAlmostOutOfSpace (node-exporter critical prod-us-2)",
                     "title_link": "http://alertmanager.example.com/#/alerts?receiver=infra",
                     "text": "", "fallback": "[FIRING:2] NodeFilesystemAlmostOutOfSpace"}],
}

# Grafana unified alerting, Slack contact point with the default template.
GRAFANA: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0GRAFANA1", "username": "Grafana",
    "ts": "1759990000.000300", "text": "",
    "attachments": [{
        "color": "#D63232", "footer": "Grafana v11.2.0", "ts": 1759990000,
        "title": "[FIRING:1] DiskSpaceLow platform (prod-eu-1 /var/lib/docker db-01)",
        "title_link": "https://grafana.example.com/alerting/list",
        "text": (
            "**Firing**\n\nValue: B=93.4, C=1\nLabels:\n - alertname = DiskSpaceLow\n - cluster = prod-eu-1\n"
            " - grafana_folder = Platform\n - instance = db-01:9100\n - mountpoint = /var/lib/docker\n"
            " - service = platform\n - severity = warning\nAnnotations:\n"
            " - summary = Disk /var/lib/docker on db-01 is 93% full\n"
            " - runbook_url = <https://runbooks.example.com/linux/disk-full>\n"
            "Source: <https://grafana.example.com/alerting/grafana/fdx91k2/view?orgId=1>\n"
            "Silence: <https://grafana.example.com/alerting/silence/new?alertmanager=grafana&amp;matcher=alertname%3DDiskSpaceLow>\n"
            "Dashboard: <https://grafana.example.com/d/node-exporter?orgId=1>\n"
        ),
    }],
}

# Grafana legacy alerting: "[Alerting] rule name", message, rule tags and metric values as fields.
GRAFANA_LEGACY: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0GRAFANA1", "ts": "1759990000.000400", "text": "",
    "attachments": [{
        "color": "#D63232", "footer": "Grafana v8.5.27",
        "title": "[Alerting] Postgres replication lag",
        "title_link": "https://grafana.example.com/d/pg-overview/postgres?tab=alert&viewPanel=4&orgId=1",
        "text": "Replica db-replica-2 is more than 60 seconds behind the primary.",
        "fields": [
            {"title": "replication_lag_seconds{instance=\"db-replica-2:9187\"}", "value": "184.0", "short": True},
            {"title": "severity", "value": "warning", "short": True},
            {"title": "service", "value": "orders-db", "short": True},
            {"title": "environment", "value": "production", "short": True},
        ],
    }],
}

# PagerDuty's Slack app: "Triggered: #1234 title" with the service as a linked field.
PAGERDUTY: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0PAGERDTY", "username": "PagerDuty",
    "ts": "1759990000.000500",
    "text": "Triggered: <https://acme.pagerduty.com/incidents/Q1X2Y3Z4AB|#1234> KafkaConsumerLagHigh: consumer "
            "group orders-consumer is 145k messages behind",
    "attachments": [{
        "color": "#e01e5a",
        "fields": [
            {"title": "Status", "value": "Triggered", "short": True},
            {"title": "Urgency", "value": "High", "short": True},
            {"title": "Service", "value": "<https://acme.pagerduty.com/service-directory/P9XYZ12|orders-pipeline>",
             "short": True},
            {"title": "Assigned", "value": "<@U0ONCALL1>", "short": True},
        ],
    }],
}

HUMAN = {"type": "message", "user": "U0ALICE01", "ts": "1759990000.000900",
         "text": "restarted it twice, still failing: see <https://logs.example.com/x|the logs>"}


def msg(raw: dict[str, Any]) -> ThreadMessage:
    return thread_message(raw, BOT_USER, BOT_ID)


def test_alertmanager_custom_template() -> None:
    alert = extract_alert(msg(ALERTMANAGER))
    assert alert is not None and alert.origin == "alertmanager"
    labels = alert.labels
    assert labels["alertname"] == "KubePodCrashLooping" and labels["status"] == "firing"
    assert (labels["severity"], labels["namespace"], labels["cluster"], labels["service"]) == (
        "critical", "payments", "prod-eu-1", "checkout-api")
    assert labels["pod"] == "checkout-api-7d9f8b6c4-x2x7q" and labels["container"] == "api"
    assert labels["summary"] == "Pod payments/checkout-api-7d9f8b6c4-x2x7q is crash looping"
    assert '(reason: "CrashLoopBackOff")' in labels["description"], "HTML entities decoded"
    assert labels["runbook_url"] == "https://runbooks.example.com/kubernetes/k8s-pod-crashloop"
    assert alert.runbook_links == ["https://runbooks.example.com/kubernetes/k8s-pod-crashloop"]
    assert alert_question(alert) == "KubePodCrashLooping: Pod payments/checkout-api-7d9f8b6c4-x2x7q is crash looping"


def test_alertmanager_default_title_gives_the_name_and_severity() -> None:
    alert = extract_alert(msg(ALERTMANAGER_DEFAULT))
    assert alert is not None and alert.origin == "alertmanager"
    assert alert.labels["alertname"] == "NodeFilesystemAlmostOutOfSpace" and alert.labels["severity"] == "critical"
    assert alert_question(alert) == "NodeFilesystemAlmostOutOfSpace"


def test_grafana_unified_alerting() -> None:
    alert = extract_alert(msg(GRAFANA))
    assert alert is not None and alert.origin == "grafana"
    labels = alert.labels
    assert (labels["alertname"], labels["severity"], labels["service"], labels["cluster"]) == (
        "DiskSpaceLow", "warning", "platform", "prod-eu-1")
    assert labels["instance"] == "db-01:9100" and labels["mountpoint"] == "/var/lib/docker"
    assert labels["runbook_url"] == "https://runbooks.example.com/linux/disk-full"
    assert "value" not in labels and "silence" not in labels and "grafana_folder" not in labels, "furniture dropped"
    assert alert_question(alert) == "DiskSpaceLow: Disk /var/lib/docker on db-01 is 93% full"


def test_grafana_legacy_alerting() -> None:
    alert = extract_alert(msg(GRAFANA_LEGACY))
    assert alert is not None and alert.origin == "grafana"
    assert alert.labels["alertname"] == "Postgres replication lag" and alert.labels["status"] == "alerting"
    assert (alert.labels["severity"], alert.labels["service"], alert.labels["environment"]) == (
        "warning", "orders-db", "production")
    assert not any("{" in key for key in alert.labels), "metric value fields are not labels"


def test_pagerduty_incident() -> None:
    alert = extract_alert(msg(PAGERDUTY))
    assert alert is not None and alert.origin == "pagerduty"
    labels = alert.labels
    assert labels["incident"] == "#1234" and labels["status"] == "triggered"
    assert labels["service"] == "orders-pipeline", "the link label, not the URL"
    assert labels["alertname"] == "KafkaConsumerLagHigh" and labels["severity"] == "high"
    assert labels["summary"].startswith("KafkaConsumerLagHigh: consumer group orders-consumer")
    assert "assigned" not in labels


def test_human_messages_are_not_alerts() -> None:
    assert extract_alert(msg(HUMAN)) is None
    assert extract_alert(ThreadMessage(text="note: the deploy finished at 10:02\nstatus: fine")) is None


def test_labels_without_a_known_title_need_an_alertname() -> None:
    pasted = ThreadMessage(text="alertname=HighErrorRate\nalertname: HighErrorRate\nservice: checkout\nseverity: page")
    alert = extract_alert(pasted)
    assert alert is not None and alert.origin == "labels" and alert.labels["service"] == "checkout"


def test_thread_question_prefers_what_was_asked_then_the_alert() -> None:
    thread = [msg(ALERTMANAGER), msg(HUMAN), msg({"type": "message", "user": BOT_USER, "ts": "1", "text": "old answer"})]
    asked = thread_question("how do I get the previous logs?", thread)
    assert asked.question == "how do I get the previous logs?"
    assert asked.alert["alertname"] == "KubePodCrashLooping" and asked.origin == "alertmanager"
    assert all("old answer" not in t for t in asked.thread), "the bot's own messages are not context"
    assert any("restarted it twice" in t for t in asked.thread)
    bare = thread_question("", thread)
    assert bare.question.startswith("KubePodCrashLooping: Pod payments/checkout-api")


def test_thread_question_without_an_alert_uses_the_first_message() -> None:
    q = thread_question("", [msg(HUMAN)])
    assert q.question.startswith("restarted it twice") and q.alert == {}
    assert thread_question("", []).question == ""


def test_an_alert_pasted_into_the_question_is_the_question() -> None:
    pasted = ThreadMessage(text="[FIRING:1] KafkaConsumerLagHigh (consumergroup=orders severity=warning)")
    q = thread_question("[FIRING:1] KafkaConsumerLagHigh (consumergroup=orders severity=warning)", [], asking=pasted)
    assert q.question == "KafkaConsumerLagHigh" and q.alert["consumergroup"] == "orders"


def test_find_alert_skips_the_bots_own_messages() -> None:
    own = ThreadMessage(text="[FIRING:1] Quoted (severity=info)", own=True)
    assert find_alert([own, msg(GRAFANA)]).labels["alertname"] == "DiskSpaceLow"  # type: ignore[union-attr]


@pytest.mark.parametrize("raw, text, links", [
    ("<@U123> hi <#C1|incidents>", "@U123 hi #incidents", []),
    ("see <https://x.example/a?b=1&amp;c=2|the doc> &lt;now&gt;", "see the doc <now>",
     [("the doc", "https://x.example/a?b=1&c=2")]),
    ("<!here> <https://bare.example/>", "@here https://bare.example/", [("https://bare.example/", "https://bare.example/")]),
])
def test_plain_text_of_slack_markup(raw: str, text: str, links: list[tuple[str, str]]) -> None:
    assert plain_text(raw) == (text, links)


def test_alert_labels_become_filters_only_when_configured() -> None:
    alert = {"service": "checkout", "environment": "production", "alertname": "X"}
    assert search_filters([], alert, []) is None
    assert search_filters(["examples"], alert, []).sources == ("examples",)  # type: ignore[union-attr]
    both = search_filters([], alert, ["service", "environment"])
    assert both is not None and both.services == ("checkout",) and both.environments == ("production",)


# Opsgenie's Slack app: "#1234: AlertName: target" under "New alert created", priority and tags as fields.
OPSGENIE: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0OPSGENIE", "username": "Opsgenie",
    "ts": "1759990000.000600", "text": "",
    "attachments": [{
        "pretext": "New alert created", "fallback": 'New alert: "#881: WidgetQueueStalled: widgets/consumer"',
        "title": "#881: WidgetQueueStalled: widgets/consumer",
        "title_link": "https://acme.app.opsgenie.com/alert/detail/0f0f/details",
        "text": "The widget queue has not been drained for 12 minutes.",
        "fields": [{"title": "Priority", "value": "P2", "short": True},
                   {"title": "Tags", "value": "prod, widgets", "short": False}],
    }],
}

# Datadog monitors: "[Triggered on {host:...}] Name", the message as text.
DATADOG: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0DATADOG1", "username": "Datadog",
    "ts": "1759990000.000700", "text": "",
    "attachments": [{
        "title": "[Triggered on {host:db-7,device:eth1}] HostPacketLoss",
        "title_link": "https://app.datadoghq.com/monitors/1",
        "text": "eth1 on db-7 drops 4% of its packets.\n`env:prod` · `host:db-7`",
    }],
}

# Alertmanager's Slack receiver with a team template: bold summary line, description, labels, and
# "Runbook" / "Silence" link buttons.
ALERTMANAGER_BUTTONS: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0ALERTMGR", "username": "alertmanager",
    "ts": "1759990000.000800", "text": "",
    "attachments": [{
        "title": "[FIRING:1] WidgetQueueStalled (prod widgets s2)",
        "text": "*Widget consumers stopped draining the queue*\nNo message was consumed for 12 minutes.\n\n"
                "*env:* `prod`  *severity:* `s2`",
        "actions": [
            {"type": "button", "text": ":green_book: Runbook", "url": "https://git.example.com/ops/runbooks/blob/main/docs/widgets/queue-stalled.md"},
            {"type": "button", "text": ":no_bell: Silence", "url": "https://alerts.example.com/#/silences/new"},
        ],
    }],
}

# A home-grown relay: no known format, just a bot's message at the top of the thread.
RELAY: dict[str, Any] = {
    "type": "message", "subtype": "bot_message", "bot_id": "B0RELAY001", "username": "disk-check",
    "ts": "1759990000.000900",
    "text": ":warning: *Disk usage high on build-03* (ci fleet)\n`/dev/sda1` is 96% used, 2.1G free.\n"
            "<https://grafana.example.com/d/disk|View in Grafana>",
}


def test_opsgenie_and_datadog_notifications() -> None:
    alert = extract_alert(msg(OPSGENIE))
    assert alert is not None and alert.origin == "opsgenie"
    assert alert.labels["alertname"] == "WidgetQueueStalled" and alert.labels["incident"] == "#881"
    assert alert.labels["summary"] == "The widget queue has not been drained for 12 minutes."
    dd = extract_alert(msg(DATADOG))
    assert dd is not None and dd.origin == "datadog" and dd.labels["alertname"] == "HostPacketLoss"
    assert dd.labels["summary"] == "eth1 on db-7 drops 4% of its packets."


def test_a_bold_first_line_is_the_summary_and_a_runbook_button_is_a_runbook_link() -> None:
    alert = extract_alert(msg(ALERTMANAGER_BUTTONS))
    assert alert is not None and alert.labels["alertname"] == "WidgetQueueStalled"
    assert alert.labels["summary"] == "Widget consumers stopped draining the queue"
    assert alert.labels["description"] == "No message was consumed for 12 minutes."
    assert alert.runbook_links == ["https://git.example.com/ops/runbooks/blob/main/docs/widgets/queue-stalled.md"]


def test_an_unknown_notification_at_the_top_of_a_thread_is_read_as_the_alert() -> None:
    assert extract_alert(msg(RELAY)) is None
    alert = find_alert([msg(RELAY), msg(HUMAN)])
    assert alert is not None and alert.origin == "notification"
    assert alert.labels["summary"] == "Disk usage high on build-03 (ci fleet)"
    assert "96% used" in alert.labels["description"] and "View in Grafana" not in alert.labels["description"]
    assert find_alert([msg(HUMAN)]) is None, "people's messages are not notifications"


@pytest.mark.parametrize("asked, little", [
    ("what do I do?", True), ("runbook?", True), ("", True), ("is this safe to ignore?", True),
    ("how do i fix this", True), ("how do we get quorum back", False),
    ("should I bump the cpu limit or leave it", False),
])
def test_says_little(asked: str, little: bool) -> None:
    assert says_little(asked) is little


def test_the_alert_drives_the_search_when_the_mention_says_little() -> None:
    thread = [msg(ALERTMANAGER_BUTTONS), msg(HUMAN)]
    bare = slack_question({"text": f"<@{BOT_USER}> what do I do?", "user": "U1", "ts": "2"}, [ALERTMANAGER_BUTTONS, HUMAN],
                          BOT_USER, BOT_ID)
    assert bare is not None and bare.question == "what do I do?", "the bot's own mention is never shown"
    ctx = IncidentContext(alert=bare.alert, thread=bare.thread)
    query = ctx.search_query(bare.question)
    assert query.startswith("WidgetQueueStalled. Widget consumers stopped draining the queue")
    assert "what do I do" not in query
    asked = thread_question("do we restart the consumers?", thread)
    both = IncidentContext(alert=asked.alert).search_query(asked.question)
    assert both.startswith("do we restart the consumers? WidgetQueueStalled.")
    assert ctx.runbook_links() == ["https://git.example.com/ops/runbooks/blob/main/docs/widgets/queue-stalled.md"]
    assert slack_question({"text": f"<@{BOT_USER}> help", "user": "U1", "ts": "2"}, [], BOT_USER, BOT_ID) is None
