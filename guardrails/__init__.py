"""Guardrails: pure policy checks (dangerous commands, confidence, injection). Not built yet."""
