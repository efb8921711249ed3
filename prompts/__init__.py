"""Prompt templates as files plus a tiny renderer. Not built yet."""
