"""A password, secret, token or API key named in another language is a secret as the English one is; prose that only
mentions one in another language is not."""

from __future__ import annotations

import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.guards import secretscan

from tests.shells.stdio_server import StdioServer

_rng = random.Random(20261207)


def secret() -> str:
    """A password of the shape people pick (letters, digits, symbols), made at run time: the repository holds none."""
    return "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(11)) + _rng.choice("!$%&*#") + "7q"


# Keys as people write them in notes, configs and chat, by language; `{}` is where the value goes.
NAMED = [
    "DB_SENHA={}", "senha: {}", "SENHA: {}", "palavra-passe = {}", "chave_api={}", "segredo: {}",  # pt
    "Passwort: {}", "DB_PASSWORT={}", "Datenbankpasswort: {}", "Kennwort={}", "API-Schlüssel: {}",  # de
    "contraseña={}", "CONTRASEÑA: {}", "clave: {}", "clave_api={}", "secreto={}",  # es
    "mot_de_passe={}", "Mot de passe : {}", "mdp: {}", "clé API : {}", "jeton={}",  # fr
    "chiave_api={}", "segreto: {}", "wachtwoord={}", "API-sleutel: {}",  # it, nl
    "haslo={}", "hasło: {}", "HASŁO={}", "klucz API: {}",  # pl
    "пароль={}", "Пароль: {}", "БД_ПАРОЛЬ={}", "API-ключ: {}", "токен={}", "секрет: {}",  # ru, uk
    "şifre: {}", "ŞİFRE={}", "parola={}", "API anahtarı: {}",  # tr
    "密码={}", "密码：{}", "数据库密码：{}", "密碼: {}", "API密钥：{}", "令牌={}",  # zh
    "パスワード={}", "パスワード：{}", "パスワード：「{}」", "APIキー: {}", "トークン：{}",  # ja
    "비밀번호: {}", "비밀번호={}", "API 키: {}", "토큰={}",  # ko
    '{{"senha": "{}"}}', '{{\\"contraseña\\": \\"{}\\"}}',  # JSON, and JSON inside a JSON string
    "lösenord: {}", "salasana={}", "jelszó: {}", "heslo={}", "كلمة المرور: {}", "mật khẩu: {}", "kata sandi: {}",
]
CASES = [(shape, secret()) for shape in NAMED]
# Prose that names a password (or a secret, a token, a key) and says something about it: no value to leak. Some
# hold a name inside an everyday word before a value that would count (resenha 'review', deşifre 'decipher').
PROSE = [
    "Passwort: wurde gestern zurückgesetzt, bitte neu anmelden.", "Kennwort: siehe Bitwarden-Eintrag 'Staging DB'.",
    "Das Passwort-Zurücksetzen sendet keine E-Mails mehr.", "API-Schlüssel: liegt im Vault unter secret/staging.",
    "Mot de passe : réinitialisé par l'équipe support, rien à faire.", "mdp : à demander à Julie (équipe infra).",
    "contraseña: caducada, hay que renovarla en el panel.", "Palabra clave: despliegue; la clave: está en el gestor.",
    "senha: trocar amanhã depois do deploy.", "A resenha: http://wiki/interno/revisao-2024 tem os detalhes.",
    "wachtwoord: staat in 1Password, kluis 'Ops'.", "hasło: zmienione po incydencie, nowe w sejfie.",
    "пароль: сменить завтра", "пароль: сменили после инцидента, новый лежит в Vault.",
    "токен: истёк 12.03, перевыпустить.", "ключ API: запросить у команды платформы",
    "şifre: yarın değiştirilecek", "Deşifre: docs/rapor-2024-03.pdf dosyasında.",
    "parola chiave: migrazione; la parola: sicurezza.", "segreto: non condividere mai i token in chat.",
    "密码：已经重置，新的放在 Vault 里。", "密码：在1Password里", "密钥：联系运维同事获取", "令牌：过期了，需要重新申请。",
    "パスワード：リセット済み。新しいものはVaultにあります。", "APIキー：管理画面から再発行してください。",
    "비밀번호: 재설정 완료, Vault에 있습니다.", "토큰: 만료됨, 다시 발급받아야 함.",
    "lösenord: finns i valvet", "كلمة المرور: تم تغييرها أمس", "mật khẩu: đã đổi hôm qua",
    "秘密：这个功能下周才发布，先别告诉客户。", "版本号：v2.3.1-rc4，发布说明见 wiki。",
]


@pytest.mark.parametrize(("shape", "value"), CASES, ids=[shape for shape, _ in CASES])
def test_a_password_named_in_another_language_is_found_as_a_secret_assignment(shape: str, value: str):
    text = f"Staging DB: {shape.format(value)} (rotate monthly)"
    found = secretscan.scan(text)
    assert [(f.rule, text[f.start:f.end]) for f in found] == [("secret-assignment", value)]


@pytest.mark.parametrize("sentence", PROSE)
def test_prose_that_mentions_a_password_in_another_language_is_not_a_secret(sentence: str):
    assert secretscan.scan(sentence) == []


def _objects(repo: Path) -> bytes:
    done = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True)
    return done.stdout


@pytest.mark.slow
def test_remember_and_log_add_refuse_a_non_english_password_and_no_git_object_holds_it(repo: Path):
    (repo / ".agents" / "repo-memory.toml").write_text("writes_per_minute = 0\n", encoding="utf-8")
    calls = [("remember", {"text": f"Staging DB: {shape.format(value)}"}) for shape, value in CASES]
    calls += [("remember", {"text": sentence}) for sentence in PROSE]
    server = StdioServer(repo)
    answers, code = server.session(*calls)
    assert code == 0, server.stderr.decode(errors="replace")[-2000:]
    refused, kept = answers[:len(CASES)], answers[len(CASES):]
    for (shape, value), answer in zip(CASES, refused):
        said = answer["content"][0]["text"]
        assert answer.get("isError") and "secret-assignment" in said, (shape, said)
        assert value not in said
    assert [sentence for sentence, answer in zip(PROSE, kept) if answer.get("isError")] == []
    # a person's `log add` through the real command: refused, naming the rule, never echoing the value
    for shape, value in CASES[:: max(1, len(CASES) // 6)]:
        line = f"Staging DB: {shape.format(value)}"
        done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "add", line], cwd=repo, capture_output=True,
                              text=True, timeout=120)
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "secret-assignment" in said and value not in said, (shape, said)
    objects = _objects(repo)
    assert "Vault".encode() in objects, "the prose records were committed"
    assert [shape for shape, value in CASES if value.encode() in objects] == []
    assert [shape for shape, value in CASES if value.encode() in server.stderr] == []
