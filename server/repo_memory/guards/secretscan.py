"""Secrets in memory content, found before any byte reaches a file, a blob, the index or a git object.

Two kinds of rule:

- Provider formats: credentials whose shape is published by the issuer (an AWS access key id starts with `AKIA`,
  a GitHub token with `ghp_`, a private key with a PEM header, …). These have almost no false positives.
- Generic: a secret-sounding key assigned a literal value (`password = "…"`, `api_key: …`, and the same names in
  some 25 other languages: `senha=…`, `Passwort: …`, `密码：…`, see secretnames.py), credentials inside a
  URL (`https://user:pass@host`), a password given on a command line (`commandline.py`: `mysql -p…`, `curl -u
  user:…`, `PGPASSWORD=… psql`), and a high-entropy check for key-like tokens (mixed case and digits, 32+ chars).

Digests are not secrets: hex strings of any length (git SHAs, sha256, md5, Cargo and poetry checksums), UUIDs,
and base64 digests introduced as such (`sha512-…` in package-lock/yarn/pnpm, `sha256=…` in wheel RECORD files,
`h1:…` in go.sum, `base64,` data URIs) are never flagged by the entropy check.

A finding names its rule and where it starts (line, column); the matched text is never kept, logged or echoed.
What this does not catch: a secret with no known shape and low entropy (a short or dictionary password written in
prose), secrets split across lines or encoded, and formats newer than these rules.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from repo_memory.errors import SecretError
from repo_memory.guards import cjk, commandline, secretnames

# Provider formats: rule -> (literals one of which a match contains, pattern). A rule's pattern runs only when one
# of its literals occurs in the text (a substring search, like gitleaks' keywords), so a clean text costs little.
# Patterns match the secret itself (group 1 when it is a part); a match must start at a token boundary.
PROVIDERS: dict[str, tuple[tuple[str, ...], str]] = {
    "aws-access-key-id": (("AKIA", "ASIA", "ABIA", "ACCA"), r"((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])"),
    "aws-secret-access-key": (("aws", "AWS", "Aws"), r"(?i)aws.{0,20}?(?:secret|private).{0,20}?[\"'\s:=]+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
    "github-token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
                     r"((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})(?![A-Za-z0-9_])"),
    "gitlab-token": (("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"), r"(gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,})"),
    "slack-token": (("xox",), r"(xox[abposr]-[A-Za-z0-9-]{10,})"),
    "slack-webhook": (("hooks.slack.com",), r"(https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/_-]{20,})"),
    "stripe-key": (("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})"),
    "openai-key": (("T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-"),
                   r"(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,})"),
    "anthropic-key": (("sk-ant-",), r"(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,})"),
    "google-api-key": (("AIza",), r"(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])"),
    "huggingface-token": (("hf_",), r"(hf_[A-Za-z0-9]{34,})(?![A-Za-z0-9_])"),
    "npm-token": (("npm_", "_authToken"), r"(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9_])|_authToken\s*=\s*([^\s$'\"{]{16,})"),
    "pypi-token": (("pypi-AgEIcHlwaS5vcmc",), r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})"),
    "sendgrid-key": (("SG.",), r"(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
    "twilio-api-key": (("SK",), r"(SK[0-9a-f]{32})(?![A-Za-z0-9_])"),
    "telegram-bot-token": ((":AA",), r"(\d{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])"),
    "discord-bot-token": (("M", "N", "O"), r"([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_-])"),
    "mailchimp-key": (("-us",), r"([0-9a-f]{32}-us[0-9]{1,2})(?![A-Za-z0-9_])"),
    "square-token": (("sq0csp-", "sq0atp-", "EAAA"), r"(sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60})(?![A-Za-z0-9_-])"),
    "azure-storage-key": (("ccountKey", "CCOUNTKEY", "ccountkey"), r"(?i)AccountKey\s*=\s*([A-Za-z0-9+/]{86}==)"),
    # A JWT's header and payload are base64url JSON objects: "{" encodes to "e" then "y" or "w" whatever follows it
    # (`{"` is the familiar eyJ, `{ "` eyA, `{\n` ew); each match is decoded and kept only when both parts are objects.
    "jwt": (("ey", "ew"), r"(e[wy][A-Za-z0-9_-]{10,}\.e[wy][A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"),
    "private-key": (("PRIVATE KEY", "PuTTY-User-Key-File"), r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d)"),
    # Key material without its armour: the base64 of a private key's DER (or OpenSSH) structure starts the same way for
    # every key of a kind — PKCS#1 RSA/DSA, PKCS#8 (RSA, EC, Ed25519, encrypted), SEC1 EC, openssh-key-v1 — and a real
    # body runs on for dozens of characters.
    "private-key-body": (("IBAAK", "IBADAN", "AgEAMBMGByqGSM49", "MC4CAQAwBQYDK2Vw", "MHcCAQEE", "MIGkAgEBBD", "MIHcAgEBBE",
                          "BgkqhkiG9w0BBQ0w", "b3BlbnNzaC1rZXktdjE"),
                         r"((?:MII[A-Za-z0-9+/]{3}(?:IBAAK|IBADAN|B[A-Za-z0-9+/]BgkqhkiG9w0BBQ0w)|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49"
                         r"|MC4CAQAwBQYDK2Vw|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{40,}={0,2})"),
}
# Shapes no word or identifier has: found wherever they start, glued to a letter, a digit, `_`, `-` or `%3D` (a key id
# in a session id or a URL-encoded value); the other rules must start at a token boundary.
GLUED = frozenset({"aws-access-key-id", "github-token", "gitlab-token", "slack-token", "slack-webhook", "stripe-key", "openai-key",
                   "anthropic-key", "google-api-key", "huggingface-token", "npm-token", "pypi-token", "jwt", "private-key"})
GENERIC = ("authorization-header", "url-credentials", "password-option", "user-password-option", "password-env", "secret-assignment",
           "high-entropy-token")  # a command-line rule names a password given to a program better than secret-assignment
_PROVIDERS = [(rule, literals, re.compile(pattern)) for rule, (literals, pattern) in PROVIDERS.items()]
# Every literal with the rule it stands for, looked for in one flat pass (a generator per rule cost twice as much).
_LITERALS = [(literal, n) for n, (_, literals, _) in enumerate(_PROVIDERS) for literal in literals]
SHORTEST = 10  # characters of the shortest text any rule can find something in (url-credentials: "://a:bcd@e")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-:/")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# Generic: a secret-sounding name (lower-cased, found by substring search) assigned a literal value.
ASSIGNED = ("password", "passwd", "passphrase", "secret", "secret_key", "secretkey", "apikey", "api_key", "api-key", "accesskey",
            "access_key", "access-key", "authtoken", "auth_token", "access_token", "accesstoken", "refresh_token", "bearer",
            "private_key", "privatekey", "private-key", "token")
_ASSIGNED_PARTS = ("pass", "secret", "key", "token", "bearer")  # every name above holds one: most texts need no search for each
_SEPARATOR = f"(?::=|=>|[{secretnames.SEPARATORS}])"
# A value stops where CJK text (which has no spaces) or its punctuation and full-width forms go on: a password is
# written in ASCII, and 密码：在1Password里 names where it is kept.
_VALUE = re.compile(rf"(?:\\?[\"'])?\s*{_SEPARATOR}\s*(?:\\?[\"'“‘「『])?"  # quotes may be JSON-escaped
                    rf"([^\s\"'`,;()\[\]{{}}<>\\“”‘’{cjk.CHARS}\u3000-\u303f\uff00-\uffef]{{8,200}})")
_AUTH_HEADER = re.compile(r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{16,})")
_URL_CREDENTIALS = re.compile(r"[^\s:/@\"']{1,64}:([^\s:/@\"']{3,128})@[A-Za-z0-9.-]+")
_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}")
_TOKEN_NEIGHBOURS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.-")
_DIGEST_BEFORE = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)[-=:]|h1:|md5[-=:]|integrity[\"']?\s*[:=]?\s*[\"']?|base64,|checksum[\"']?\s*[:=]\s*[\"']?)$")
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5)[-=:_]")
_PLACEHOLDER = re.compile(
    r"(?i)example|sample|dummy|placeholder|changeme|change_me|your[_-]|xxxx|\*\*\*|\.\.\.|redacted|secret_here|token_here|"
    r"^<|^\$|^%|^\{|\{\{|\$\{|^env[.:(]|^os\.|^process\.env|^settings\.|^config\.|^none$|^null$|^true$|^false$|^undefined$"
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z_][A-Za-z0-9_]*)*$")
ENTROPY_MIN = 4.3


@dataclass(frozen=True)
class Finding:
    """One secret: its rule and where it starts. The secret itself is deliberately not kept."""

    rule: str
    start: int
    end: int
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.rule} at line {self.line}, column {self.column}"


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def _random_looking(token: str) -> bool:
    core = token.rstrip("=")
    if _DIGEST_PREFIX.match(core) or re.fullmatch(r"[0-9a-fA-F-]+", core):
        return False  # hex digests, git SHAs, UUIDs
    if not (re.search(r"[a-z]", core) and re.search(r"[A-Z]", core) and re.search(r"[0-9]", core)):
        return False
    if "/" in core and sum(len(part) >= 3 and part.isalpha() and part.islower() for part in core.split("/")) >= 2:
        return False  # a path with a few plain words in it
    if sum(ord(b) - ord(a) == 1 for a, b in zip(core, core[1:])) > len(core) / 2:
        return False  # an alphabet or a counting sequence
    words = re.findall(r"[A-Z]?[a-z]{3,}", core)
    if sum(map(len, words)) >= len(core) * 0.6:
        return False  # an identifier made of words (camelCase, snake_case) is not random
    return entropy(core) >= ENTROPY_MIN


def _literal(value: str) -> bool:
    """Whether an assigned value looks like a real secret literal rather than code, a reference or a placeholder."""
    value = value.rstrip(".")
    if len(value) < 8 or _PLACEHOLDER.search(value) or _IDENTIFIER.fullmatch(value) or value.isdigit():
        return False
    if len(set(value)) < 5:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(c in "!@#%^&*+/~=$?" for c in value)
    return (has_digit or has_symbol) and entropy(value) >= 2.8


def _assigned(text: str, lowered: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The literal value assigned to the secret-sounding name at text[start:end], as a span ([] when none is)."""
    value = _VALUE.match(text, end)
    key_start = start
    while key_start and lowered[key_start - 1] in _KEY_CHARS:
        key_start -= 1
    key = lowered[key_start:end]
    # A path or a code anchor (src/auth.py::revoke_token) names code, not a credential.
    if not value or "::" in key or "/" in key or not _literal(value.group(1)) or commandline.documented(value.group(1)):
        return []
    return [(value.start(1), value.end(1), "secret-assignment")]


def _json_parts(token: str) -> bool:
    """Whether a JWT-shaped token's header and payload decode to JSON objects (text that starts with `{`)."""
    for part in token.split(".")[:2]:
        try:
            decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except (ValueError, binascii.Error):
            return False
        if not decoded.lstrip().startswith(b"{") or b'"' not in decoded:
            return False
    return True


def scan(text: str) -> list[Finding]:
    """Every secret found in `text`, in order of position (overlaps resolved in favour of the first rule)."""
    if len(text) < SHORTEST:
        return []
    spans: list[tuple[int, int, str]] = []
    for rule, _, pattern in [_PROVIDERS[n] for n in sorted({n for literal, n in _LITERALS if literal in text})]:
        for m in pattern.finditer(text):
            group = next((g for g in range(1, pattern.groups + 1) if m.group(g)), 0)
            if rule == "jwt" and not _json_parts(m.group(group)):
                continue
            if rule in GLUED or m.start(group) == 0 or text[m.start(group) - 1] not in _TOKEN_CHARS:
                spans.append((m.start(group), m.end(group), rule))
    lowered = text.translate(_ASCII_LOWER)  # str.lower() can change the length (İ), and positions must line up
    for name in ASSIGNED if any(part in lowered for part in _ASSIGNED_PARTS) else ():
        at = lowered.find(name)
        while at >= 0:
            spans += _assigned(text, lowered, at, at + len(name))
            at = lowered.find(name, at + len(name))
    for start, end in secretnames.named(text):
        spans += _assigned(text, lowered, start, end)
    spans += commandline.find(text, lowered)
    if "authorization" in lowered:
        spans += [(m.start(1), m.end(1), "authorization-header") for m in _AUTH_HEADER.finditer(text)]
    at = text.find("://")
    while at >= 0:
        cred = _URL_CREDENTIALS.match(text, at + 3)
        user = text[at + 3:cred.start(1) - 1] if cred else ""  # `postgres:postgres@`: the user name again, a default
        if cred and not _PLACEHOLDER.search(cred.group(1)) and not commandline.documented(cred.group(1)) and cred.group(1) != user:
            spans.append((cred.start(1), cred.end(1), "url-credentials"))
        at = text.find("://", at + 3)
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        if start and text[start - 1] in _TOKEN_NEIGHBOURS:
            continue
        if end < len(text) and text[end] in _TOKEN_NEIGHBOURS and not (text[end] == "." and text[end + 1:end + 2] in ("", " ", "\n", "\t")):
            continue  # part of a longer dotted or encoded string (a sentence's full stop is fine)
        if _random_looking(m.group()) and not _DIGEST_BEFORE.search(text[max(0, start - 24):start]):
            spans.append((start, end, "high-entropy-token"))
    named = [(a, b) for a, b, rule in spans if rule in PROVIDERS]
    if named:  # a named format inside a longer random-looking run (a key glued to its neighbours) is reported as itself
        spans = [span for span in spans if span[2] != "high-entropy-token" or not any(a < span[1] and span[0] < b for a, b in named)]
    order = {rule: n for n, rule in enumerate([*PROVIDERS, *GENERIC])}  # at one position, a named format beats a generic rule
    spans.sort(key=lambda span: (span[0], order[span[2]]))
    kept: list[tuple[int, int, str]] = []
    for start, end, rule in spans:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, rule))
    return [_finding(text, start, end, rule) for start, end, rule in kept]


def _finding(text: str, start: int, end: int, rule: str) -> Finding:
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Finding(rule, start, end, line, column)


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with every secret replaced by `[REDACTED:<rule>]`, and what was replaced."""
    found = scan(text)
    if not found:
        return text, found
    out, last = [], 0
    for f in found:
        out += [text[last:f.start], f"[REDACTED:{f.rule}]"]
        last = f.end
    out.append(text[last:])
    return "".join(out), found


def redact_value(value: Any, scanned: str = "") -> tuple[Any, list[Finding]]:
    """Redact every string inside a JSON-like value (dict keys included); returns the new value and the findings.
    Strings that occur as they are in `scanned` (a text already scanned whole, where they were read in their context)
    are not scanned again."""
    found: list[Finding] = []

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            if scanned and v in scanned:
                return v
            clean, hits = redact(v)
            found.extend(hits)
            return clean
        if isinstance(v, dict):
            return {walk(k) if isinstance(k, str) else k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value), found


def summary(found: list[Finding], limit: int = 5) -> str:
    """`rule at line L, column C; …` for an error message (never the secret)."""
    shown = "; ".join(str(f) for f in found[:limit])
    return shown + (f"; and {len(found) - limit} more" if len(found) > limit else "")


def refuse(*fields: tuple[str, Any]) -> None:
    """Raise SecretError naming the field, rule and position of the first secrets found in any field (strings inside
    lists and mappings are scanned one by one, so the error can say `data.env` or `tags[2]`)."""
    for what, value in fields:
        for where, text in _strings(what, value):
            found = scan(text)
            if found:
                raise SecretError(where, summary(found))


def _strings(where: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(f"{where} key", str(key))
            yield from _strings(f"{where}.{key}", item)
    elif isinstance(value, (list, tuple)):
        for n, item in enumerate(value):
            yield from _strings(f"{where}[{n}]", item)
    elif value is not None and not isinstance(value, (int, float, bool)):
        yield where, str(value)
