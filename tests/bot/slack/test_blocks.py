"""Block Kit rendering within Slack's limits, guardrail findings, escaping; and the rate limiter."""

from __future__ import annotations

import json

import pytest

from bot.answer import Answer, Finding, Source, Step
from bot.chat.ratelimit import RateLimiter
from bot.slack.blocks import (
    ACTION_DOWN, ACTION_SHARE, ACTION_UP, MAX_BLOCKS, MAX_SECTION_CHARS, answer_blocks, split_mrkdwn,
)
from tests.bot.slack.test_adapter import texts

SOURCE = Source(id=1, chunk_id=10, document="Disk full on a Linux host", path="disk-full.md",
                heading_path=["Disk full on a Linux host", "Mitigation"], link="https://git.example.com/disk-full.md#mitigation",
                relevance=0.91)


def answer(steps: list[Step], **kw) -> Answer:  # type: ignore[no-untyped-def]
    return Answer(question="disk full", answer="The disk is full.", steps=steps, sources=[SOURCE], confidence=0.8,
                  answer_id=7, **kw)


def sections(blocks: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


def test_steps_are_numbered_with_commands_in_code_blocks_and_linked_citations() -> None:
    blocks = answer_blocks(answer([Step(instruction="Check **which** filesystem", commands=["df -hT"], citations=[1],
                                        priority="now", rationale="du lies with deleted files")]))
    step = sections(blocks)[1]
    assert step.startswith("*1.* :rotating_light: Check *which* filesystem")
    assert "<https://git.example.com/disk-full.md#mitigation|[1]>" in step and "```df -hT```" in step
    assert "_du lies with deleted files_" in step
    sources = texts([b for b in blocks if b["type"] == "context"])
    assert "*[1]* <https://git.example.com/disk-full.md#mitigation|Disk full on a Linux host › Mitigation>" in sources
    assert "relevance 0.91" in sources and "confidence 0.80" in sources and "answer 7" in sources
    actions = [b for b in blocks if b["type"] == "actions"][0]["elements"]
    assert [e["action_id"] for e in actions] == [ACTION_UP, ACTION_DOWN]
    assert all(json.loads(e["value"]) == {"answer_id": 7} for e in actions)


def test_guardrail_findings_are_distinct_and_blocked_commands_are_not_copyable() -> None:
    step = Step(instruction="Free space", commands=["journalctl --vacuum-size=1G"], citations=[1], findings=[
        Finding(command="rm -rf /var/lib/docker", rule="rm-recursive-root", severity="block",
                reason="Deletes every container.", safer="docker system prune --filter until=24h"),
        Finding(command="journalctl --vacuum-size=1G", rule="journal-vacuum", severity="warn",
                reason="Old logs are gone for good."),
    ])
    blocks = answer_blocks(answer([step], notes=["Some commands were removed because the policy blocks them."]))
    shown = "\n".join(sections(blocks))
    assert ":no_entry: *Blocked:* `rm -rf /var/lib/docker`: Deletes every container." in shown
    assert "Safer: `docker system prune --filter until=24h`" in shown
    assert ":warning: *Check before running:* `journalctl --vacuum-size=1G`" in shown
    assert "```rm -rf" not in shown and "```journalctl --vacuum-size=1G```" in shown
    assert ":memo: Some commands were removed" in texts(blocks)


def test_runbook_text_cannot_ping_or_link() -> None:
    step = Step(instruction="Tell <!channel> and <@U123> then open <https://evil.example|here>",
                commands=["echo a > /tmp/b && cat < /tmp/b"], citations=[1])
    shown = "\n".join(sections(answer_blocks(answer([step]))))
    assert "<!channel>" not in shown and "&lt;!channel&gt;" in shown and "&lt;@U123&gt;" in shown
    assert "<https://evil.example|here>" not in shown
    assert "echo a &gt; /tmp/b &amp;&amp; cat &lt; /tmp/b" in shown


def test_many_steps_stay_within_50_blocks_and_point_at_the_runbook() -> None:
    steps = [Step(instruction=f"Step {i}", commands=[f"echo {i}"], citations=[1],
                  findings=[Finding(command=f"echo {i}", rule="r", severity="warn", reason="careful")])
             for i in range(60)]
    blocks = answer_blocks(answer(steps), share=True)
    assert len(blocks) <= MAX_BLOCKS
    more = [t for t in sections(blocks) if "more step(s)" in t]
    assert len(more) == 1 and "<https://git.example.com/disk-full.md#mitigation|Disk full on a Linux host>" in more[0]
    assert blocks[-1]["type"] == "actions" and blocks[-1]["elements"][-1]["action_id"] == ACTION_SHARE, \
        "the buttons survive truncation"


def test_long_text_is_split_under_3000_chars_with_balanced_code_fences() -> None:
    script = "\n".join(f"kubectl -n payments delete pod checkout-{i:04d} --grace-period=30" for i in range(200))
    huge = "x" * 7000
    blocks = answer_blocks(answer([Step(instruction="Restart every pod " + huge, commands=[script], citations=[1])]))
    for text in sections(blocks):
        assert len(text) <= MAX_SECTION_CHARS
        assert text.count("```") % 2 == 0, "each piece renders on its own"
    joined = "".join(sections(blocks))
    assert "checkout-0000" in joined and "checkout-0199" in joined, "split, not lost"


@pytest.mark.parametrize("limit", [50, 200, 3000])
def test_split_mrkdwn_respects_the_limit(limit: int) -> None:
    text = "intro line\n```" + "\n".join(f"line {i} " + "y" * (i % 70) for i in range(300)) + "```\noutro"
    pieces = split_mrkdwn(text, limit)
    assert all(len(p) <= limit for p in pieces) and all(p.count("```") % 2 == 0 for p in pieces)


def test_abstention_and_an_unstored_answer() -> None:
    blocks = answer_blocks(Answer(question="q", answer="I don't have a runbook that covers this.", abstained=True))
    assert sections(blocks)[0].startswith(":mag: I don't have a runbook")
    assert not [b for b in blocks if b["type"] == "actions"], "no buttons without an answer id"


# --- Rate limiter ----------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_windows_per_user_and_channel() -> None:
    clock = Clock()
    limiter = RateLimiter(per_user=2, per_channel=3, window_s=60, clock=clock)
    assert limiter.check("u1", "c1").allowed and limiter.check("u1", "c1").allowed
    refused = limiter.check("u1", "c1")
    assert not refused.allowed and refused.scope == "user" and refused.retry_after_s == 60
    assert limiter.check("u2", "c1").allowed
    channel = limiter.check("u3", "c1")
    assert not channel.allowed and channel.scope == "channel"
    assert limiter.check("u3", "c2").allowed, "a refused question is not counted"
    clock.now += 61
    assert limiter.check("u1", "c1").allowed, "the window slid"


def test_rate_limiter_zero_disables() -> None:
    limiter = RateLimiter(per_user=0, per_channel=0)
    assert all(limiter.check("u", "c").allowed for _ in range(100))


def test_sources_are_one_list_under_their_heading_one_per_line() -> None:
    # One element holds the heading and every source, so a reader (or a script) never takes the
    # list's numbers for the steps' citations; more sources than fit stop at the last whole line.
    many = [Source(id=i, chunk_id=i, document=f"Runbook {i} " + "x" * 140, path=f"r{i}.md", heading_path=[], relevance=0.5)
            for i in range(1, 30)]
    blocks = answer_blocks(Answer(question="q", answer="a", steps=[Step(instruction="Look", citations=[1])],
                                  sources=many, confidence=0.8))
    listed = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"] if "*Sources*" in e["text"]]
    assert len(listed) == 1
    lines = listed[0].split("\n")
    assert lines[0] == ":books: *Sources*" and lines[1].startswith("*[1]* Runbook 1 ") and len(lines) == 10
    assert len(listed[0]) <= MAX_SECTION_CHARS
    elsewhere = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"] if e["text"] not in listed]
    assert not any("*[2]*" in t for t in elsewhere)
