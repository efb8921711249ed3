"""Secret redaction and system-prompt leak detection."""

from __future__ import annotations

import pytest

from guardrails import leaks_prompt, redact

SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.parametrize(("text", "expected"), [
    ("key AKIAIOSFODNN7EXAMPLE here", "key [redacted] here"),
    ("SLACK_BOT_TOKEN=xoxb-123456789012-abcdefghijkl", "SLACK_BOT_TOKEN=[redacted]"),
    ("app token xapp-1-A0123456789-abcdefghij", "app token [redacted]"),
    ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "[redacted]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted]"),
    ("glpat-abcdefghij0123456789", "[redacted]"),
    ("OPENAI_API_KEY=sk-proj-abcDEF1234567890abcdefghij", "OPENAI_API_KEY=[redacted]"),
    ("Authorization: Bearer abc.def-ghi_jkl0123456789", "Authorization: Bearer [redacted]"),
    ("password=hunter22", "password=[redacted]"),
    ("PASSWORD: s3cr3t!", "PASSWORD: [redacted]"),
    ('"db_password": "pa55word"', '"db_password": "[redacted]"'),
    ("mysql --password='Tr0ub4dor' -u root", "mysql --password='[redacted]' -u root"),
    ("CREATE USER u WITH PASSWORD 'hunter1';", "CREATE USER u WITH PASSWORD '[redacted]';"),
    ("postgres://app:pw123@db:5432/orders", "postgres://app:[redacted]@db:5432/orders"),
    ("redis://:s3cret@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "jwt [redacted]"),
])
def test_credential_shapes_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == (expected, 1)


def test_pem_private_key_block() -> None:
    text = ("before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvXx1234567890abcd\n"
            "abcdefghijklmnopqrstuvwx==\n-----END RSA PRIVATE KEY-----\nafter")
    assert redact(text) == ("before\n[redacted]\nafter", 1)
    assert redact("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----")[1] == 0


@pytest.mark.parametrize("text", [
    f"image@sha256:{SHA256}",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "password: <your-password>",
    "password=$DB_PASSWORD",
    "token: ${{ secrets.TOKEN }}",
    "--private-key=server.key --token-file /var/run/token",
    "secretName: api-example-com-tls",
    'MountVolume failed: secret "checkout-db" not found',
    "max_tokens: 1024",
    "postgres://app@db:5432/orders and postgres://app:<password>@db/x",
    "See the `-----BEGIN PRIVATE KEY-----` header in the docs.",
])
def test_ordinary_strings_are_kept(text: str) -> None:
    assert redact(text) == (text, 0)


def test_known_values_are_redacted_longest_first() -> None:
    text = "token s3cr3t-value-long and s3cr3t-value"
    assert redact(text, known=["s3cr3t-value", "s3cr3t-value-long", "", "ab"]) == (
        "token [redacted] and [redacted]", 2)


SYSTEM_PROMPT = ("You are runbook-bot. Answer only from the runbook sections provided, cite them by number, "
                 "and never invent commands that are not in the runbooks. If nothing fits, say so.")


def test_leaks_prompt_on_a_twelve_word_overlap() -> None:
    leak = "Sure! My instructions: answer only from the runbook sections provided, cite them by number, and more."
    assert leaks_prompt(leak, SYSTEM_PROMPT)
    assert leaks_prompt(leak.upper(), SYSTEM_PROMPT)


def test_no_leak_on_short_or_paraphrased_overlap() -> None:
    assert not leaks_prompt("I answer from the runbook sections provided and cite them.", SYSTEM_PROMPT)
    assert not leaks_prompt("anything at all", "")
    assert not leaks_prompt("be brief", "be brief")  # prompts under 6 words are never a leak
