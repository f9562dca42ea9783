"""The redaction helper used by reports, judge prompts and SFT export."""

from __future__ import annotations

from cworld.redact import MASK, Redactor, redact, secret_env_values

ENV = {"OPENAI_API_KEY": "sk-proj-abcdefghijklmnop", "GITHUB_TOKEN": "ghp_0123456789abcdef",
       "DB_PASSWORD": "correct-horse-battery", "MY_SECRET": "s3cr3t-v4lue", "DEBUG_KEY": "1",
       "PATH": "/usr/bin:/bin", "KEYBOARD": "us-international"}


def test_only_credential_named_variables_long_enough_are_secrets():
    assert set(secret_env_values(ENV)) == {"sk-proj-abcdefghijklmnop", "ghp_0123456789abcdef",
                                           "correct-horse-battery", "s3cr3t-v4lue"}


def test_env_values_bearer_tokens_and_sk_keys_are_masked():
    text = ("token ghp_0123456789abcdef; pw=correct-horse-battery; Authorization: Bearer abc.DEF-123_x==; "
            "key sk-live-ZZZZZZZZZZZZ and s3cr3t-v4lue; debug 1 stays; /usr/bin stays")
    out = Redactor.from_env(ENV).text(text)
    for secret in ("ghp_0123456789abcdef", "correct-horse-battery", "abc.DEF-123_x", "sk-live-ZZZZZZZZZZZZ",
                   "s3cr3t-v4lue"):
        assert secret not in out
    assert out.count(MASK) == 5 and "debug 1 stays" in out and "/usr/bin stays" in out
    assert redact("Bearer xyz123456", env={}) == MASK


def test_nested_values_keys_included_and_leak_check():
    r = Redactor.from_env(ENV, extra=["per-run-secret-99"])
    value = {"args": {"token": "ghp_0123456789abcdef", "items": ["ok", "per-run-secret-99"]},
             "sk-abcdefghijkl": 3, "n": 4}
    assert r.value(value) == {"args": {"token": MASK, "items": ["ok", MASK]}, MASK: 3, "n": 4}
    assert r.leaks("x correct-horse-battery y") == ["correct-horse-battery"]
    assert r.leaks(r.text("x correct-horse-battery Bearer abcdefgh y")) == []
