"""The chat adapters' harnesses: Slack's fake Web API and Teams' fake Bot Connector (with the issuer of
activity tokens and the signing keys the SDK checks them with), each with the real server in front of
the example runbooks. Test modules that call their fake `fake` alias `slack_api` or `connector`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.slackfake import FakeSlackAPI, Harness
from tests.teamsfake import FakeConnector, Issuer, LocalJwks, TeamsHarness


@pytest.fixture
async def slack_api() -> AsyncIterator[FakeSlackAPI]:
    """Slack's Web API, response URLs and Socket Mode, played on a local port."""
    api = await FakeSlackAPI().start()
    yield api
    await api.stop()


@pytest.fixture
async def slack(slack_api: FakeSlackAPI, examples_pool: Any, embedder: Any) -> AsyncIterator[Harness]:
    """The server with the Slack adapter mounted, talking to `slack_api`."""
    async with Harness.running(slack_api, examples_pool, embedder) as harness:
        yield harness


@pytest.fixture
async def connector() -> AsyncIterator[FakeConnector]:
    """The Bot Connector, Entra ID's token endpoint and the signing keys, played on a local port."""
    async with FakeConnector() as fake:
        yield fake


@pytest.fixture
def issuer(connector: FakeConnector) -> Issuer:
    """Signs activity tokens with a key that `connector` publishes."""
    return Issuer.serving(connector)


@pytest.fixture
def jwks(connector: FakeConnector, monkeypatch: pytest.MonkeyPatch) -> LocalJwks:
    """The SDK's validator gets its signing keys from the fake (the URL it asks for is recorded)."""
    return LocalJwks.install(connector, monkeypatch)


@pytest.fixture
async def teams(connector: FakeConnector, issuer: Issuer, jwks: LocalJwks, examples_pool: Any,
                embedder: Any) -> AsyncIterator[TeamsHarness]:
    """The server with the Teams adapter mounted, replying through `connector`."""
    async with TeamsHarness.running(connector, issuer, examples_pool, embedder) as harness:
        yield harness
