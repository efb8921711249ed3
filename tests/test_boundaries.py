"""The architecture as the imports show it: bot -> {retrieval, guardrails, prompts}, never back; each
third-party SDK in its one module; measurement code never imported by what answers a question."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = {"bot", "retrieval", "guardrails", "prompts"}


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    """The modules (and `module.name`s) these import statements bring in."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def _imports(package: str) -> dict[str, set[str]]:
    """Module path (relative to the repo) -> every module it imports, top-level or inside functions."""
    return {str(path.relative_to(REPO)): _names(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
            for path in sorted((REPO / package).rglob("*.py"))}


def _top_level_imports(path: Path) -> set[str]:
    return _names(ast.parse(path.read_text(encoding="utf-8")).body)


@pytest.mark.parametrize("package, allowed", [("retrieval", {"retrieval"}), ("prompts", {"prompts"}),
                                              ("guardrails", {"guardrails"})])
def test_the_inner_packages_import_nothing_of_the_bot(package: str, allowed: set[str]) -> None:
    for module, names in _imports(package).items():
        ours = {n.split(".")[0] for n in names} & OURS
        assert ours <= allowed, f"{module} imports {sorted(ours - allowed)}"


@pytest.mark.parametrize("sdk, home", [("litellm", "bot/llm.py"), ("slack_bolt", "bot/slack/"),
                                       ("microsoft_agents", "bot/teams/"), ("apscheduler", "bot/jobs.py")])
def test_each_sdk_has_one_home(sdk: str, home: str) -> None:
    users = {module for package in OURS for module, names in _imports(package).items()
             if any(n == sdk or n.startswith(sdk + ".") for n in names)}
    assert users and all(m == home or (home.endswith("/") and m.startswith(home)) for m in users), sorted(users)


def test_chat_core_imports_no_chat_sdk() -> None:
    for module, names in _imports("bot").items():
        if module.startswith("bot/chat/"):
            assert not {n for n in names if n.split(".")[0] in {"slack_bolt", "slack_sdk", "microsoft_agents"}}, module


def test_measurement_is_only_imported_lazily_by_the_cli() -> None:
    for path in sorted((REPO / "bot").rglob("*.py")):
        if "measure" in path.parts:
            continue
        top = _top_level_imports(path)
        assert not {n for n in top if n.startswith("bot.measure")}, f"{path.relative_to(REPO)} imports measurement"
    lazily = {m for m, names in _imports("bot").items() if any(n.startswith("bot.measure") for n in names)}
    assert lazily and all(m.startswith(("bot/cli/", "bot/measure/")) for m in lazily), lazily


def test_answering_a_question_loads_no_measurement_code() -> None:
    code = ("import sys, bot.cli.main, bot.server, bot.slack.adapter, bot.teams.adapter, bot.jobs;"
            "print(sorted(m for m in sys.modules if m.startswith('bot.measure')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_example_runbooks_ship_in_the_wheel(tmp_path: Path) -> None:
    # `pip install .` then `runbook-bot demo` in any directory: the runbooks must be package data.
    source = tmp_path / "src"  # a clean copy: an in-tree build/ could hold files of an older layout
    for name in ("pyproject.toml", "README.md"):
        source.mkdir(exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    for package in OURS:
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=300)
    if built.returncode != 0 and "No module named" in built.stderr:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-200:]}")
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("bot/examples/runbooks/") and n.endswith(".md")}
    assert shipped == {p.name for p in (REPO / "bot" / "examples" / "runbooks").glob("*.md")}
    assert not {n for n in names if n.startswith(("tests/", "bench/"))}


def test_only_the_wiring_and_the_cli_see_the_settings() -> None:
    # bot/app.py turns the settings into SearchConfig, SlackConfig, TeamsConfig, JobsConfig and
    # ServeConfig; the adapters, the server, the jobs and the answer path read only those.
    readers = {module for module, names in _imports("bot").items() if "bot.settings" in names}
    assert readers <= {"bot/app.py", "bot/settings.py"} | {m for m in readers if m.startswith(("bot/cli/", "bot/measure/"))}
    assert "bot/app.py" in readers


def test_the_slack_config_keeps_its_secrets_out_of_logs() -> None:
    from bot.app import slack_config
    from bot.settings import Settings

    config = slack_config(Settings(_env_file=None, slack_bot_token="xoxb-secret-token",  # type: ignore[arg-type]
                                   slack_signing_secret="signing-secret"))  # type: ignore[arg-type]
    assert config.bot_token == "xoxb-secret-token" and config.signing_secret == "signing-secret"
    assert "secret" not in repr(config)
