"""What surrounds a question: the incident thread and alert labels. Platform-neutral: the Slack
and Teams adapters fill it, the agent reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.chat.alerts import alert_query, says_little
from retrieval.access import Audience
from retrieval.search_types import SearchFilters

# Alert labels worth showing the model and adding to the search, most useful first.
ALERT_KEYS = ("alertname", "summary", "description", "severity", "service", "job", "namespace",
              "cluster", "instance", "pod", "container", "runbook_url", "status")


@dataclass
class IncidentContext:
    """The thread, the alert and any filters that frame a question."""

    thread: list[str] = field(default_factory=list)  # earlier messages, oldest first
    alert: dict[str, str] = field(default_factory=dict)  # labels and annotations
    filters: SearchFilters | None = None
    entry_point: str = "cli"  # cli, api, slack, teams
    channel: str | None = None
    user: str | None = None
    audience: Audience | None = None  # who may see what, when the entry point knows (an API key)

    def describe(self, max_chars: int = 3000) -> str:
        """The context as the model reads it (the alert first, then the latest thread messages)."""
        lines = [f"alert {key}: {self.alert[key]}" for key in ALERT_KEYS if self.alert.get(key)]
        lines += [f"alert {k}: {v}" for k, v in self.alert.items() if k not in ALERT_KEYS and v]
        budget = max_chars - sum(len(line) + 1 for line in lines)
        recent: list[str] = []
        for message in reversed(self.thread):
            text = " ".join(message.split())
            if budget - len(text) < 0:
                break
            recent.insert(0, f"thread: {text}")
            budget -= len(text) + 9
        return "\n".join(lines + recent) or "(none)"

    def runbook_links(self) -> list[str]:
        """Links to runbooks that the alert carries (`runbook_url`, a "Runbook" button)."""
        url = (self.alert.get("runbook_url") or "").strip()
        return [url] if url.startswith(("http://", "https://")) else []

    def search_query(self, question: str, max_chars: int = 800) -> str:
        """What the search sees: the alert (name, summary, description) when the question says
        little more than "what do I do?", else the question with the alert as context."""
        alert = alert_query(self.alert)
        if not alert:
            return question.strip()[:max_chars]
        if says_little(question):
            return alert[:max_chars]
        if alert.lower() in question.lower():
            return question.strip()[:max_chars]
        return f"{question.strip()} {alert}"[:max_chars]
