"""Worked examples for the text and crypto servers, through the MCP adapter. Crypto answers are published
test vectors (RFC 4648, RFC 4122 / Python docs, the jwt.io sample token, Wikipedia's HMAC example)."""

from __future__ import annotations

import time

import pytest
from stateless_calls import fails, ok
from stateless_calls import stateless_server as _server


@pytest.fixture(scope="module")
def text():
    return _server("text")


@pytest.fixture(scope="module")
def crypto():
    return _server("crypto")


# --- text ----------------------------------------------------------------------------------------------
def test_counts_and_sentences(text):
    stats = ok(text, "text_statistics", text="Hello world. This is Dr. Smith speaking!\n\nNew para here.")
    assert (stats["words"], stats["sentences"], stats["paragraphs"], stats["lines"]) == (10, 3, 2, 3)
    parts = ok(text, "split_sentences", text='He said "hi." Then he left. E.g. this. J. Smith came.')
    assert parts["sentences"] == ['He said "hi."', "Then he left.", "E.g. this.", "J. Smith came."]
    assert ok(text, "summarize_first_sentences", text="One. Two!  Three?", sentences=2)["text"] == "One. Two!"
    assert "no sentences" in fails(text, "summarize_first_sentences", text="   ")


def test_slugs_and_cases(text):
    assert ok(text, "slugify", text="Crème Brûlée: A Recipe!")["text"] == "creme-brulee-a-recipe"
    assert ok(text, "slugify", text="one two three", max_length=7, separator="_")["text"] == "one_two"
    assert "no letters" in fails(text, "slugify", text="!!!")
    cases = {
        "snake": "http_server_error_code",
        "camel": "httpServerErrorCode",
        "pascal": "HttpServerErrorCode",
        "kebab": "http-server-error-code",
        "constant": "HTTP_SERVER_ERROR_CODE",
    }
    for style, expected in cases.items():
        assert ok(text, "change_case", text="HTTPServer error-code", style=style)["text"] == expected
    assert ok(text, "change_case", text="they're HERE", style="title")["text"] == "They're Here"
    assert ok(text, "change_case", text="  HELLO World", style="sentence")["text"] == "  Hello world"


def test_edit_distance(text):
    assert ok(text, "edit_distance", a="kitten", b="sitting") == {"distance": 3, "similarity": 0.571429}
    assert ok(text, "edit_distance", a="ABC", b="abc", ignore_case=True)["distance"] == 0
    assert ok(text, "edit_distance", a="", b="")["similarity"] == 1.0


def test_regex(text):
    found = ok(text, "regex_find_all", pattern=r"(\d+)-(\d+)", text="a 1-2 b 33-44")
    assert [(m["match"], m["start"], m["groups"]) for m in found["matches"]] == [
        ("1-2", 2, ["1", "2"]),
        ("33-44", 8, ["33", "44"]),
    ]
    assert ok(text, "regex_find_all", pattern="a", text="aaa", max_matches=2)["truncated"] is True
    swapped = ok(
        text, "regex_replace", pattern=r"(\w+)@(\w+)", replacement=r"\2 at \1", text="ann@home, bo@work"
    )
    assert swapped == {"text": "home at ann, work at bo", "replacements": 2}
    assert "not a valid regular expression" in fails(text, "regex_find_all", pattern="(", text="x")
    assert "group" in fails(text, "regex_replace", pattern="a", replacement=r"\3", text="a")
    start = time.perf_counter()
    assert "backtracking" in fails(text, "regex_find_all", pattern=r"(x+x+)+y", text="x" * 5000)
    assert time.perf_counter() - start < 2.0


def test_extraction(text):
    emails = ok(text, "extract_emails", text="mail ann@example.com, bob.smith+x@mail.co.uk; ann@example.com")
    assert emails == {"items": ["ann@example.com", "bob.smith+x@mail.co.uk"], "count": 2}
    urls = ok(text, "extract_urls", text="see https://a.com/x?y=1. and www.b.org, ok")
    assert urls["items"] == ["https://a.com/x?y=1", "www.b.org"]
    numbers = ok(text, "extract_numbers", text="costs 1,250.50 or -3 or 3e8 in A4 and 2.5")
    assert numbers["numbers"] == [1250.5, -3.0, 3e8, 2.5]


def test_documents(text):
    diff = ok(text, "diff_lines", old="a\nb\nc", new="a\nB\nc\nd")
    assert (diff["added"], diff["removed"], diff["identical"]) == (2, 1, False)
    assert "-b" in diff["diff"].splitlines() and "+B" in diff["diff"].splitlines()
    assert ok(text, "diff_lines", old="same", new="same")["identical"] is True
    filled = ok(text, "fill_template", template="Hi {name}, {{literal}}", values={"name": "Ada", "x": "1"})
    assert filled == {"text": "Hi Ada, {literal}", "unused": ["x"]}
    assert "['city']" in fails(text, "fill_template", template="{city}", values={})
    assert "not a placeholder" in fails(text, "fill_template", template="{a.b}", values={"a": "1"})
    html = ok(text, "strip_html", html="<p>Tom &amp; <b>Jerry</b></p><script>evil()</script><div>Two</div>")
    assert html["text"] == "Tom & Jerry\nTwo"
    assert ok(text, "truncate_text", text="The quick brown fox jumps", max_chars=15)["text"] == "The quick…"
    assert ok(text, "truncate_text", text="short", max_chars=15)["text"] == "short"
    wrapped = ok(text, "wrap_text", text="aaa bbb ccc ddd", width=10)["text"]
    assert wrapped == "aaa bbb\nccc ddd"


def test_json_and_csv(text):
    assert (
        ok(text, "json_format", text='{"b":1,"a":[1,2]}', indent=0, sort_keys=True)["text"]
        == '{"a":[1,2],"b":1}'
    )
    assert ok(text, "json_format", text='{"a":1}')["text"] == '{\n  "a": 1\n}'
    assert "line 2 column 6" in fails(text, "json_format", text='{\n "a":}')
    assert ok(text, "json_validate", text='{"a":}') == {
        "valid": False,
        "error": "Expecting value",
        "line": 1,
        "column": 6,
        "type": None,
    }
    assert ok(text, "json_validate", text="NaN")["valid"] is False  # not JSON, even if Python accepts it
    assert ok(text, "json_validate", text="[1]")["type"] == "array"
    got = ok(text, "json_get_path", text='{"a":{"b":[1,{"c":5}]}}', path="a.b[-1].c")
    assert got == {"found": True, "value_json": "5", "type": "number"}
    assert ok(text, "json_get_path", text='{"a":1}', path="a.x")["found"] is False
    table = ok(text, "csv_to_json", csv_text='name,age\nAda,36\n"Lovelace, A",\n')
    assert table["rows"] == [{"name": "Ada", "age": "36"}, {"name": "Lovelace, A", "age": ""}]
    assert "row 2" in fails(text, "csv_to_json", csv_text="a\n1,2")
    csv_text = ok(text, "json_to_csv", text='[{"a":1,"b":"x"},{"a":2,"c":[1]}]')["text"]
    assert csv_text == "a,b,c\n1,x,\n2,,[1]\n"
    assert "array of objects" in fails(text, "json_to_csv", text='{"a":1}')


def test_words_lines_occurrences(text):
    freq = ok(text, "word_frequencies", text="the cat and the hat and the bat", top=3)
    assert [(w["word"], w["count"]) for w in freq["words"]] == [("the", 3), ("and", 2), ("bat", 1)]
    no_stop = ok(text, "word_frequencies", text="the cat and the hat", top=5, exclude_stopwords=True)
    assert [w["word"] for w in no_stop["words"]] == ["cat", "hat"]
    assert ok(text, "sort_lines", text="10 x\nb\n2 y\nA", numeric=True)["text"] == "2 y\n10 x\nA\nb"
    assert ok(text, "sort_lines", text="b\nB\na\nb", unique=True, ignore_case=True)["text"] == "a\nb"
    assert ok(text, "count_occurrences", text="Abab ab", substring="AB", ignore_case=True) == {
        "count": 3,
        "positions": [0, 2, 5],
    }


# --- crypto --------------------------------------------------------------------------------------------
def test_hashes_and_checksums(crypto):
    assert ok(crypto, "hash_text", text="abc")["hex"] == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert ok(crypto, "hash_text", text="abc", algorithm="md5")["hex"] == "900150983cd24fb0d6963f7d28e17f72"
    assert (
        ok(crypto, "hash_text", text="", algorithm="sha1")["hex"]
        == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    )
    fox = "The quick brown fox jumps over the lazy dog"
    assert ok(crypto, "checksum", text=fox) == {"value": 0x414FA339, "hex": "414fa339"}
    mac = ok(crypto, "hmac_sign", message=fox, key="key")["hex"]
    assert mac == "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    assert ok(crypto, "hmac_verify", message=fox, key="key", signature=mac)["valid"] is True
    assert ok(crypto, "hmac_verify", message=fox, key="other", signature=mac)["valid"] is False


def test_uuids(crypto):
    assert ok(crypto, "uuid_from_name", name="python.org")["uuid"] == "886313e1-3b8a-5372-9b90-0c9aee199e5d"
    assert ok(crypto, "uuid_from_name", name="python.org", version=3)["uuid"] == (
        "6fa459ea-ee8a-3ca4-894e-db77e160355e"
    )
    assert "namespace" in fails(crypto, "uuid_from_name", name="x", namespace="nope")


JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def test_jwt(crypto):
    claims = {"sub": "1234567890", "name": "John Doe", "iat": 1516239022}
    assert ok(crypto, "jwt_sign_hs256", payload=claims, secret="your-256-bit-secret")["text"] == JWT_IO
    decoded = ok(crypto, "jwt_decode", token=JWT_IO)
    assert decoded["payload"] == claims and decoded["algorithm"] == "HS256"
    assert decoded["issued_at"] == "2018-01-18T01:30:22+00:00" and decoded["expires_at"] is None
    assert ok(crypto, "jwt_verify_hs256", token=JWT_IO, secret="your-256-bit-secret")["valid"] is True
    assert ok(crypto, "jwt_verify_hs256", token=JWT_IO, secret="wrong")["valid"] is False
    assert "3 dot-separated parts" in fails(crypto, "jwt_decode", token="abc.def")
    assert "JSON" in fails(crypto, "jwt_decode", token="bm90anNvbg.e30.x")


def test_passwords_are_seeded(crypto):
    first = ok(crypto, "generate_password", seed=42, length=24)
    assert first == ok(crypto, "generate_password", seed=42, length=24)
    assert first["password"] != ok(crypto, "generate_password", seed=43, length=24)["password"]
    pw = first["password"]
    assert len(pw) == 24 and any(c.isupper() for c in pw) and any(c.isdigit() for c in pw)
    assert any(not c.isalnum() for c in pw)
    plain = ok(crypto, "generate_password", seed=1, length=30, symbols=False, avoid_ambiguous=True)[
        "password"
    ]
    assert plain.isalnum() and not set(plain) & set("Il1O0o")
    assert ok(crypto, "password_strength", password="password")["score"] == 0
    assert ok(crypto, "password_strength", password="v9#Lq2!xT7@wZ4$k")["score"] >= 3


def test_encodings_round_trip_with_vectors(crypto):
    assert ok(crypto, "base64_encode", text="hello world")["text"] == "aGVsbG8gd29ybGQ="
    assert ok(crypto, "base64_decode", data="aGVsbG8gd29ybGQ")["text"] == "hello world"  # padding optional
    assert ok(crypto, "base64_decode", data="/w==") == {"text": None, "hex": "ff", "byte_length": 1}
    assert "base64" in fails(crypto, "base64_decode", data="@@@@")
    assert ok(crypto, "base32_encode", text="foobar")["text"] == "MZXW6YTBOI======"
    assert ok(crypto, "base32_decode", data="mzxw6ytboi")["text"] == "foobar"
    assert ok(crypto, "hex_decode", data="0x48:65:6c:6c:6f")["text"] == "Hello"
    assert "even number" in fails(crypto, "hex_decode", data="abc")
    assert ok(crypto, "url_encode", text="café au lait")["text"] == "caf%C3%A9%20au%20lait"
    assert ok(crypto, "url_encode", text="a b/c", plus_for_space=True, safe="/")["text"] == "a+b/c"
    assert ok(crypto, "url_decode", text="caf%C3%A9+au")["text"] == "café au"
    assert ok(crypto, "html_escape", text='<a href="x">')["text"] == "&lt;a href=&quot;x&quot;&gt;"
    assert ok(crypto, "html_unescape", text="&lt;&eacute;&#233;")["text"] == "<éé"


def test_classical_ciphers_and_check_digits(crypto):
    assert ok(crypto, "rot13", text="Hello, World")["text"] == "Uryyb, Jbeyq"
    assert ok(crypto, "caesar_cipher", text="abc xyz", shift=3)["text"] == "def abc"
    assert ok(crypto, "caesar_cipher", text="def abc", shift=3, decode=True)["text"] == "abc xyz"
    assert ok(crypto, "vigenere_cipher", text="ATTACKATDAWN", key="LEMON")["text"] == "LXFOPVEFRNHR"
    assert (
        ok(crypto, "vigenere_cipher", text="LXFOPVEFRNHR", key="lemon", decode=True)["text"] == "ATTACKATDAWN"
    )
    assert ok(crypto, "morse_code", text="SOS help")["text"] == "... --- ... / .... . .-.. .--."
    assert ok(crypto, "morse_code", text="... --- ... / .... .", decode=True)["text"] == "SOS HE"
    assert "Morse" in fails(crypto, "morse_code", text="#")
    assert ok(crypto, "luhn_check", number="7992 7398 713")["valid"] is True
    assert ok(crypto, "luhn_check", number="7992739871") == {"valid": False, "check_digit": 3}
