"""From a chat thread to a question and alert context (platform-neutral).

The adapter flattens each message (text, attachment titles and fields, link targets) into a
`ThreadMessage`; this module finds the alert in the thread (Alertmanager, Grafana or PagerDuty
notifications, or any message with alert labels), extracts its labels and runbook links, and
builds the question: what the user asked, else the alert, else the thread's first message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from retrieval.analyzer import analyze
from retrieval.search_types import SearchFilters

_AM_TITLE = re.compile(r"^\[(FIRING|RESOLVED)(?::\s*(\d+))?\]\s*(.+)$", re.IGNORECASE)
_GRAFANA_LEGACY = re.compile(r"^\[(Alerting|OK|No Data|Pending|Resolved)\]\s*(.+)$", re.IGNORECASE)
_PAGERDUTY = re.compile(
    r"^(?:\W*)(Triggered|Acknowledged|Resolved|Escalated|Reassigned)\b[:\s]*#(\d+)\s*[:\-–]?\s*(.*)$", re.IGNORECASE)
# Opsgenie: `#2017: PrometheusTSDBReloadsFailing: monitoring/prometheus-k8s-0` (after "New alert created").
_OPSGENIE = re.compile(r"^#(\d+):\s*([^:]+?)(?::\s+(.*))?$")
# Datadog monitors: `[Triggered on {host:db-1}] NodeNetworkTransmitErrs`, `[Recovered] ...`, `[Warn] ...`.
_DATADOG = re.compile(r"^\[(Triggered|Re-Triggered|Recovered|Warn|Warning|Alert|No Data)(?: on \{[^}]*\})?\]\s*(.+)$",
                      re.IGNORECASE)
_BOLD_TITLE = re.compile(r"^(?:[:\w+-]+:\s*)*\*([^*\n]{3,200})\*\s*(.*)$")  # `:warning: *Disk usage high* (...)`
_KV_LINE = re.compile(r"^\s*(?:[-•◦▪*]\s*)?([A-Za-z][\w .\-/]{0,40}?)\s*(?:=|:)\s+(.+?)\s*$")
_KV_PAIR = re.compile(r"""([A-Za-z_][\w.\-]*)=("[^"]*"|'[^']*'|[^\s,)]+)""")
_URL = re.compile(r"https?://[^\s<>|)\]]+")
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_:.\-]*$")
_CAMEL = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+$")
_SEVERITIES = {"critical", "error", "warning", "warn", "info", "high", "low", "page", "major", "minor",
               "sev1", "sev2", "sev3", "p1", "p2", "p3", "p4", "none", "s1", "s2", "s3", "s4"}
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
    _prose(lines, alert.labels, message.links)
    alert.runbook_links = _runbook_links(alert.labels, message)
    if alert.runbook_links and "runbook_url" not in alert.labels:
        alert.labels["runbook_url"] = alert.runbook_links[0]
    return alert


def notification(message: ThreadMessage) -> Alert:
    """A message an integration posted that no known format describes (a home-grown relay, a
    watcher, a disk check): its first prose line is the summary, the next ones the description, and
    a bold CamelCase word in it the alert name."""
    lines = [line.strip() for line in message.text.splitlines() if line.strip()]
    labels: dict[str, str] = {}
    for line in lines[:2]:
        for word in re.findall(r"\*([A-Za-z][\w:.\-]*)\*", line):
            if _CAMEL.match(word):
                labels.setdefault("alertname", word)
    _prose(lines, labels, message.links)
    return Alert(labels=labels, origin="notification", runbook_links=_runbook_links(labels, message))


def _prose(lines: Sequence[str], labels: dict[str, str], links: Sequence[tuple[str, str]] = ()) -> None:
    """Summary and description from a notification's prose lines, where its labels have none: the
    lines that are neither a title, a label, a link nor notification furniture."""
    link_labels = frozenset(label.strip() for label, _ in links)
    prose = [p for p in (_prose_line(line, link_labels) for line in lines[:12]) if p]
    if not prose or ("summary" in labels and "description" in labels):
        return
    if "summary" not in labels:
        labels["summary"] = prose.pop(0)
    if prose and "description" not in labels:
        labels["description"] = " ".join(prose[:3])[:500]


def _prose_line(line: str, link_labels: frozenset[str] = frozenset()) -> str:
    """A line as prose, or "" when it is a title, a label, a link or furniture."""
    text = re.sub(r"^(?::[\w+-]+:\s*)+", "", line.strip())  # leading emoji (:warning:)
    if text.strip("*_ ") in link_labels:
        return ""
    if _AM_TITLE.match(text.strip("*_ ")) or _GRAFANA_LEGACY.match(text.strip("*_ ")) or _DATADOG.match(text):
        return ""
    if _PAGERDUTY.match(text.strip("*_ ")) or _OPSGENIE.match(text.strip("*_ ")):
        return ""
    if _KV_LINE.match(text.replace("*", "")) or _URL.fullmatch(text) or text.lower().strip("*_ ") in _FURNITURE:
        return ""
    if re.fullmatch(r"[-•◦▪*]?\s*\S+\s*[=:]\s*.*", text) or text.endswith(":"):
        return ""
    m = _BOLD_TITLE.match(text)
    if m:
        text = (m[1] + " " + m[2]).strip()
    text = re.sub(r"[*_`]+", "", text).strip(" ·—-")
    return text if len(re.findall(r"[A-Za-z]{2,}", text)) >= 3 else ""


_FURNITURE = {"firing", "resolved", "new alert created", "alert created", "labels", "annotations", "details"}


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
    if (m := _OPSGENIE.match(line)) and _IDENTIFIER.match(m[2].strip()):
        alert.origin = "opsgenie"
        alert.labels.update(alertname=m[2].strip(), incident=f"#{m[1]}")
        if m[3]:
            alert.labels.setdefault("target", m[3].strip())
        return True
    if m := _DATADOG.match(line):
        alert.origin = "datadog"
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
    """The first alert in the thread (usually the parent message), skipping the bot's own messages;
    else the first message an integration posted, read as a notification."""
    for message in messages:
        if not message.own and (alert := extract_alert(message)):
            return alert
    posted = next((m for m in messages if m.bot and not m.own and m.text.strip()), None)
    return notification(posted) if posted is not None else None


def alert_question(alert: Alert) -> str:
    """A question built from an alert: its name and summary (or description)."""
    labels = alert.labels
    name = labels.get("alertname", "")
    detail = labels.get("summary") or labels.get("description") or ""
    if detail and name and name.lower() not in detail.lower():
        return f"{name}: {detail}"
    return detail or name


def alert_query(labels: Mapping[str, str], max_chars: int = 600) -> str:
    """What an alert says, as a search sees it: its name, summary and description."""
    parts: list[str] = []
    for key in ("alertname", "summary", "description"):
        value = " ".join((labels.get(key) or "").split())
        if value and not any(value.lower() in p.lower() for p in parts):
            parts.append(value)
    return ". ".join(parts)[:max_chars]


# What people write to the bot when the alert above says it all: "what do I do?", "runbook?", "is this
# bad?", "how do i fix this", "what should i look at". Stems, as retrieval.analyzer makes them.
_ASK_WORDS = frozenset("""
    do doe done what whi how now next first runbook runbook? playbook pl plz pleas help fix fixe handl deal
    look check see start begin mean care matter bad serious urgent real fals alarm ok okay safe ignor worri
    go on happen move suppos should shall can could would just it this that thing one alert page
    actual anyth someth els need get know tell explain us we i me our here there again
""".split())


def says_little(question: str) -> bool:
    """True when a message says nothing the alert it answers does not: at most one word that is
    neither a question word nor filler ("what do I do?", "runbook?", "is this safe to ignore?")."""
    words = [t for t in analyze(question) if t not in _ASK_WORDS and not t.isdigit()]
    return len(words) <= 1


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
