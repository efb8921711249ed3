"""Guardrails applied to what the bot shows and what the model reads.

`guard_answer` checks every text of an answer (summary, steps, rationale, notes) the same way:
commands, in code or written in a sentence, against the policy (blocked ones are removed, the rest
annotated), instruction-like text neutralised; it redacts secrets and withholds answers that repeat
the system prompt. `guard_chunk` neutralises injection attempts and redacts secrets in runbook text
before a model sees it; `guard_source_text` also removes blocked commands from runbook text a caller
is shown verbatim (the API's sources).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot import messages
from bot.answer import Answer, Finding, Step
from guardrails import Policy, check_command, extract_commands, leaks_prompt, neutralise, redact
from guardrails import Finding as PolicyFinding
from guardrails.prose import prose_commands

MESSAGES = messages.GUARD  # user-facing strings live in bot/messages.py
_CAUTION_MAX_CHARS = 120


def _to_answer_finding(finding: PolicyFinding) -> Finding:
    reason = finding.reason if finding.severity != "block" else f"{finding.reason} {MESSAGES['blocked_finding']}"
    return Finding(command=finding.command, rule=finding.rule, severity=finding.severity, reason=reason,
                   safer=finding.safer)


def _remove(text: str, command: str, marker: str) -> str:
    """The text with a command replaced by a marker (line by line when it was re-indented in the text)."""
    if command in text:
        return text.replace(command, marker)
    for line in filter(None, (part.strip() for part in command.splitlines())):
        text = text.replace(line, marker)
    return text


def guard_text(text: str, policy: Policy) -> tuple[str, list[PolicyFinding]]:
    """Findings for the commands in a Markdown text, and the text with blocked commands removed.
    Commands written in a sentence count too, when the policy blocks them (warnings on prose would
    flag ordinary words: "reboot the VM", "UPDATE and DELETE activity")."""
    findings: list[PolicyFinding] = []
    for command in dict.fromkeys(extract_commands(text)):
        found = check_command(command, policy)
        findings += found
        text = _remove_blocked(text, command, found)
    for command in prose_commands(text):
        found = [f for f in check_command(command, policy) if f.severity == "block"]
        findings += found
        text = _remove_blocked(text, command, found)
    return text, findings


def _remove_blocked(text: str, command: str, found: list[PolicyFinding]) -> str:
    blocked = next((f for f in found if f.severity == "block"), None)
    return text if blocked is None else _remove(text, command, MESSAGES["inline_removed"].format(rule=blocked.rule))


def _written(text: str, policy: Policy) -> tuple[str, list[PolicyFinding]]:
    """Text the bot writes (a summary, a step, a note): commands checked as in `guard_text`, then
    instruction-like spans, fake roles and hidden characters neutralised."""
    text, findings = guard_text(text, policy)
    return neutralise(text)[0], findings


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        seen.setdefault((finding.command, finding.rule), finding)
    return list(seen.values())


def _guard_step(step: Step, policy: Policy, blocked: list[str]) -> Step:
    kept: list[str] = []
    findings = list(step.findings)
    for command in step.commands:
        found = check_command(command, policy)
        findings += [_to_answer_finding(f) for f in found]
        rules = [f.rule for f in found if f.severity == "block"]
        blocked += rules
        if not rules:
            kept.append(command)
    instruction, in_instruction = _written(step.instruction, policy)
    rationale, in_rationale = _written(step.rationale, policy) if step.rationale else (None, [])
    for finding in in_instruction + in_rationale:
        findings.append(_to_answer_finding(finding))
        if finding.severity == "block":
            blocked.append(finding.rule)
    return step.model_copy(update={"commands": kept, "instruction": instruction, "rationale": rationale,
                                   "findings": _dedupe(findings)})


def _caution(finding: PolicyFinding) -> str:
    command = finding.command.splitlines()[0] if finding.command else ""
    command = command if len(command) <= _CAUTION_MAX_CHARS else command[:_CAUTION_MAX_CHARS] + "…"
    return MESSAGES["caution_note"].format(command=command, reason=finding.reason)


def _answer_texts(answer: Answer) -> list[str]:
    return [answer.answer] + [t for s in answer.steps for t in (s.instruction, s.rationale or "", *s.commands)]


def _withhold_leak(answer: Answer, system_prompt: str) -> Answer:
    if not leaks_prompt("\n".join(_answer_texts(answer)), system_prompt):
        return answer
    steps = [s for s in answer.steps
             if not leaks_prompt("\n".join([s.instruction, s.rationale or "", *s.commands]), system_prompt)]
    return answer.model_copy(update={"answer": MESSAGES["prompt_leak"], "steps": steps,
                                     "notes": [*answer.notes, MESSAGES["prompt_leak_note"]]})


def _redact_answer(answer: Answer, secrets: Sequence[str]) -> Answer:
    total = 0

    def clean(text: str) -> str:
        nonlocal total
        text, n = redact(text, secrets)
        total += n
        return text

    def clean_finding(f: Finding) -> Finding:
        return f.model_copy(update={"command": clean(f.command), "reason": clean(f.reason)})

    steps = [s.model_copy(update={
        "instruction": clean(s.instruction), "rationale": clean(s.rationale) if s.rationale else s.rationale,
        "commands": [clean(c) for c in s.commands], "findings": [clean_finding(f) for f in s.findings],
    }) for s in answer.steps]
    update = {"question": clean(answer.question), "answer": clean(answer.answer), "steps": steps,
              "notes": [clean(n) for n in answer.notes]}
    if total:
        update["notes"] = [*update["notes"], MESSAGES["redacted_note"]]  # type: ignore[list-item]
    return answer.model_copy(update=update)


def guard_answer(answer: Answer, policy: Policy, *, secrets: Sequence[str] = (), system_prompt: str = "") -> Answer:
    """The answer with commands checked (blocked ones removed), secrets redacted and prompt leaks withheld."""
    blocked: list[str] = []
    steps = [_guard_step(step, policy, blocked) for step in answer.steps]
    text, in_text = _written(answer.answer, policy)
    guarded_notes = [_written(note, policy) for note in answer.notes]
    in_text += [f for _, found in guarded_notes for f in found]
    blocked += [f.rule for f in in_text if f.severity == "block"]
    notes = [note for note, _ in guarded_notes] + [_caution(f) for f in in_text if f.severity == "warn"]
    if blocked:
        notes.append(MESSAGES["blocked_note"].format(rules=", ".join(dict.fromkeys(blocked))))
    guarded = answer.model_copy(update={"answer": text, "steps": steps, "notes": list(dict.fromkeys(notes))})
    if system_prompt:
        guarded = _withhold_leak(guarded, system_prompt)
    return _redact_answer(guarded, secrets)


def guard_chunk(text: str, *, secrets: Sequence[str] = ()) -> str:
    """Runbook text made safe to show a model: injection neutralised, secrets redacted."""
    text, _ = neutralise(text)
    return redact(text, secrets)[0]


def guard_source_text(text: str, policy: Policy, *, secrets: Sequence[str] = ()) -> str:
    """Runbook text shown verbatim to a caller: as a model sees it, and without the commands the policy blocks."""
    return guard_text(guard_chunk(text, secrets=secrets), policy)[0]

