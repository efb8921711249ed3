"""`runbook-bot guard check FILE|-`: the dangerous-command check on a runbook or any text, from the shell."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from bot.guarding import MESSAGES
from guardrails import SEVERITIES, Finding, Policy, PolicyError, check_command, extract_commands, load_policy
from guardrails.verdict import rank

guard_app = typer.Typer(no_args_is_help=True, add_completion=False,
                        help="Check runbooks or answers for dangerous commands.")
_COMMAND_WIDTH = 60


@guard_app.callback()
def _group() -> None:
    """Guardrail checks."""


def _read(file: str) -> str:
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        typer.echo(MESSAGES["cli_unreadable"].format(file=file, why=exc.strerror or exc), err=True)
        raise typer.Exit(2) from None
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


def _policy(policy_file: Path | None, channel: str | None) -> Policy:
    try:
        return load_policy(policy_file).for_channel(channel)
    except PolicyError as exc:
        typer.echo(MESSAGES["cli_bad_policy"].format(why=exc), err=True)
        raise typer.Exit(2) from None


def _short(command: str) -> str:
    line = " ".join(command.replace("\\\n", " ").split())
    return line if len(line) <= _COMMAND_WIDTH else line[:_COMMAND_WIDTH - 1] + "…"


def table(findings: list[Finding], commands: int) -> str:
    """Findings as a readable table, worst first, with the safer alternative under each."""
    counts = {s: sum(f.severity == s for f in findings) for s in SEVERITIES}
    findings = sorted(findings, key=lambda f: rank(f.severity))
    lines = []
    if findings:
        width = max(len(f.rule) for f in findings)
        lines.append(f"{'SEVERITY':<8}  {'RULE':<{width}}  COMMAND")
        for f in findings:
            lines.append(f"{f.severity:<8}  {f.rule:<{width}}  {_short(f.command)}")
            lines.append(f"{'':<8}  {'':<{width}}  why: {f.reason}")
            if f.safer:
                lines.append(f"{'':<8}  {'':<{width}}  safer: {f.safer}")
        lines.append("")
    lines.append(MESSAGES["cli_summary"].format(commands=commands, **counts))
    return "\n".join(lines)


@guard_app.command("check")
def check_cmd(
    file: str = typer.Argument(..., metavar="FILE|-", help="A Markdown or text file; - reads standard input"),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per finding per line"),
    policy_file: Optional[Path] = typer.Option(None, "--policy", help="Operator policy YAML on top of the default"),
    channel: Optional[str] = typer.Option(None, "--channel", help="Apply this Slack channel's overrides"),
) -> None:
    """Find the commands in a text and report the policy's findings (exit status 0 whatever is found)."""
    policy = _policy(policy_file, channel)
    commands = extract_commands(_read(file))
    findings = [f for command in commands for f in check_command(command, policy)]
    if as_json:
        for finding in findings:
            typer.echo(json.dumps(asdict(finding), ensure_ascii=False))
        return
    typer.echo(table(findings, len(commands)))
