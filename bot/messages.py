"""Every user-facing string in one place."""

NO_RUNBOOK = "I don't have a runbook that covers this."
CLOSEST = "Closest runbooks: {titles}."
EXTRACTIVE_NOTE = (
    "Extractive answer: no language model was used{why}; these are the most relevant "
    "runbook steps, quoted with their sources."
)
NO_LLM_CONFIGURED = " (LLM_MODEL is not set)"
DATABASE_DOWN = "The runbook database is unavailable: {detail}"
EMPTY_QUESTION = "Ask a question, e.g. `runbook-bot ask \"disk full on /var/lib/docker\"`."
SEE_SECTION = "See {title} › {section}."
