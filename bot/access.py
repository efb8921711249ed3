"""Who is asking, for the restricted runbooks (retrieval/access.py): a conversation's channel, the
groups its user (or the channel) belongs to, an API key's groups and sources, or the operator at
the command line, who sees everything."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.context import IncidentContext
from retrieval.access import Audience, SourceRule


@dataclass(frozen=True)
class AccessConfig:
    """The restricted sources and the groups' members; bot/app.py builds it from the settings."""

    restricted_sources: Mapping[str, SourceRule] = field(default_factory=dict)
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # group -> user, channel or key names

    def audience(self, context: IncidentContext) -> Audience:
        """The audience of a question: the context's own (an API key's), the operator at the command
        line, or the conversation asked from and the groups its user or channel belongs to."""
        if context.audience is not None:
            return context.audience
        if context.entry_point == "cli":
            return Audience.operator()
        members = {m for m in (context.user, context.channel) if m}
        groups = tuple(sorted(g for g, names in self.groups.items() if members & set(names)))
        return Audience(channels=(context.channel,) if context.channel else (), groups=groups)
