"""Guardrails: pure policy checks on what the bot reads and says (no imports from bot or retrieval).

- commands: dangerous shell/SQL commands in answers and runbook text, classified by a YAML policy whose rules
  name the effect (destroys data or storage, takes a host down, runs unreviewed code, weakens security,
  cannot tell); the shell is resolved statically first (resolve, shell, fallback, streams) and what commands run
  inside commands is unwrapped (wrappers, carriers, fanout, runners, interpreters, foreign); listings tells
  when a command acts on everything its own tool lists
- injection: instruction-like text and hidden characters in retrieved text
- secrets: credentials redacted before text is shown or sent to a model
- inputs: a user's question normalised (Slack markup, control characters, length)
"""

from guardrails.commands import check, check_command, invocations
from guardrails.extraction import extract_commands
from guardrails.injection import InjectionHit, neutralise, scan
from guardrails.inputs import Question, normalise_question
from guardrails.policy import Policy, PolicyError, Rule, default_policy, load_policy, parse_policy
from guardrails.secrets import leaks_prompt, redact
from guardrails.verdict import SEVERITIES, Finding, Severity, Verdict

__all__ = [
    "SEVERITIES", "Finding", "InjectionHit", "Policy", "PolicyError", "Question", "Rule", "Severity", "Verdict",
    "check", "check_command", "default_policy", "extract_commands", "invocations", "leaks_prompt", "load_policy",
    "neutralise", "normalise_question", "parse_policy", "redact", "scan",
]
