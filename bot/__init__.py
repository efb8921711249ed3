"""The bot: agent loop and tools, LLM and chat adapters, jobs, settings, CLI."""

from pathlib import Path

# The example runbooks of the demo and the tests: package data, so an installed bot has them too.
EXAMPLE_RUNBOOKS = Path(__file__).resolve().parent / "examples" / "runbooks"
