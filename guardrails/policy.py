"""The command policy as data: rules loaded from YAML, with operator and per-channel overrides.

The default policy is `policy.yaml` next to this module. An operator file may add rules (a rule
with an existing id replaces it), change severities (`severity: {rule-id: warn}`), disable rules
(`disable: [rule-id]` or severity `off`) and override severities per Slack channel
(`channels: {C123: {rule-id: block}}`, applied by `Policy.for_channel`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guardrails.verdict import Severity

Override = Literal["block", "warn", "info", "off"]
TargetClass = Literal["root", "root_glob", "home", "system", "data", "wildcard", "variable", "dynamic", "path",
                      "scratch", "relative", "listed"]
Detector = Literal["fork_bomb", "remote_code", "encoded_code", "opaque_command", "unseen_script", "opened_to_anyone",
                   "secret_sent", "secret_printed", "credential_on_line", "unpinned_image", "state_switched_down", "verb_destroys", "verb_takes_down", "verb_weakens_security", "security_switched_off",
                   "retention_cut", "copies_cut", "manifests_deleted", "learned"]
Effect = Literal["destroys_data", "destroys_storage", "takes_down", "runs_unreviewed_code", "weakens_security",
                 "cannot_tell"]


class PolicyError(ValueError):
    """A policy file that cannot be read or does not validate."""


class RuleSpec(BaseModel):
    """One rule as written in YAML; every condition given must hold for the rule to match."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    severity: Severity
    reason: str
    safer: str | None = None
    effect: Effect | None = Field(None, description="What running the command does")
    group: str | None = Field(None, description="Rules of one group: only the worst match is reported")
    program: list[str] = Field(default_factory=list, description="Program names (fnmatch patterns)")
    subcommand: list[str | list[str]] = Field(default_factory=list, description="Leading positional words")
    flags_all: list[str] = Field(default_factory=list)
    flags_any: list[str] = Field(default_factory=list)
    flags_none: list[str] = Field(default_factory=list)
    args_any: list[str] = Field(default_factory=list, description="Any argument matches (case-insensitive)")
    args_all: list[str | list[str]] = Field(default_factory=list,
                                            description="Each entry (a pattern or alternatives) matches an argument")
    args_none: list[str] = Field(default_factory=list, description="No argument matches (case-insensitive)")
    content_any: list[str] = Field(default_factory=list, description="What the command writes (echo/printf text, "
                                                                     "or its literal stdin) matches")
    targets: list[TargetClass] = Field(default_factory=list, description="Any operand is of these classes")
    targets_last: bool = Field(False, description="Only the last operand is classified (a destination)")
    redirect_to: list[str] = Field(default_factory=list, description="An output redirect goes there")
    sql: list[str] = Field(default_factory=list, description="SQL statement kinds")
    detector: Detector | None = None
    applies_to_dry_run: bool = False

    @model_validator(mode="after")
    def _anchored(self) -> RuleSpec:
        if not (self.program or self.sql or self.detector or self.redirect_to):
            raise ValueError(f"rule {self.id}: needs one of program, sql, detector, redirect_to")
        return self


class PolicyFile(BaseModel):
    """A policy document: the default one or an operator's additions and overrides."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    system_paths: list[str] = Field(default_factory=list)
    data_paths: list[str] = Field(default_factory=list)
    dry_run_flags: list[str] = Field(default_factory=list)
    program_dry_run_flags: dict[str, list[str]] = Field(default_factory=dict,
                                                        description="Per program (fnmatch): flags that make it rehearse")
    aliases: dict[str, dict[str, str]] = Field(default_factory=dict)
    value_options: dict[str, list[str]] = Field(default_factory=dict)
    rules: list[RuleSpec] = Field(default_factory=list)
    severity: dict[str, Override] = Field(default_factory=dict)
    disable: list[str] = Field(default_factory=list)
    channels: dict[str, dict[str, Override]] = Field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    """A compiled rule (see RuleSpec for the meaning of each condition)."""

    id: str
    severity: Severity
    reason: str
    safer: str | None
    group: str
    effect: str | None = None
    program: tuple[str, ...] = ()
    subcommand: tuple[tuple[str, ...], ...] = ()
    flags_all: tuple[str, ...] = ()
    flags_any: tuple[str, ...] = ()
    flags_none: tuple[str, ...] = ()
    args_any: tuple[str, ...] = ()
    args_all: tuple[tuple[str, ...], ...] = ()
    args_none: tuple[str, ...] = ()
    content_any: tuple[str, ...] = ()
    targets: frozenset[str] = frozenset()
    targets_last: bool = False
    redirect_to: tuple[str, ...] = ()
    sql: frozenset[str] = frozenset()
    detector: str | None = None
    applies_to_dry_run: bool = False


@dataclass(frozen=True)
class Policy:
    """Rules plus the vocabulary needed to read command lines (aliases, options taking values, paths)."""

    rules: tuple[Rule, ...]
    system_paths: frozenset[str] = frozenset()
    data_paths: tuple[str, ...] = ()
    dry_run_flags: tuple[str, ...] = ()
    program_dry_run_flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    value_options: Mapping[str, frozenset[str]] = field(default_factory=dict)
    channels: Mapping[str, Mapping[str, Override]] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule:
        """The rule with this id (KeyError if there is none)."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)

    def with_severities(self, overrides: Mapping[str, Override]) -> Policy:
        """A copy with some rules' severities changed; `off` removes a rule."""
        _check_known(overrides, self.rules, "severity override")
        rules = tuple(r if r.id not in overrides else replace(r, severity=overrides[r.id])  # type: ignore[arg-type]
                      for r in self.rules if overrides.get(r.id) != "off")
        return replace(self, rules=rules)

    def for_channel(self, channel_id: str | None) -> Policy:
        """The policy as it applies in one Slack channel (itself when the channel has no overrides)."""
        overrides = self.channels.get(channel_id or "")
        if not overrides:
            return self
        present = {r.id for r in self.rules}
        return self.with_severities({k: v for k, v in overrides.items() if k in present})


def _check_known(ids: Mapping[str, object] | list[str], rules: tuple[Rule, ...], what: str) -> None:
    known = {r.id for r in rules}
    unknown = sorted(set(ids) - known)
    if unknown:
        raise PolicyError(f"{what}: unknown rule id(s) {', '.join(unknown)}")


def _compile(spec: RuleSpec) -> Rule:
    return Rule(
        id=spec.id, severity=spec.severity, reason=spec.reason.strip(), safer=spec.safer,
        group=spec.group or spec.id, effect=spec.effect, program=tuple(spec.program),
        subcommand=tuple((s,) if isinstance(s, str) else tuple(s) for s in spec.subcommand),
        flags_all=tuple(spec.flags_all), flags_any=tuple(spec.flags_any), flags_none=tuple(spec.flags_none),
        args_any=tuple(a.lower() for a in spec.args_any),
        args_all=tuple((a.lower(),) if isinstance(a, str) else tuple(x.lower() for x in a) for a in spec.args_all),
        args_none=tuple(a.lower() for a in spec.args_none), content_any=tuple(c.lower() for c in spec.content_any),
        targets=frozenset(spec.targets), targets_last=spec.targets_last,
        redirect_to=tuple(spec.redirect_to), sql=frozenset(spec.sql), detector=spec.detector,
        applies_to_dry_run=spec.applies_to_dry_run,
    )


def _read(text: str, origin: str) -> PolicyFile:
    try:
        data = yaml.safe_load(text) or {}
        found = PolicyFile.model_validate(data)
    except (yaml.YAMLError, ValidationError) as exc:
        raise PolicyError(f"{origin}: {exc}") from exc
    ids = [spec.id for spec in found.rules]
    twice = sorted({rule_id for rule_id in ids if ids.count(rule_id) > 1})
    if twice:  # the later one would silently replace the earlier
        raise PolicyError(f"{origin}: rule ids used more than once: {', '.join(twice)}")
    return found


def _merge(base: Policy, extra: PolicyFile) -> Policy:
    specs = {r.id: r for r in base.rules}
    for spec in extra.rules:
        specs[spec.id] = _compile(spec)
    aliases = {k: dict(v) for k, v in base.aliases.items()}
    for program, table in extra.aliases.items():
        aliases.setdefault(program, {}).update(table)
    values = dict(base.value_options)
    for program, options in extra.value_options.items():
        values[program] = values.get(program, frozenset()) | frozenset(options)
    merged = Policy(
        rules=tuple(specs.values()), system_paths=base.system_paths | frozenset(extra.system_paths),
        data_paths=base.data_paths + tuple(p for p in extra.data_paths if p not in base.data_paths),
        dry_run_flags=base.dry_run_flags + tuple(extra.dry_run_flags), aliases=aliases,
        program_dry_run_flags={**base.program_dry_run_flags,
                               **{k: tuple(v) for k, v in extra.program_dry_run_flags.items()}},
        value_options=values, channels={**base.channels, **extra.channels},
    )
    _check_known(extra.disable, merged.rules, "disable")
    for channel, table in extra.channels.items():
        _check_known(table, merged.rules, f"channel {channel}")
    return merged.with_severities({**extra.severity, **{rule_id: "off" for rule_id in extra.disable}})


def parse_policy(text: str, *, base: Policy | None = None, origin: str = "policy") -> Policy:
    """A policy from YAML text, on top of `base` (or alone when base is None)."""
    empty = Policy(rules=())
    return _merge(base or empty, _read(text, origin))


@lru_cache(maxsize=1)
def default_policy() -> Policy:
    """The policy shipped with the package (guardrails/policy.yaml), loaded once."""
    text = resources.files("guardrails").joinpath("policy.yaml").read_text(encoding="utf-8")
    return parse_policy(text, origin="guardrails/policy.yaml")


def load_policy(extra: Path | None = None) -> Policy:
    """The default policy, plus an operator's YAML file of added rules and overrides when given."""
    if extra is None:
        return default_policy()
    try:
        text = Path(extra).read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"{extra}: {exc.strerror or exc}") from exc
    return parse_policy(text, base=default_policy(), origin=str(extra))
