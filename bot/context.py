"""What surrounds a question: the incident thread and alert labels. Platform-neutral: the Slack
and Teams adapters fill it, the agent reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from retrieval.search import SearchFilters

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

    def search_query(self, question: str, max_chars: int = 500) -> str:
        """The question, plus the alert's name and summary when the question does not say them."""
        parts = [question.strip()]
        for key in ("alertname", "summary"):
            value = (self.alert.get(key) or "").strip()
            if value and value.lower() not in question.lower():
                parts.append(value)
        return " ".join(parts)[:max_chars]
