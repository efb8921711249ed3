"""The HTTP server of `runbook-bot serve`: health checks, the API, Slack and Teams.

Slack arrives over HTTP (`POST /slack/events` on the same port) unless SLACK_APP_TOKEN is set,
in which case the bot connects out over Socket Mode and no Slack route is mounted. Teams posts to
`POST /api/messages` on the same port when TEAMS_APP_ID is set (or TEAMS_DEV_MODE, which makes the
whole server listen on 127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import replace

from aiohttp import web

from bot.api import ApiConfig, add_routes
from bot.app import ServeConfig
from bot.jobs import build_scheduler
from bot.observability import metrics_payload
from bot.runtime import Runtime
from bot.slack.adapter import SlackBot, build_slack_app
from bot.teams.adapter import TeamsBot, build_teams_app
from bot.teams.auth import SERVE_HOST, bind_host, check_config, is_loopback
from retrieval.db import ping

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
        await ping(runtime.pool, timeout_s=5)
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


def build_web_app(runtime: Runtime, slack: SlackBot | None = None, teams: TeamsBot | None = None,
                  api: ApiConfig | None = None) -> web.Application:
    """The aiohttp application with every route of the server (Slack's and Teams' when given)."""
    app = web.Application()
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    add_routes(app, runtime.answerer, api)
    if slack is not None:
        app.router.add_post("/slack/events", slack.handle)
    if teams is not None:
        teams.mount(app)
    return app


def listen_host(config: ServeConfig) -> str:
    """Every interface, or loopback only in Teams development mode."""
    return bind_host(config.teams) if config.teams is not None else SERVE_HOST


def check_serve_config(config: ServeConfig) -> None:
    """Refuse unsafe Teams settings before anything starts (TeamsConfigError)."""
    if config.teams is not None:
        check_config(config.teams, listen_host(config))


async def run_server(runtime: Runtime, config: ServeConfig) -> None:
    """Serve until SIGTERM or SIGINT (or cancellation), then let answers in flight finish and close
    the runtime (stopping the embedded database). Slack: Socket Mode when it has an app token, else
    HTTP on /slack/events. Teams: /api/messages when configured."""
    host = listen_host(config)
    runner: web.AppRunner | None = None
    slack: SlackBot | None = None
    teams: TeamsBot | None = None
    socket = None
    scheduler = build_scheduler(runtime, config.jobs)
    loop = asyncio.get_running_loop()
    try:
        check_serve_config(config)
        scheduler.start()
        slack = build_slack_app(config.slack, runtime.answerer) if config.slack is not None else None
        teams = build_teams_app(config.teams, runtime.answerer) if config.teams is not None else None
        app_token = config.slack.app_token if config.slack is not None else ""
        api = replace(config.api, require_key=not is_loopback(host))  # beyond loopback, only with a key
        runner = web.AppRunner(build_web_app(runtime, slack if slack and not app_token else None, teams, api))
        await runner.setup()
        await web.TCPSite(runner, host, config.port).start()
        if teams is not None:
            await teams.start()
        if slack is not None:
            await slack.start()
            if app_token:
                socket = slack.socket_mode(app_token)
                await socket.connect_async()
        log.info("listening on %s:%s; Slack: %s; Teams: %s", host, config.port,
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
