"""A real language model in the loop: `ask` and a Slack mention end to end against a local
OpenAI-compatible server (bench/local_llm/local_llm.py serve). Skipped unless
RUNBOOK_BOT_TEST_LLM_BASE points at one; nothing here can reach a remote provider."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bot.llm import LiteLLMChat
from tests.bot.chat.test_alerts import ALERTMANAGER, HUMAN
from tests.bot.cli.test_main import run
from tests.bot.slack.test_adapter import texts
from tests.bot.slack.test_events import CHANNEL, alert_thread, mention
from tests.conftest import EXAMPLES
from tests.slackfake import BOT_USER, FakeSlackAPI, Harness

BASE = os.environ.get("RUNBOOK_BOT_TEST_LLM_BASE", "")
MODEL = os.environ.get("RUNBOOK_BOT_TEST_LLM_MODEL", "openai/local")
pytestmark = [
    pytest.mark.live_llm,
    pytest.mark.skipif(not BASE, reason="no local model endpoint: run bench/local_llm/local_llm.py serve and set "
                                        "RUNBOOK_BOT_TEST_LLM_BASE=http://127.0.0.1:8012/v1"),
    pytest.mark.timeout(900),
]
SLOW = {"agent_timeout_s": 300.0, "llm_timeout_s": 150.0}


def _live_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_", "EMBEDDING_"))}
    return {**clean, "DATABASE_URL": database_url, "RUNBOOK_BOT_HOME": str(tmp_path / "home"), "LOG_LEVEL": "WARNING",
            "LLM_MODEL": MODEL, "LLM_API_BASE": BASE, "LLM_API_KEY": "local", "AGENT_TIMEOUT_S": "300",
            "LLM_TIMEOUT_S": "150", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def test_ask_with_the_real_model(database_url: str, tmp_path: Path) -> None:
    env = _live_env(database_url, tmp_path)
    assert run(["ingest", str(EXAMPLES)], env).returncode == 0
    result = run(["ask", "Disk full on /var/lib/docker: No space left on device. What do I do?", "--json"], env,
                 timeout=600)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert not answer["abstained"] and answer["sources"][0]["path"] == "disk-full.md"
    assert all(step["citations"] for step in answer["steps"]), "every step the bot shows is grounded"
    if answer["mode"] == "llm":
        assert answer["model_used"] == MODEL and answer["trace"]["llm_rounds"] >= 1
    else:  # the model failed in a way the loop handled: it says so and says why
        assert answer["trace"]["outcomes"] and any("language model" in n for n in answer["notes"])


async def test_slack_mention_with_the_real_model(slack_api: FakeSlackAPI, examples_pool: Any, embedder: Any) -> None:
    llm = LiteLLMChat(MODEL, api_base=BASE, api_key="local", timeout=150.0, retries=1)
    async with Harness.running(slack_api, examples_pool, embedder, llm=llm, **SLOW) as slack:
        alert_thread(slack_api, ALERTMANAGER, HUMAN)
        reply = await slack.event(mention(f"<@{BOT_USER}> what do I do?"), event_id="Ev0LIVE0001")
        assert reply.status == 200
        await slack.done(timeout=SLOW["agent_timeout_s"] + 60)
    [update] = slack_api.calls_to("chat.update")
    shown = texts(update.args["blocks"])
    assert "k8s-pod-crashloop.md" in shown and "Question: what do I do?" in shown
    assert "UBOT" not in shown and update.args["channel"] == CHANNEL
