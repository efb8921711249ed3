"""Prompt templates (*.md) and their renderer."""
