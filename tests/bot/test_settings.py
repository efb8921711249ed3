"""Settings are read from the environment once and shown with secrets masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import Settings, mask_url


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RUNBOOK_BOT_HOME", str(tmp_path))
    monkeypatch.setenv("EMBEDDING_BACKEND", "sentence-transformers")
    monkeypatch.setenv("LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("DATABASE_URL", "postgresql://bot:s3cret@db.internal:5432/runbooks")
    s = Settings(_env_file=None)
    assert s.pgdata == tmp_path / "pgdata"
    assert s.embedding_backend == "sentence-transformers" and s.llm_model == "gpt-4o-mini"
    assert s.database_dsn() == "postgresql://bot:s3cret@db.internal:5432/runbooks"


def test_invalid_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDDING_BACKEND", "word2vec")
    with pytest.raises(ValueError, match="embedding_backend"):
        Settings(_env_file=None)


def test_masked_hides_every_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://bot:s3cret@db.internal/runbooks")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-123-456-abcdef")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "0123456789abcdef")
    shown = Settings(_env_file=None).masked()
    text = repr(shown)
    assert "s3cret" not in text and "xoxb-123" not in text and "0123456789abcdef" not in text
    assert shown["DATABASE_URL"] == "postgresql://bot:********@db.internal/runbooks"
    assert shown["SLACK_BOT_TOKEN"] == "********" and shown["SLACK_APP_TOKEN"] is None


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://u:p@h/d", "postgresql://u:********@h/d"),
        ("postgresql://u@h/d", "postgresql://u@h/d"),
        ("host=h user=u password=p dbname=d", "host=h user=u password=******** dbname=d"),
        ("postgresql://h/d?password=p&sslmode=require", "postgresql://h/d?password=********&sslmode=require"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_model_profiles_and_explicit_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.app import make_llm

    for name in ("LLM_MODEL", "LLM_PROFILE", "LLM_MODEL_CHEAP", "LLM_MODEL_BALANCED", "LLM_MODEL_PREMIUM"):
        monkeypatch.delenv(name, raising=False)
    assert Settings(_env_file=None).chat_model() is None
    assert make_llm(Settings(_env_file=None)) is None, "no model: extractive answers"
    monkeypatch.setenv("LLM_MODEL_CHEAP", "gpt-4o-mini")
    monkeypatch.setenv("LLM_MODEL_PREMIUM", "anthropic/claude-sonnet-4-5")
    monkeypatch.setenv("LLM_PROFILE", "premium")
    settings = Settings(_env_file=None)
    assert settings.chat_model() == "anthropic/claude-sonnet-4-5"
    assert settings.chat_model("cheap") == "gpt-4o-mini"
    assert settings.chat_model("balanced") is None
    monkeypatch.setenv("LLM_MODEL", "ollama/llama3.1")
    monkeypatch.setenv("LLM_FALLBACK_MODEL", "gpt-4o-mini")
    chat = make_llm(Settings(_env_file=None))
    assert chat is not None and chat.name == "ollama/llama3.1" and chat.fallback == "gpt-4o-mini"  # type: ignore[attr-defined]


def test_secret_values_feed_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_API_KEY", "sk-live-abcdef123456")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-3")
    assert {"sk-live-abcdef123456", "xoxb-1-2-3"} <= set(Settings(_env_file=None).secret_values())


def test_access_settings_from_the_environment_keep_api_keys_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.app import access_config, api_config

    monkeypatch.setenv("API_KEYS", '{"grafana": {"key": "k-very-secret-1", "sources": ["examples"]}}')
    monkeypatch.setenv("RESTRICTED_SOURCES", '{"security": {"allowed_groups": ["secops"]}}')
    monkeypatch.setenv("ACCESS_GROUPS", '{"secops": ["U0SEC"]}')
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert "k-very-secret-1" in settings.secret_values(), "redacted from answers like every secret"
    assert settings.masked()["API_KEYS"] == {"grafana": {"key": "********", "sources": ["examples"], "groups": []}}
    [key] = api_config(settings).keys
    assert (key.name, key.sources) == ("grafana", ("examples",)) and "k-very-secret-1" not in repr(key)
    access = access_config(settings)
    assert access.restricted_sources["security"].groups == ("secops",) and access.groups == {"secops": ("U0SEC",)}
