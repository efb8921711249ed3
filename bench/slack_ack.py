"""Slack ack latency and time to placeholder under N concurrent `/runbook` commands.

Runs the real server (aiohttp + Bolt) against a throw-away embedded Postgres holding the example
runbooks, with the Web API played by tests/slackfake.py (optionally slowed down to look like the
real Slack), sends N signed slash commands at once over HTTP and prints, per request:

- ack: the HTTP round trip of the command (Slack wants it under 3 s),
- placeholder: from sending the command to the "Searching runbooks..." chat.postMessage reaching
  the Web API (the target is under 2 s; in ephemeral mode the ack *is* the placeholder),
- answer: from sending the command to the chat.update with the answer.

    python bench/slack_ack.py [-n 50] [--latency-ms 40] [--visibility channel|ephemeral] [--llm-delay-ms 0]

Prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from bot import EXAMPLE_RUNBOOKS  # noqa: E402
from bot.app import Runtime, make_answerer, slack_config  # noqa: E402
from bot.server import build_web_app  # noqa: E402
from bot.slack.adapter import build_slack_app  # noqa: E402
from retrieval import db  # noqa: E402
from retrieval.embed import WordLlamaEmbedder  # noqa: E402
from retrieval.ingest import IngestOptions, ingest  # noqa: E402
from tests.fakes import ScriptedLLM, final  # noqa: E402
from tests.slackfake import FORM, FakeSlackAPI, command_body, sign, slack_settings  # noqa: E402

QUESTIONS = [
    "disk full on /var/lib/docker", "pod in CrashLoopBackOff after deploy", "kafka consumer lag growing",
    "postgres replica is lagging behind the primary", "TLS certificate expires in 3 days", "node NotReady",
    "redis memory usage at maxmemory", "OOMKilled containers in payments", "DNS resolution failures in cluster",
    "HTTP 5xx spike on the checkout API",
]


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))] * 1000


def row(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:>12}: n/a"
    return (f"{name:>12}: p50 {pct(values, 50):7.1f} ms   p95 {pct(values, 95):7.1f} ms   "
            f"max {max(values) * 1000:7.1f} ms   mean {statistics.mean(values) * 1000:7.1f} ms   (n={len(values)})")


async def one(session: aiohttp.ClientSession, url: str, fake: FakeSlackAPI, i: int) -> dict[str, Any]:
    user = f"U{i:08d}"
    body = command_body(QUESTIONS[i % len(QUESTIONS)], user=user, channel=f"C{i % 5:08d}",
                        response_url=fake.response_url(user))
    sent = time.perf_counter()
    async with session.post(url, data=body.encode(), headers={"Content-Type": FORM, **sign(body)}) as resp:
        await resp.read()
        status = resp.status
    return {"user": user, "sent": sent, "ack": time.perf_counter() - sent, "status": status}


def arrivals(fake: FakeSlackAPI) -> tuple[dict[str, float], dict[str, float]]:
    """Per user: when the placeholder and the answer reached the fake."""
    placeholders: dict[str, float] = {}
    for call in fake.calls_to("chat.postMessage"):
        m = re.search(r"<@(U\d+)> asked", str(call.args.get("blocks")))
        if m:
            placeholders.setdefault(m[1], call.at)
    answers: dict[str, float] = {}
    for call in fake.calls_to("chat.update") + fake.calls_to("response_url"):
        m = re.search(r"<@(U\d+)> asked", str(call.args.get("blocks")))
        if m and "Searching runbooks" not in str(call.args.get("blocks")):
            answers.setdefault(m[1], call.at)
    return placeholders, answers


async def run(n: int, latency_ms: float, visibility: str, llm_delay_ms: float) -> None:
    embedder = WordLlamaEmbedder()
    with db.throwaway_server() as url:
        pool = await db.open_pool(url, min_size=2, max_size=8)
        await ingest(pool, embedder, [EXAMPLE_RUNBOOKS], IngestOptions(source="examples"))
        fake = await FakeSlackAPI(latency_s=latency_ms / 1000).start()
        settings = slack_settings(fake, slack_user_rate_limit=0, slack_channel_rate_limit=0,
                                  slack_answer_visibility=visibility)
        llm = None
        if llm_delay_ms:
            llm = ScriptedLLM([final("See the runbook.", [])], delay=llm_delay_ms / 1000)
        answerer = make_answerer(settings, pool, embedder, llm)
        bot = build_slack_app(slack_config(settings), answerer)
        runner = web.AppRunner(build_web_app(Runtime(settings, pool, embedder, answerer), bot))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        target = f"http://127.0.0.1:{port}/slack/events"
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                await one(session, target, fake, 10_000)  # warm-up: auth.test, first query
                await bot.tasks.drain(120)
                fake.calls.clear()
                started = time.perf_counter()
                results = await asyncio.gather(*[one(session, target, fake, i) for i in range(n)])
                await bot.tasks.drain(600)
                wall = time.perf_counter() - started
        finally:
            await runner.cleanup()
            await fake.stop()
            await pool.close()
    placeholders, answers = arrivals(fake)
    sent = {r["user"]: r["sent"] for r in results}
    print(f"{n} concurrent /runbook commands, visibility={visibility}, fake Web API latency {latency_ms:.0f} ms,"
          f" {'LLM delay %.0f ms' % llm_delay_ms if llm_delay_ms else 'extractive answers'};"
          f" statuses {sorted({r['status'] for r in results})}; all answered in {wall:.2f} s")
    print(row("ack", [r["ack"] for r in results]))
    if visibility == "channel":
        print(row("placeholder", [placeholders[u] - sent[u] for u in sent if u in placeholders]))
    else:
        print(f"{'placeholder':>12}: = the ack (ephemeral mode)")
    print(row("answer", [answers[u] - sent[u] for u in sent if u in answers]))
    print(f"{'over 3 s':>12}: {sum(r['ack'] > 3 for r in results)} acks;"
          f" over 2 s: {sum(placeholders.get(u, 1e9) - sent[u] > 2 for u in sent) if visibility == 'channel' else 0}"
          " placeholders")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=40.0, help="added to every fake Web API call")
    parser.add_argument("--visibility", choices=["channel", "ephemeral"], default="channel")
    parser.add_argument("--llm-delay-ms", type=float, default=0.0, help="a scripted model that takes this long")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(run(args.n, args.latency_ms, args.visibility, args.llm_delay_ms))


if __name__ == "__main__":
    main()
