"""The bot: agent loop and tools, LLM and Slack adapters, jobs, settings, CLI."""
