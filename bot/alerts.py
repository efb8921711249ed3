"""From a chat thread to a question and alert context (platform-neutral).

The adapter flattens each message (text, attachment titles and fields, link targets) into a
`ThreadMessage`; this module finds the alert in the thread (Alertmanager, Grafana or PagerDuty
notifications, or any message with alert labels), extracts its labels and runbook links, and
builds the question: what the user asked, else the alert, else the thread's first message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from retrieval.search import SearchFilters

_AM_TITLE = re.compile(r"^\[(FIRING|RESOLVED)(?::\s*(\d+))?\]\s*(.+)$", re.IGNORECASE)
_GRAFANA_LEGACY = re.compile(r"^\[(Alerting|OK|No Data|Pending|Resolved)\]\s*(.+)$", re.IGNORECASE)
_PAGERDUTY = re.compile(
    r"^(?:\W*)(Triggered|Acknowledged|Resolved|Escalated|Reassigned)\b[:\s]*#(\d+)\s*[:\-–]?\s*(.*)$", re.IGNORECASE)
_KV_LINE = re.compile(r"^\s*(?:[-•◦▪*]\s*)?([A-Za-z][\w .\-/]{0,40}?)\s*(?:=|:)\s+(.+?)\s*$")
_KV_PAIR = re.compile(r"""([A-Za-z_][\w.\-]*)=("[^"]*"|'[^']*'|[^\s,)]+)""")
_URL = re.compile(r"https?://[^\s<>|)\]]+")
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_:.\-]*$")
_CAMEL = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+$")
_SEVERITIES = {"critical", "error", "warning", "warn", "info", "high", "low", "page", "major", "minor",
               "sev1", "sev2", "sev3", "p1", "p2", "p3", "p4"}
_ALIASES = {
    "alert_name": "alertname", "rule": "alertname", "rule_name": "alertname", "alert_rule": "alertname",
    "runbook": "runbook_url", "runbook_link": "runbook_url", "playbook": "runbook_url", "playbook_url": "runbook_url",
    "env": "environment", "message": "description", "details": "description", "incident_title": "summary",
    "title": "summary", "ns": "namespace", "host": "instance", "node": "instance",
}
# Keys of notification furniture, not of the alert.
_NOISE = {"value", "values", "source", "silence", "dashboard", "panel", "labels", "annotations", "assigned",
          "assigned_to", "assignee", "escalation_policy", "firing", "resolved", "error", "footer", "graph",
          "generator_url", "fingerprint", "starts_at", "ends_at", "grafana_folder", "incident", "triggered",
          "acknowledged"}
_LABEL_KEYS = {"alertname", "severity", "service", "namespace", "cluster", "instance", "job", "pod",
               "container", "environment", "summary", "description", "runbook_url"}


@dataclass(frozen=True)
class ThreadMessage:
    """One message of a thread, flattened to text by the adapter."""

    text: str
    fields: tuple[tuple[str, str], ...] = ()  # structured (title, value) pairs, e.g. attachment fields
    links: tuple[tuple[str, str], ...] = ()  # (label, url) of every link in the message
    author: str | None = None
    bot: bool = False  # posted by an integration (alert sources are)
    own: bool = False  # posted by this bot: never read back as context


@dataclass
class Alert:
    """An alert found in a message: labels and annotations, where it came from, runbook links."""

    labels: dict[str, str] = field(default_factory=dict)
    origin: str | None = None  # alertmanager, grafana, pagerduty, labels
    runbook_links: list[str] = field(default_factory=list)


@dataclass
class ThreadQuestion:
    """What to ask the answerer about a thread."""

    question: str
    alert: dict[str, str] = field(default_factory=dict)
    origin: str | None = None
    thread: list[str] = field(default_factory=list)  # earlier messages, oldest first, the bot's own left out


def extract_alert(message: ThreadMessage) -> Alert | None:
    """The alert in one message, or None when the message does not look like an alert."""
    lines = [line.strip() for line in message.text.splitlines() if line.strip()]
    alert = Alert()
    titled = any(_title(line, alert) for line in lines[:4])
    pairs = list(message.fields) + [(m[1], m[2]) for m in (_KV_LINE.match(x.replace("*", "")) for x in lines) if m]
    explicit = _labels(pairs, message.links)
    known = _LABEL_KEYS & explicit.keys()
    if not titled and not ("alertname" in known and len(known) >= 2):
        return None
    alert.labels = {**alert.labels, **explicit}
    alert.origin = alert.origin or "labels"
    if alert.origin == "alertmanager" and "grafana" in message.text.lower():
        alert.origin = "grafana"
    alert.runbook_links = _runbook_links(alert.labels, message)
    if alert.runbook_links and "runbook_url" not in alert.labels:
        alert.labels["runbook_url"] = alert.runbook_links[0]
    return alert


def _title(line: str, alert: Alert) -> bool:
    """Parse a notification title into the alert; True when the line is one."""
    line = line.strip("*_ ")
    if m := _PAGERDUTY.match(line):
        alert.origin = "pagerduty"
        alert.labels.update(status=m[1].lower(), incident=f"#{m[2]}")
        rest = m[3].strip()
        if rest and not _title(rest, alert):
            alert.labels.setdefault("summary", rest)
            first = rest.split()[0].rstrip(":")
            if _CAMEL.match(first):
                alert.labels.setdefault("alertname", first)
        alert.origin = "pagerduty"
        return True
    if m := _AM_TITLE.match(line):
        alert.origin = alert.origin or "alertmanager"
        alert.labels["status"] = m[1].lower()
        _group_title(m[3], alert)
        return True
    if m := _GRAFANA_LEGACY.match(line):
        alert.origin = "grafana"
        alert.labels.update(status=m[1].lower(), alertname=m[2].strip())
        return True
    return False


def _group_title(rest: str, alert: Alert) -> None:
    """`KubePodCrashLooping (namespace=payments severity=critical)` or `Name value (value value)`."""
    name, _, tail = rest.partition(" ")
    if _IDENTIFIER.match(name):
        alert.labels.setdefault("alertname", name)
    for key, value in _KV_PAIR.findall(tail):
        alert.labels.setdefault(_key(key), value.strip("\"'"))
    if not _KV_PAIR.search(tail):
        for word in re.findall(r"[\w\-]+", tail):
            if word.lower() in _SEVERITIES:
                alert.labels.setdefault("severity", word.lower())


def _key(raw: str) -> str:
    key = re.sub(r"[\s\-/.]+", "_", raw.strip("*_` ").lower())
    return _ALIASES.get(key, key)


def _labels(pairs: Sequence[tuple[str, str]], links: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Label-like key/value pairs (notification furniture dropped), values cleaned."""
    out: dict[str, str] = {}
    for raw_key, raw_value in pairs:
        key = _key(raw_key)
        value = raw_value.strip().strip("*`_").strip()
        if not value or key in _NOISE or not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", key) or len(value) > 500:
            continue
        if key == "alert":  # `*Alert:* Pod x is crash looping - `critical``: a title with the severity
            value, severity = _split_severity(value)
            if severity:
                out.setdefault("severity", severity)
            key = "alertname" if _IDENTIFIER.match(value) else "summary"
        if key == "runbook_url" and not _URL.match(value):
            value = next((url for label, url in links if label.strip() == value), value)
        if key in ("severity", "urgency", "status"):
            value = value.lower()
        out.setdefault(key, value)
    if "severity" not in out and out.get("urgency"):
        out["severity"] = out["urgency"]
    return out


def _split_severity(value: str) -> tuple[str, str | None]:
    m = re.match(r"^(.*?)\s+[-–]\s+`?(\w+)`?$", value)
    if m and m[2].lower() in _SEVERITIES:
        return m[1].strip(), m[2].lower()
    return value, None


def _runbook_links(labels: dict[str, str], message: ThreadMessage) -> list[str]:
    urls = [labels["runbook_url"]] if _URL.match(labels.get("runbook_url", "")) else []
    for label, url in list(message.links) + [("", u) for u in _URL.findall(message.text)]:
        if re.search(r"runbook|playbook", f"{label} {url}", re.IGNORECASE):
            urls.append(url)
    return list(dict.fromkeys(urls))


def find_alert(messages: Sequence[ThreadMessage]) -> Alert | None:
    """The first alert in the thread (usually the parent message), skipping the bot's own messages."""
    for message in messages:
        if not message.own and (alert := extract_alert(message)):
            return alert
    return None


def alert_question(alert: Alert) -> str:
    """A question built from an alert: its name and summary (or description)."""
    labels = alert.labels
    name = labels.get("alertname", "")
    detail = labels.get("summary") or labels.get("description") or ""
    if detail and name and name.lower() not in detail.lower():
        return f"{name}: {detail}"
    return detail or name


def thread_question(asked: str, earlier: Sequence[ThreadMessage], *, asking: ThreadMessage | None = None,
                    max_thread: int = 50) -> ThreadQuestion:
    """The question for a thread: what was asked, else the alert, else the thread's first message.

    `earlier` is the thread before the asking message (oldest first); `asking` is the message that
    asked (a mention or a DM). An alert pasted into the asking message itself becomes the question."""
    own_alert = extract_alert(asking) if asking is not None else None
    alert = own_alert or find_alert(earlier)
    thread = [m.text for m in earlier if not m.own and m.text.strip()][-max_thread:]
    question = (alert_question(own_alert) if own_alert else "") or asked.strip()
    if not question and alert:
        question = alert_question(alert)
    if not question and thread:
        question = thread[0]
    return ThreadQuestion(question=question, alert=dict(alert.labels) if alert else {},
                          origin=alert.origin if alert else None, thread=thread)


def search_filters(sources: Sequence[str], alert: dict[str, str], use_labels: Sequence[str]) -> SearchFilters | None:
    """Filters from a channel's sources and, when configured, the alert's service/environment labels."""
    services = tuple(alert[k] for k in ("service",) if k in use_labels and alert.get(k))
    environments = tuple(alert[k] for k in ("environment",) if k in use_labels and alert.get(k))
    filters = SearchFilters(sources=tuple(sources), services=services, environments=environments)
    return None if filters.is_empty() else filters
