"""The HTTP server of `runbook-bot serve`: health checks and the API; Slack events join it."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web

from bot.api import add_routes
from bot.app import Runtime, open_runtime
from bot.settings import Settings

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
    ready = all(v.startswith("ok") for v in checks.values())
    return web.json_response({"ready": ready, "checks": checks}, status=200 if ready else 503)


def build_web_app(runtime: Runtime) -> web.Application:
    """The aiohttp application with every route of the server."""
    app = web.Application()
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    add_routes(app, runtime.answerer)
    return app


async def run_server(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, then close the pool (stopping the embedded database)."""
    runtime = await open_runtime(settings)
    runner = web.AppRunner(build_web_app(runtime))
    await runner.setup()
    site = web.TCPSite(runner, "0.0.0.0", settings.port)
    await site.start()
    log.info("listening on port %s", settings.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        await runtime.close()
