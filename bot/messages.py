"""Every user-facing string in one place."""

NO_RUNBOOK = "I don't have a runbook that covers this."
CLOSEST = "Closest runbooks: {titles}."
EXTRACTIVE_NOTE = (
    "Extractive answer{why}: the most relevant runbook steps, quoted with their sources; no language "
    "model wrote them."
)
NO_LLM_CONFIGURED = " (LLM_MODEL is not set)"
DATABASE_DOWN = "The runbook database is unavailable: {detail}"
EMPTY_QUESTION = (
    "Ask me about an incident, e.g. `disk full on /var/lib/docker`, or paste the alert. I answer from "
    "the team's runbooks with steps, exact commands and the sections they come from."
)
QUESTION_TRUNCATED = "Your question was cut to its first {limit} characters."
SEE_SECTION = "See {title} › {section}."
RUNBOOK_SUMMARY = "Runbook *{title}* [1].{meaning}"
CLOSEST_MATCH_SUMMARY = (
    "Closest match: *{title}* [1]. I'm not sure it covers this: check that it applies before following it.{meaning}"
)
CLOSEST_MATCH_NOTE = (
    "Closest match, not a confident one (confidence {confidence:.2f}): no runbook clearly covers this, so check "
    "that this one applies."
)
MORE_IN_RUNBOOK = "The runbook {title} has more steps than shown here: open it for the rest."
ABSTAIN_REASON = "Why no answer: {reason}."
LLM_TIMED_OUT = " (the language model timed out)"
LLM_FAILED = " (the language model failed: {detail})"
LLM_UNFINISHED = " (the language model did not finish in {steps} rounds)"
LLM_SET_ASIDE_WHY = " (the language model's answer was set aside)"
LLM_SET_ASIDE = "The language model's answer was set aside: {reason}. This is the runbook's own procedure."
DROPPED_CITATIONS = "Removed citations to text the bot never retrieved: {ids}."
DROPPED_STEPS = "Removed {count} step(s) that cited no retrieved runbook text."
UNVERIFIED_COMMAND = "not found verbatim in the cited runbook section: check it before running"
BAD_REQUEST = "Bad request: {detail}"
INTERNAL_ERROR = "Something went wrong while answering; the error was logged (request {request_id})."
API_KEY_REQUIRED = ("This API needs a key: send `Authorization: Bearer <key>` with a key from API_KEYS "
                    "(the server listens beyond loopback).")
API_BAD_KEY = "Unknown API key."
CORRECTED = "This follows a correction: {by} said on {date} that this runbook answers it{others}."
CORRECTED_OTHERS = " ({count} engineers agree)"
CORRECTION_ASK = "Which runbook would have been right?"
CORRECTION_CHOICE = "Choose a runbook"
CORRECTION_NONE_LABEL = "None of these"
CORRECTION_OTHER = "Or paste a link or path to the right runbook"
CORRECTION_SEND = "Save the correction"
CORRECTION_SAVED = ("Thanks: {where} now leads with `{path}` (for everyone; "
                    "`runbook-bot feedback undo` withdraws it).")
CORRECTION_NONE = "Thanks: noted that none of these runbooks was right."
CORRECTION_UNKNOWN = "I could not find a runbook for `{given}` in the corpus; nothing was changed."
CORRECTION_ANSWER_GONE = "That answer is no longer available, so nothing was changed."
CORRECTION_FIX_HINT = "(or reply `@runbook-bot fix <link or path>` in the thread)"
CORRECTION_NO_ANSWER = "There is no answer of mine here to correct: use `fix <path or link>` in the thread of an answer."

# Slack (mrkdwn)
SLACK_SEARCHING = ":hourglass_flowing_sand: Searching runbooks…"
SLACK_HELP = (
    "*Ask me about an incident* and I answer from the team's runbooks with steps, the exact commands "
    "and the sections they come from.\n"
    "• `/runbook disk full on /var/lib/docker`: ask from any channel.\n"
    "• Mention me in an alert thread (`@runbook-bot` or `@runbook-bot what now?`): I read the alert "
    "(Alertmanager, Grafana, PagerDuty) and the replies, and answer in the thread.\n"
    "• Send me a direct message.\n"
    "Tell me if an answer helped with :+1: / :-1: (buttons or reactions)."
)
SLACK_APOLOGY = (
    ":warning: Sorry, I couldn't answer that: something went wrong on my side (reference `{ref}`). "
    "It was logged; try again in a moment, or search the runbooks directly."
)
SLACK_DATABASE_DOWN = (
    ":warning: Sorry, the runbook database is unavailable right now, so I can't answer. Try again in a minute."
)
SLACK_RATE_LIMITED = ":hourglass: Too many questions from {scope} right now; try again in {seconds} s."
SLACK_SCOPE_USER = "you"
SLACK_SCOPE_CHANNEL = "this channel"
SLACK_CHANNEL_NOT_ALLOWED = (
    "I'm not enabled in this channel. Ask me in an incident channel, or send me a direct message."
)
SLACK_MORE_STEPS = ":page_facing_up: {count} more step(s) did not fit in this message: see {where}."
SLACK_SHARE_BUTTON = "Share to channel"
SLACK_SHARED_BY = "Shared by <@{user}>"
SLACK_SHARE_FAILED = "I couldn't post in this channel ({error}); invite me with `/invite` first."
SLACK_ANSWER_GONE = "That answer is no longer available."
SLACK_FEEDBACK_THANKS = "Thanks, your feedback was recorded."
SLACK_FEEDBACK_TITLE = "What was wrong?"
SLACK_FEEDBACK_LABEL = "What was missing or wrong? (optional)"

# Teams (Adaptive Card TextBlock markdown)
TEAMS_SEARCHING = "⏳ Searching runbooks…"
TEAMS_HELP = (
    "**Ask me about an incident** and I answer from the team's runbooks with steps, the exact commands "
    "and the sections they come from.\n\n"
    "- In a channel, mention me in the alert's thread (**@runbook-bot what now?**), or reply to the alert "
    "with a quote and mention me: I read the quoted alert (Alertmanager, Grafana, PagerDuty).\n"
    "- **runbook disk full on /var/lib/docker**: the runbook command, in a channel after **@runbook-bot** "
    "or in a chat with me.\n"
    "- Paste the alert into a chat with me.\n\n"
    "Tell me if an answer helped with 👍 / 👎 under it."
)
TEAMS_APOLOGY = (
    "⚠️ Sorry, I couldn't answer that: something went wrong on my side (reference {ref}). "
    "It was logged; try again in a moment, or search the runbooks directly."
)
TEAMS_DATABASE_DOWN = (
    "⚠️ Sorry, the runbook database is unavailable right now, so I can't answer. Try again in a minute."
)
TEAMS_RATE_LIMITED = "⏳ Too many questions from {scope} right now; try again in {seconds} s."
TEAMS_SCOPE_USER = "you"
TEAMS_SCOPE_CHANNEL = "this conversation"
TEAMS_ASKED = "{user} asked: {question}"
TEAMS_QUESTION = "Question: {question}"
TEAMS_MORE_STEPS = "📄 {count} more step(s) did not fit in this card: see {where}."
TEAMS_SOURCES = "📚 **Sources**"
TEAMS_FEEDBACK_UP = "👍 Helpful"
TEAMS_FEEDBACK_DOWN = "👎 Not helpful"
TEAMS_FEEDBACK_PLACEHOLDER = "What was missing or wrong? (optional, sent with your vote)"
TEAMS_FEEDBACK_THANKS = "Thanks, your feedback was recorded."
TEAMS_FEEDBACK_COMMENT_THANKS = "Thanks, your feedback and comment were recorded."
TEAMS_FEEDBACK_GONE = "That answer is no longer available, so the vote was not recorded."
TEAMS_FEEDBACK_FAILED = "Sorry, your feedback could not be recorded (reference {ref})."
TEAMS_FINDING = {
    "block": "⛔ **Blocked, not shown as a command:** {command}: {reason}",
    "warn": "⚠️ **Check before running:** {command}: {reason}",
    "info": "ℹ️ Note: {command}: {reason}",
}
TEAMS_SAFER = "Safer: {safer}"

# Guardrails (bot/guarding.py, bot/cli/guard.py)
GUARD: dict[str, str] = {
    "blocked_finding": ("Removed from the answer: blocked by policy. "
                        "Run it only after a second engineer has reviewed it."),
    "blocked_note": "Some commands were removed because the policy blocks them ({rules}).",
    "inline_removed": "[command removed: {rule}]",
    "caution_note": "Caution: `{command}`: {reason}",
    "redacted_note": "Secrets were redacted from this answer.",
    "prompt_leak": "I can't share that: the answer repeated the bot's internal instructions.",
    "prompt_leak_note": "An answer that repeated internal instructions was withheld.",
    "cli_summary": "{commands} commands checked: {block} block, {warn} warn, {info} info.",
    "cli_unreadable": "error: cannot read {file}: {why}",
    "cli_bad_policy": "error: {why}",
}


SLACK_MALFORMED = "Bad request: a signed Slack request the bot cannot read (see its log)."

# Command line (bot/cli/main.py: ingest, ask, search)
INGEST_NOT_A_SOURCE = "error: {detail}. Give a folder of runbooks (or a git working tree) or one runbook file."
INGEST_EMPTY_SOURCE = (
    "error: no documents found, but source {source!r} has {documents} documents: ingesting would delete them all, so "
    "nothing was changed. Check the path; to really empty the source, run it again with --allow-empty."
)
EMPTY_SEARCH = 'error: the search query is empty; give words to look for, e.g. runbook-bot search "disk full".'
STDIN_NOT_UTF8 = "note: the input was not valid UTF-8; bytes that could not be read were replaced with �."

# Votes on answers to an alert (bot/answering.py): a runbook marked wrong for it goes below the others
DEMOTED = "Engineers marked {path} wrong for this alert on {date}{who}; showing the next match."
DEMOTED_BY = " ({count} engineers)"

# The runbooks a 👎 offers beyond the first few, in a menu (bot/slack/blocks.py, bot/teams/cards.py)
CORRECTION_MORE = "More runbooks"
