"""The agent through litellm's real HTTP client, against a local OpenAI-compatible stub server."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot import llm as llm_module
from bot.agent import AgentLimits, run_agent
from bot.context import IncidentContext
from bot.llm import ChatMessage, LiteLLMChat, LLMError
from bot.tools import RunbookTools

DISK = "Disk full on /var/lib/docker: No space left on device"


class ChatStub:
    """POST /v1/chat/completions: a tool call first, then an answer citing what the tool showed."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next = 0

    async def completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if body["model"] == "broken-model":
            return web.json_response({"error": {"message": "no such model", "type": "invalid_request_error",
                                                "code": "model_not_found"}}, status=404)
        if self.fail_next:
            self.fail_next -= 1
            return web.json_response({"error": {"message": "overloaded", "type": "server_error"}}, status=503)
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_messages:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "hybrid_search", "arguments": json.dumps({"query": DISK, "k": 3})}}]}
            finish = "tool_calls"
        else:
            cited = re.findall(r"\[c(\d+)\]", tool_messages[-1]["content"])[0]
            answer = {"summary": "The docker disk is full.", "steps": [
                {"instruction": "See which filesystem is full", "citations": [f"c{cited}"], "priority": "now"}]}
            message = {"role": "assistant", "content": json.dumps(answer)}
            finish = "stop"
        return web.json_response({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        })


@pytest.fixture
async def stub() -> AsyncIterator[tuple[ChatStub, str]]:
    fake = ChatStub()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.completions)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield fake, str(server.make_url("/v1"))
    await server.close()


def _chat(url: str, model: str = "openai/stub-model", **kwargs) -> LiteLLMChat:  # type: ignore[no-untyped-def]
    return LiteLLMChat(model, api_base=url, api_key="sk-test", backoff=0.01, timeout=10, **kwargs)


async def test_agent_end_to_end_through_litellm_http(stub, examples_pool, embedder) -> None:
    fake, url = stub
    chat = _chat(url)
    answer = await run_agent(DISK, IncidentContext(), llm=chat, tools=RunbookTools(examples_pool, embedder),
                             limits=AgentLimits(call_timeout_s=20, total_timeout_s=40, gate=False))
    assert answer.mode == "llm" and not answer.abstained, answer.notes
    assert answer.model_used == "openai/stub-model"
    assert answer.sources[0].path.endswith("disk-full.md")
    assert answer.trace.prompt_tokens == 240 and answer.trace.completion_tokens == 60
    first, second = fake.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["hybrid_search", "fetch_parent_section", "get_runbook"]
    assert 0.2 <= first["temperature"] <= 0.3
    assert second["messages"][2]["tool_calls"][0]["id"] == "call_1"
    assert second["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": second["messages"][3]["content"]}
    assert "<runbook_data" in second["messages"][3]["content"]
    assert chat.total.prompt_tokens == 240


async def test_transient_errors_are_retried(stub) -> None:
    fake, url = stub
    fake.fail_next = 2
    completion = await _chat(url, retries=2).complete([ChatMessage(role="user", content="hi")], [])
    assert completion.tool_calls[0].name == "hybrid_search"
    assert len(fake.requests) == 3


async def test_fallback_model_after_a_permanent_error(stub) -> None:
    fake, url = stub
    chat = _chat(url, model="openai/broken-model", fallback="openai/stub-model", retries=3)
    completion = await chat.complete([ChatMessage(role="user", content="hi")], [])
    assert completion.model == "openai/stub-model"
    assert [r["model"] for r in fake.requests] == ["broken-model", "stub-model"], "404 is not retried"


async def test_exhausted_provider_raises_llm_error(stub) -> None:
    fake, url = stub
    fake.fail_next = 10
    with pytest.raises(LLMError, match="stub-model"):
        await _chat(url, retries=1).complete([ChatMessage(role="user", content="hi")], [])
    assert len(fake.requests) == 2


async def test_remote_model_requests_are_disabled_in_tests() -> None:
    assert llm_module.ALLOW_REMOTE_MODEL_REQUESTS is False
    with pytest.raises(LLMError, match="disabled"):
        await LiteLLMChat("gpt-4o-mini").complete([ChatMessage(role="user", content="hi")], [])


async def test_stop_sequences_reach_the_provider_only_when_set(stub) -> None:
    fake, url = stub
    await _chat(url, stop=["\n\n\n\n"]).complete([ChatMessage(role="user", content="hi")], [])
    await _chat(url).complete([ChatMessage(role="user", content="hi")], [])
    assert fake.requests[0]["stop"] == ["\n\n\n\n"]
    assert "stop" not in fake.requests[1]


def test_stop_sequences_come_from_the_environment_as_json(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from bot.settings import Settings
    monkeypatch.setenv("LLM_STOP", '["\\n\\n\\n\\n"]')
    assert Settings(_env_file=None).llm_stop == ["\n\n\n\n"]
