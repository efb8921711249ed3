"""The runbook-bot command as a user runs it (subprocesses, real databases)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.conftest import EXAMPLES


def run(args: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli.main", *args], capture_output=True, text=True, env=env, timeout=timeout,
        cwd=Path(__file__).resolve().parents[3],
    )


@pytest.fixture
def env(database_url: str, tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_", "EMBEDDING_"))}
    return {**clean, "DATABASE_URL": database_url, "RUNBOOK_BOT_HOME": str(tmp_path / "home"), "LOG_LEVEL": "WARNING"}


def test_demo_on_embedded_defaults(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith(("LLM_", "EMBEDDING_"))}
    env["RUNBOOK_BOT_HOME"] = str(tmp_path / "home")
    result = run(["demo"], env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"{len(list(EXAMPLES.glob('*.md')))} added" in out
    assert "Disk full" in out and "[1]" in out and "Sources:" in out
    assert "docker" in out.lower() and "Extractive answer" in out
    assert (tmp_path / "home" / "pgdata" / "PG_VERSION").exists()
    again = run(["demo"], env)
    assert again.returncode == 0 and "10 unchanged" in again.stdout.replace(f"{len(list(EXAMPLES.glob('*.md')))} unchanged", "10 unchanged")


def test_ingest_stats_json_and_search(env: dict[str, str], tmp_path: Path) -> None:
    result = run(["ingest", str(EXAMPLES), "--source", "examples", "--stats"], env)
    assert result.returncode == 0, result.stderr
    assert "added" in result.stdout and "parse:" in result.stdout.replace(" ", "") and "embed" in result.stdout
    again = run(["ingest", str(EXAMPLES), "--source", "examples", "--json"], env)
    summary = json.loads(again.stdout)
    assert summary["unchanged"] == len(list(EXAMPLES.glob("*.md"))) and summary["added"] == 0
    search = run(["search", "x509: certificate has expired", "-k", "3", "--json"], env)
    hits = json.loads(search.stdout)["results"]
    assert hits[0]["path"] == "tls-certificate-expiry.md"
    explained = run(["search", "kafka consumer lag", "--explain"], env)
    assert "lexical rank" in explained.stdout and "kafka-consumer-lag.md" in explained.stdout


def test_ask_json_is_the_answer_model(env: dict[str, str]) -> None:
    assert run(["ingest", str(EXAMPLES)], env).returncode == 0
    result = run(["ask", "redis OOM command not allowed when used memory > maxmemory", "--json"], env)
    answer = json.loads(result.stdout)
    assert {"answer", "steps", "sources", "confidence", "abstained", "mode", "model_used"} <= set(answer)
    assert answer["mode"] == "extractive" and not answer["abstained"]
    assert answer["sources"][0]["path"] == "redis-memory.md"
    assert all(step["citations"] for step in answer["steps"])
    assert answer["trace"]["retrieved_chunk_ids"] and answer["answer_id"]
    with psycopg.connect(env["DATABASE_URL"]) as conn:
        row = conn.execute("SELECT entry_point, mode, cited_keys FROM answers WHERE id = %s",
                           (answer["answer_id"],)).fetchone()
    assert row is not None and row[0] == "cli" and row[1] == "extractive"
    assert row[2][0]["path"] == "redis-memory.md" and len(row[2][0]["text_hash"]) == 64


def test_ask_with_an_unreachable_model_still_answers(env: dict[str, str]) -> None:
    assert run(["ingest", str(EXAMPLES)], env).returncode == 0
    env = {**env, "LLM_MODEL": "openai/gpt-4o-mini", "LLM_API_BASE": "http://127.0.0.1:9/v1",
           "LLM_API_KEY": "sk-never-shown", "LLM_RETRIES": "0"}
    result = run(["ask", "x509: certificate has expired on the ingress", "--json"], env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["mode"] == "extractive" and answer["sources"][0]["path"] == "tls-certificate-expiry.md"
    assert "language model failed" in answer["notes"][0]
    assert "sk-never-shown" not in result.stdout + result.stderr


def test_config_masks_secrets(env: dict[str, str]) -> None:
    env = {**env, "SLACK_BOT_TOKEN": "xoxb-very-secret", "DATABASE_URL": "postgresql://u:hunter2@db/x"}
    out = run(["config"], env).stdout
    assert "hunter2" not in out and "xoxb-very-secret" not in out
    assert "DATABASE_URL=postgresql://u:********@db/x" in out and "SLACK_BOT_TOKEN=********" in out


def test_db_commands(env: dict[str, str]) -> None:
    assert "up to date" in run(["db", "upgrade"], env).stdout
    status = run(["db", "status"], env).stdout
    assert "001_init:" in status and "pending" not in status


def test_database_down_is_one_clear_line(env: dict[str, str]) -> None:
    env = {**env, "DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2"}
    result = run(["search", "disk full"], env)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: cannot connect to the database")
    assert "Traceback" not in result.stderr


def test_an_operator_policy_that_does_not_parse_is_one_clear_line(env: dict[str, str], tmp_path: Path) -> None:
    policy = tmp_path / "ops.yaml"
    policy.write_text("rules:\n  - id: x\n    reason: a: b\n", encoding="utf-8")  # a colon YAML reads as a mapping
    result = run(["ask", "disk full on /var/lib/docker"], {**env, "GUARD_POLICY": str(policy)})
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"error: {policy}: mapping values are not allowed here")
    assert "Traceback" not in result.stderr


def test_empty_question_gets_help(env: dict[str, str]) -> None:
    result = run(["ask", "  "], env)
    assert result.returncode == 2 and "Ask me about an incident" in result.stderr


def test_ingest_missing_path(env: dict[str, str], tmp_path: Path) -> None:
    result = run(["ingest", str(tmp_path / "missing")], env)
    assert result.returncode == 2 and "no such file or directory" in result.stderr


def test_guard_check_is_wired_into_the_main_command(env: dict[str, str]) -> None:
    text = "Free space:\n\n```bash\ndocker system prune -a\nrm -rf /\ndf -h\n```\n"
    result = subprocess.run([sys.executable, "-m", "bot.cli.main", "guard", "check", "-", "--json"], input=text,
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    findings = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    by_command = {f["command"]: f for f in findings}
    assert by_command["rm -rf /"]["severity"] == "block"
    assert by_command["docker system prune -a"]["severity"] == "warn"
    assert "df -h" not in by_command
    assert all({"command", "rule", "severity", "reason", "safer"} <= set(f) for f in findings)


def test_sync_and_stale_run_the_serve_jobs_once(env: dict[str, str], tmp_path: Path) -> None:
    """`sync` and `report stale` run the scheduler's jobs with the configuration `serve` gives them."""
    runbooks = tmp_path / "runbooks"
    shutil.copytree(EXAMPLES, runbooks)
    env = {**env, "SYNC_SOURCES": json.dumps([{"name": "platform", "path": str(runbooks), "pull": False}])}
    result = run(["sync"], env)
    assert result.returncode == 0, result.stderr
    [synced] = json.loads(result.stdout)
    assert (synced["source"], synced["status"]) == ("platform", "ok")
    assert synced["ingest"]["added"] == len(list(EXAMPLES.glob("*.md")))
    assert run(["sync", "--source", "nothing-like-it"], env).returncode == 2
    stale = run(["report", "stale", "--days", "1", "--json"], env)
    assert stale.returncode == 0, stale.stderr
    assert json.loads(stale.stdout)["stale"] == [], "every runbook was just ingested"


async def test_feedback_show_lists_corrections_and_undo_withdraws_them(env: dict[str, str]) -> None:
    import numpy as np

    from bot.records.corrections import NewCorrection, add_correction
    from retrieval import db

    assert run(["ingest", str(EXAMPLES), "--source", "examples"], env).returncode == 0
    pool = await db.open_pool(env["DATABASE_URL"], min_size=1, max_size=1)
    try:
        cid = await add_correction(pool, NewCorrection(platform="slack", user_id="U1", user_name="ann",
                                                       question="disk full", path="oom-killed.md",
                                                       alertname="NodeFilesystemAlmostFull"), np.ones(4))
    finally:
        await pool.close()
    shown = run(["feedback", "show"], env)
    assert shown.returncode == 0 and f"#{cid}" in shown.stdout and "-> oom-killed.md" in shown.stdout, shown.stdout
    assert run(["feedback", "undo", str(cid)], env).returncode == 0
    assert run(["feedback", "undo", str(cid)], env).returncode == 2, "already withdrawn"
    listed = json.loads(run(["feedback", "show", "--json", "--withdrawn"], env).stdout)
    assert [c["withdrawn_why"] for c in listed["corrections"]] == ["withdrawn from the command line"]


def test_ingest_refuses_a_path_that_is_no_source(env: dict[str, str]) -> None:
    """`ingest /dev/null --source NAME` used to report every document of NAME deleted."""
    assert run(["ingest", str(EXAMPLES), "--source", "examples"], env).returncode == 0
    result = run(["ingest", "/dev/null", "--source", "examples"], env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "neither a directory nor a regular file" in result.stderr and "Traceback" not in result.stderr
    again = json.loads(run(["ingest", str(EXAMPLES), "--source", "examples", "--json"], env).stdout)
    assert again["unchanged"] == len(list(EXAMPLES.glob("*.md"))) and again["added"] == 0


def test_ingest_of_an_empty_tree_needs_allow_empty(env: dict[str, str], tmp_path: Path) -> None:
    assert run(["ingest", str(EXAMPLES), "--source", "examples"], env).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run(["ingest", str(empty), "--source", "examples"], env)
    assert result.returncode == 2 and "--allow-empty" in result.stderr and "Traceback" not in result.stderr
    assert "deleted" not in result.stdout
    files = len(list(EXAMPLES.glob("*.md")))
    allowed = run(["ingest", str(empty), "--source", "examples", "--allow-empty"], env)
    assert allowed.returncode == 0 and f"{files} deleted" in allowed.stdout


def test_ingest_of_a_symlink_loop_is_one_clear_line(env: dict[str, str], tmp_path: Path) -> None:
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    result = run(["ingest", str(tmp_path / "a")], env)
    assert result.returncode == 2 and "symbolic link loop" in result.stderr and "Traceback" not in result.stderr


def test_ask_reads_invalid_utf8_on_stdin(env: dict[str, str]) -> None:
    assert run(["ingest", str(EXAMPLES)], env).returncode == 0
    result = subprocess.run([sys.executable, "-m", "bot.cli.main", "ask", "-"], input=b"\xff\xfe disk full",
                            capture_output=True, env=env, timeout=300, cwd=Path(__file__).resolve().parents[3])
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr and b"not valid UTF-8" in result.stderr
    assert b"disk-full.md" in result.stdout


@pytest.mark.parametrize("query", ["", "   "])
def test_search_with_an_empty_query_is_refused(env: dict[str, str], query: str) -> None:
    result = run(["search", query], env)
    assert result.returncode == 2 and "empty" in result.stderr
    assert "nan" not in (result.stdout + result.stderr).lower()
