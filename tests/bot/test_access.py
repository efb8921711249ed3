"""Restricted runbooks: a runbook restricted by its front matter, or by its source, never reaches a
caller who may not see it, by any route: search, answers (steps, sources, closest titles), the
tools' reads by id or path, an alert's runbook link, the API (by key) and Slack (by channel)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.access import AccessConfig
from bot.agent import AgentLimits, run_agent
from bot.api import ApiConfig, ApiKeyScope, add_routes
from bot.app import make_answerer
from bot.context import IncidentContext
from bot.llm import ToolCall
from bot.settings import Settings
from bot.tools import RunbookTools
from retrieval.access import Audience, SourceRule, visibility
from retrieval.ingest import IngestOptions, ingest
from retrieval.search import hybrid_search
from retrieval.search_types import SearchFilters
from tests.bot.slack.test_adapter import texts
from tests.slackfake import FakeSlackAPI, Harness

DBA = "C0DBA0001"
OTHER = "C0OTHER01"
FAILOVER = "zephyr replica failover stuck: promote the standby of the zephyr cluster"
BREACH = "credential breach on the quokka gateway: rotate and quarantine"
RULES = {"security": SourceRule(channels=("C0SECOPS",), groups=("secops",))}


@pytest.fixture
async def restricted_pool(examples_pool, embedder, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The example runbooks, a runbook restricted by its front matter, and a restricted source."""
    extra, security = tmp_path / "extra", tmp_path / "security"
    extra.mkdir()
    security.mkdir()
    (extra / "zephyr-failover.md").write_text(
        "---\nvisibility: restricted\nallowed_channels: [C0DBA0001]\nallowed_groups: [dba]\n---\n"
        "# Zephyr replica failover stuck\n\n## Mitigation\n\nPromote the standby of the zephyr cluster:\n\n"
        "```\nzephyrctl promote --cluster zephyr-main standby-2\n```\n")
    (security / "quokka-breach.md").write_text(
        "# Credential breach on the quokka gateway\n\n## Response\n\nRotate the quokka gateway credentials and "
        "quarantine the host:\n\n```\nquokkactl rotate --all\n```\n")
    await ingest(examples_pool, embedder, [extra], IngestOptions(source="extra"))
    await ingest(examples_pool, embedder, [security], IngestOptions(source="security"))
    return examples_pool


def _shown(answer: object) -> str:
    return json.dumps(answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer)  # type: ignore[union-attr]


async def _tools(pool, embedder, audience: Audience) -> RunbookTools:  # type: ignore[no-untyped-def]
    return RunbookTools(pool, embedder, visibility=await visibility(pool, audience, RULES))


async def test_search_leaves_out_what_the_caller_may_not_see(restricted_pool, embedder) -> None:
    other = await visibility(restricted_pool, Audience(channels=(OTHER,)), RULES)
    for query, path in ((FAILOVER, "zephyr-failover.md"), (BREACH, "quokka-breach.md")):
        hidden = await hybrid_search(restricted_pool, embedder, query, k=8, filters=SearchFilters(visibility=other))
        assert path not in {h.document_path for h in hidden.chunks}
        assert not any("ephyr" in t or "uokka" in t for t in hidden.closest_titles)
        shown = await hybrid_search(restricted_pool, embedder, query, k=3)
        assert shown.chunks[0].document_path == path, "the operator (no visibility) sees it"
    for audience, query, path in ((Audience(channels=(DBA,)), FAILOVER, "zephyr-failover.md"),
                                  (Audience(groups=("dba",)), FAILOVER, "zephyr-failover.md"),
                                  (Audience(channels=("C0SECOPS",)), BREACH, "quokka-breach.md"),
                                  (Audience(groups=("secops",)), BREACH, "quokka-breach.md")):
        allowed = await visibility(restricted_pool, audience, RULES)
        found = await hybrid_search(restricted_pool, embedder, query, k=3, filters=SearchFilters(visibility=allowed))
        assert found.chunks[0].document_path == path, audience


async def test_the_tools_cannot_read_it_by_id_or_path(restricted_pool, embedder) -> None:
    operator = RunbookTools(restricted_pool, embedder)
    await operator.call(ToolCall(id="1", name="hybrid_search", arguments=json.dumps({"query": FAILOVER})))
    chunk = next(ev for ev in operator.ledger.evidence.values() if ev.path == "zephyr-failover.md")
    tools = await _tools(restricted_pool, embedder, Audience(channels=(OTHER,)))
    for name, arguments in (("fetch_parent_section", {"chunk_id": chunk.chunk_id}),
                            ("get_runbook", {"doc": "zephyr-failover.md"}),
                            ("get_runbook", {"doc": str(chunk.document_id)}),
                            ("get_runbook", {"doc": "%"}), ("get_runbook", {"doc": "_ephyr-failover.md"})):
        shown = await tools.call(ToolCall(id="2", name=name, arguments=json.dumps(arguments)))
        assert shown.startswith("error: no ") and "ephyr" not in shown.replace(arguments.get("doc", "") or "", ""), shown
    assert not tools.ledger.evidence
    allowed = await _tools(restricted_pool, embedder, Audience(channels=(DBA,)))
    read = await allowed.call(ToolCall(id="3", name="get_runbook", arguments=json.dumps({"doc": "zephyr-failover.md"})))
    assert "zephyrctl promote" in read


async def test_answers_never_name_it_not_even_as_the_closest_match(restricted_pool, embedder) -> None:
    for question in (FAILOVER, BREACH):
        tools = await _tools(restricted_pool, embedder, Audience(channels=(OTHER,)))
        answer = await run_agent(question, IncidentContext(entry_point="slack", channel=OTHER), llm=None,
                                 tools=tools, limits=AgentLimits())
        shown = _shown(answer)
        assert "ephyr" not in shown.replace(question, "").replace("zephyr", "") or "zephyr-failover" not in shown
        assert "zephyr-failover.md" not in shown and "quokka-breach.md" not in shown
        assert "zephyrctl" not in shown and "quokkactl" not in shown


async def test_an_alert_linking_to_it_does_not_pin_it(restricted_pool, embedder) -> None:
    answerer = make_answerer(Settings(_env_file=None), restricted_pool, embedder, None)  # type: ignore[call-arg]
    alert = {"alertname": "ZephyrFailoverStuck", "runbook_url": "https://git.example.com/runbooks/zephyr-failover.md"}
    context = IncidentContext(alert=alert, entry_point="slack", channel=OTHER)
    answer = await answerer.answer("what do I do?", context)
    assert "zephyr-failover.md" not in _shown(answer) and "zephyrctl" not in _shown(answer)
    allowed = await answerer.answer("what do I do?", IncidentContext(alert=alert, entry_point="slack", channel=DBA))
    assert allowed.sources[0].path == "zephyr-failover.md"


def test_the_audience_of_a_conversation() -> None:
    access = AccessConfig(groups={"dba": ("U0DBA", "C0DBAS")})
    assert access.audience(IncidentContext(entry_point="cli")).everyone
    slack = access.audience(IncidentContext(entry_point="slack", channel="C1", user="U0DBA"))
    assert slack == Audience(channels=("C1",), groups=("dba",))
    assert access.audience(IncidentContext(entry_point="teams", channel="C0DBAS")).groups == ("dba",)
    assert access.audience(IncidentContext(entry_point="slack", channel="C1", user="U2")).groups == ()
    keyed = Audience(groups=("x",), sources=("examples",))
    assert access.audience(IncidentContext(entry_point="api", audience=keyed)) is keyed


async def test_the_api_sees_what_its_key_allows(restricted_pool, embedder) -> None:
    settings = Settings(_env_file=None, restricted_sources={"security": {"allowed_groups": ["secops"]}})  # type: ignore[call-arg]
    keys = (ApiKeyScope("grafana", "k-grafana", sources=("examples",)), ApiKeyScope("dba", "k-dba", groups=("dba",)))
    app = web.Application()
    add_routes(app, make_answerer(settings, restricted_pool, embedder, None), ApiConfig(keys=keys, require_key=True))

    async def ask(client: TestClient, question: str, key: str | None) -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = await client.post("/api/rag/ask", json={"question": question}, headers=headers)
        return response.status, await response.text()

    async with TestClient(TestServer(app)) as client:
        status, body = await ask(client, FAILOVER, None)
        assert status == 401 and "API_KEYS" in body
        assert (await ask(client, FAILOVER, "k-wrong"))[0] == 401
        status, body = await ask(client, FAILOVER, "k-grafana")
        assert status == 200 and "zephyr-failover.md" not in body and "zephyrctl" not in body
        status, body = await ask(client, BREACH, "k-dba")
        assert status == 200 and "quokka-breach.md" not in body, "the source is restricted to secops"
        status, body = await ask(client, FAILOVER, "k-dba")
        assert status == 200 and json.loads(body)["sources"][0]["path"] == "zephyr-failover.md"
    loopback = web.Application()
    add_routes(loopback, make_answerer(settings, restricted_pool, embedder, None))
    async with TestClient(TestServer(loopback)) as client:
        status, body = await ask(client, FAILOVER, None)
        assert status == 200 and "zephyr-failover.md" not in body, "no key on loopback: only unrestricted runbooks"


async def test_slack_answers_in_a_channel_only_what_the_channel_may_see(restricted_pool, embedder,
                                                                         slack_api: FakeSlackAPI) -> None:
    slack = await Harness.start(slack_api, restricted_pool, embedder)
    try:
        await slack.command(FAILOVER, channel=OTHER)
        await slack.command(FAILOVER, channel=DBA)
        await slack.done()
        shown = {call.args["channel"]: texts(call.args["blocks"]) for call in slack_api.calls_to("chat.update")}
        assert "zephyr" not in shown[OTHER].lower().replace(FAILOVER.lower(), "") or "zephyrctl" not in shown[OTHER]
        assert "zephyrctl" not in shown[OTHER] and "Zephyr replica failover stuck" not in shown[OTHER]
        assert "zephyrctl promote" in shown[DBA]
    finally:
        await slack.close()
