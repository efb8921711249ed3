"""The HTTP server of `runbook-bot serve`: health checks, the API, Slack and Teams.

Slack arrives over HTTP (`POST /slack/events` on the same port) unless SLACK_APP_TOKEN is set,
in which case the bot connects out over Socket Mode and no Slack route is mounted. Teams posts to
`POST /api/messages` on the same port when TEAMS_APP_ID is set (or TEAMS_DEV_MODE, which makes the
whole server listen on 127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web

from bot.api import add_routes
from bot.app import Runtime, open_runtime, slack_config
from bot.jobs import build_scheduler
from bot.observability import metrics_payload
from bot.settings import Settings
from bot.slack.adapter import SlackBot, build_slack_app
from bot.teams.adapter import TeamsBot, build_teams_app
from bot.teams.auth import bind_host, check_settings, configured

log = logging.getLogger(__name__)
RUNTIME = web.AppKey("runtime", Runtime)


async def healthz(request: web.Request) -> web.Response:
    """Liveness: the process answers."""
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """Readiness: the database answers and the embedder is loaded."""
    runtime = request.app[RUNTIME]
    checks: dict[str, str] = {}
    try:
        async with runtime.pool.connection(timeout=5) as conn:
            await conn.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # any failure means not ready
        checks["database"] = f"error: {type(exc).__name__}"
    checks["embedder"] = f"ok ({runtime.embedder.backend}/{runtime.embedder.model})"
    llm = runtime.answerer.llm
    health = getattr(llm, "health", None)
    checks["llm"] = "ok (none configured: extractive answers)" if llm is None else health() if health else "ok"
    ready = all(v.startswith("ok") for v in checks.values())
    return web.json_response({"ready": ready, "checks": checks}, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    """Prometheus metrics."""
    body, content_type = metrics_payload()
    return web.Response(body=body, headers={"Content-Type": content_type})


def build_web_app(runtime: Runtime, slack: SlackBot | None = None, teams: TeamsBot | None = None) -> web.Application:
    """The aiohttp application with every route of the server (Slack's and Teams' when given)."""
    app = web.Application()
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    add_routes(app, runtime.answerer)
    if slack is not None:
        app.router.add_post("/slack/events", slack.handle)
    if teams is not None:
        teams.mount(app)
    return app


def slack_bot(runtime: Runtime) -> SlackBot | None:
    """The Slack adapter when SLACK_BOT_TOKEN is set, else None."""
    if runtime.settings.slack_bot_token is None:
        return None
    return build_slack_app(slack_config(runtime.settings), runtime.answerer)


def teams_bot(runtime: Runtime) -> TeamsBot | None:
    """The Teams adapter when TEAMS_APP_ID (or TEAMS_DEV_MODE) is set, else None."""
    if not configured(runtime.settings):
        return None
    return build_teams_app(runtime.settings, runtime.answerer)


async def run_server(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT (or cancellation), then let answers in flight finish and close
    the pool (stopping the embedded database). Slack: Socket Mode when SLACK_APP_TOKEN is set,
    else HTTP on /slack/events when SLACK_BOT_TOKEN is. Teams: /api/messages when configured; unsafe
    Teams settings stop the server before it starts."""
    host = bind_host(settings)
    if configured(settings):
        check_settings(settings, host)
    runtime = await open_runtime(settings)
    runner: web.AppRunner | None = None
    slack: SlackBot | None = None
    teams: TeamsBot | None = None
    socket = None
    scheduler = build_scheduler(runtime)
    loop = asyncio.get_running_loop()
    try:
        scheduler.start()
        slack, teams = slack_bot(runtime), teams_bot(runtime)
        app_token = settings.slack_app_token.get_secret_value() if settings.slack_app_token else None
        runner = web.AppRunner(build_web_app(runtime, slack if slack and not app_token else None, teams))
        await runner.setup()
        await web.TCPSite(runner, host, settings.port).start()
        if teams is not None:
            await teams.start()
        if slack is not None:
            await slack.start()
            if app_token:
                socket = slack.socket_mode(app_token)
                await socket.connect_async()
        log.info("listening on %s:%s; Slack: %s; Teams: %s", host, settings.port,
                 "off" if slack is None else "Socket Mode" if socket else "HTTP /slack/events",
                 "off" if teams is None else "DEV MODE /api/messages" if teams.dev_mode else "/api/messages")
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if scheduler.running:
            scheduler.shutdown(wait=False)
        if socket is not None:
            await socket.close_async()
        if runner is not None:
            await runner.cleanup()
        if slack is not None:
            await slack.close()
        if teams is not None:
            await teams.close()
        await runtime.close()
