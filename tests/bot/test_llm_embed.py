"""Hosted embeddings through litellm's real HTTP path, against a local OpenAI-compatible stub."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from aiohttp import web

from bot.llm import LiteLLMEmbedder
from retrieval.embed import EmbedderUnavailable


def _vector(text: str) -> list[float]:
    rng = np.random.default_rng(abs(hash(text)) % (2**32))
    return rng.normal(size=8).tolist()


class StubServer:
    """POST /v1/embeddings like OpenAI's API; counts requests; can be told to fail."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next = 0
        self.url = ""

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.fail_next:
            self.fail_next -= 1
            return web.json_response({"error": {"message": "overloaded", "type": "server_error"}}, status=500)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(inputs)]
        data.reverse()  # providers may return rows out of order
        return web.json_response({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": 3, "total_tokens": 3}})


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner_box: list[web.AppRunner] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_post("/v1/embeddings", server.embeddings)
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port = runner.addresses[0][1]
        server.url = f"http://127.0.0.1:{port}/v1"
        runner_box.append(runner)
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield server
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_litellm_embeddings_over_http(stub: StubServer) -> None:
    embedder = LiteLLMEmbedder("openai/text-embedding-test", api_base=stub.url, api_key="sk-test", batch_size=2)
    assert embedder.dim == 8
    texts = ["disk full", "pod crash looping", "certificate expired"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 8)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    expected = np.asarray(_vector("pod crash looping"))
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-5), "rows are put back in order"
    assert [len(r["input"]) for r in stub.requests[1:]] == [2, 1], "batched"


def test_provider_errors_are_retried_then_reported(stub: StubServer) -> None:
    embedder = LiteLLMEmbedder("openai/text-embedding-test", api_base=stub.url, api_key="sk-test", retries=1)
    stub.fail_next = 1
    assert embedder.embed(["one"]).shape == (1, 8)
    stub.fail_next = 10
    with pytest.raises(EmbedderUnavailable, match="embedding provider failed"):
        embedder.embed(["two"])
