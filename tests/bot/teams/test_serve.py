"""`runbook-bot serve` with Teams: /api/messages next to Slack's /slack/events, /healthz and the API; the
SDK's JWT check in front of it in production; development mode on loopback only."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.bot.slack.test_adapter import texts as slack_texts
from tests.bot.slack.test_serve import _free_port, _healthy, _until, serving
from tests.bot.teams.test_adapter import DISK, texts
from tests.slackfake import FORM, FakeSlackAPI, command_body, sign, slack_settings
from tests.teamsfake import APP_ID, APP_PASSWORD, FakeConnector, message

pytestmark = pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")


async def test_serve_hosts_slack_and_teams_side_by_side(slack_api: FakeSlackAPI, connector: FakeConnector,
                                                        examples_pool, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    settings = slack_settings(slack_api, database_url=examples_pool.conninfo, port=port, runbook_bot_home=tmp_path,
                              teams_dev_mode=True)
    base = f"http://127.0.0.1:{port}"
    async with serving(settings), aiohttp.ClientSession() as session:
        await _healthy(session, port)
        body = command_body(DISK, response_url=slack_api.response_url())
        async with session.post(f"{base}/slack/events", data=body.encode(),
                                headers={"Content-Type": FORM, **sign(body)}) as resp:
            assert resp.status == 200
        activity = message(f"<at>runbook-bot</at> {DISK}", service_url=connector.service_url)
        async with session.post(f"{base}/api/messages", json=activity) as resp:
            assert resp.status == 202
        await _until(lambda: slack_api.calls_to("chat.postMessage") and connector.calls_to("reply"))
    # the server let both answers finish before stopping
    assert "```df -hT" in slack_texts(slack_api.calls_to("chat.update")[0].args["blocks"])
    [update] = connector.calls_to("update")
    assert "**1.**" in texts(update.cards()[0])


async def test_serve_in_production_checks_every_activitys_token(connector: FakeConnector, examples_pool,
                                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The real wiring (MSAL, Microsoft's keys and hosts); only rejections are exercised, so nothing leaves."""
    from bot.settings import Settings

    port = _free_port()
    settings = Settings(_env_file=None, database_url=examples_pool.conninfo, port=port,  # type: ignore[call-arg]
                        runbook_bot_home=tmp_path, teams_app_id=APP_ID, teams_app_password=APP_PASSWORD)
    activity = message(f"<at>runbook-bot</at> {DISK}", service_url=connector.service_url)
    async with serving(settings), aiohttp.ClientSession() as session:
        await _healthy(session, port)
        url = f"http://127.0.0.1:{port}/api/messages"
        async with session.post(url, json=activity) as resp:
            assert resp.status == 401
        async with session.post(url, json=activity, headers={"Authorization": "Bearer not.a.jwt"}) as resp:
            assert resp.status == 401
        async with session.post(f"http://127.0.0.1:{port}/slack/events", data=b"{}") as resp:
            assert resp.status == 404, "Slack is not configured"
    assert not connector.calls
