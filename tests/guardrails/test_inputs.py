"""Question normalisation: Slack markup, entities, control characters, whitespace, length."""

from __future__ import annotations

import pytest

from guardrails import Question, normalise_question


@pytest.mark.parametrize(("raw", "text"), [
    ("<@UBOT> disk full on web-1", "disk full on web-1"),
    ("<@U123> please look", "@U123 please look"),
    ("ask <@U123|alice> about it", "ask @alice about it"),
    ("<!channel> <!here> db is down", "db is down"),
    ("see <https://x.io/a|the doc>", "see the doc (https://x.io/a)"),
    ("see <https://x.io/a>", "see https://x.io/a"),
    ("see <https://x.io/a|https://x.io/a>", "see https://x.io/a"),
    ("in <#C123|ops> now", "in #ops now"),
    ("mail <mailto:a@b.io|a@b.io>", "mail a@b.io"),
    ("cc <!subteam^S1|@oncall>", "cc @oncall"),
    ("a &amp; b &lt;pod-name&gt;", "a & b <pod-name>"),
    ("kubectl get pod <pod-name>", "kubectl get pod <pod-name>"),
    ("bell\x07 and\x1b[31m color\x00", "bell and[31m color"),
    ("zero\u200bwidth", "zerowidth"),
    ("  lots   of\t\tspace  \n\n\n\nnext ", "lots of space\n\nnext"),
    ("line1\r\nline2", "line1\nline2"),
])
def test_normalisation(raw: str, text: str) -> None:
    assert normalise_question(raw, bot_user_id="UBOT") == Question(text=text, empty=False, truncated=False)


@pytest.mark.parametrize("raw", ["", "   ", "<@UBOT>", "<!here> \x00 \u200b", None])
def test_empty(raw: str) -> None:
    assert normalise_question(raw, bot_user_id="UBOT") == Question(text="", empty=True, truncated=False)


def test_truncation_at_a_word_boundary() -> None:
    question = normalise_question("word " * 1000, max_chars=2000)
    assert question.truncated and not question.empty
    assert len(question.text) <= 2000 and question.text.endswith("word")
    assert normalise_question("x" * 50, max_chars=10) == Question("x" * 10, empty=False, truncated=True)
    assert not normalise_question("short", max_chars=5).truncated
