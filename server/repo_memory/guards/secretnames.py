"""The words for a password, a secret, a token or an API key in other languages, found where a value follows them.

The secret scan's generic rule (`secret-assignment`) looks for a secret-sounding name assigned a literal value. Its
English names are found by substring search; the names here (some 25 languages, 700 spellings) are found by looking
back from each separator (`=`, `:`, and the full-width `＝` `：` of CJK text) at the two letters before it, which rule
out nearly every name at once: searching the whole text for each name cost more than the rest of the scan. The
value that follows is then checked as an English name's is (secretscan.py): prose such as `Passwort: wurde
zurückgesetzt` or `密码：已经重置` assigns nothing secret-shaped.

A name here is written with a space standing for `_`, `-`, a space or nothing, and `a/b` for either word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

SEPARATORS = ":=：＝"  # CJK text writes its colon and equals sign full width
# These may end a longer word: German, Dutch, Swedish, Finnish and Hungarian glue a name to what it qualifies
# (Datenbankpasswort), Hebrew its article (הסיסמה), and Chinese, Japanese and Korean put no space between words.
GLUED = (
    "passwort", "kennwort", "api/geheim/geheimer/privat/privater/zugangs schlüssel/schluessel",  # de
    "wachtwoord", "api/geheime/private/toegangs sleutel",  # nl
    "lösenord/losenord", "passord", "adgangskode", "salasana", "jelszó/jelszo", "סיסמה/סיסמא",  # sv no da fi hu he
    "密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "私钥", "私鑰", "令牌",  # zh
    "パスワード", "暗証番号", "秘密鍵", "シークレット", "トークン", "api/アクセス キー",  # ja
    "비밀번호", "패스워드", "시크릿", "토큰", "api/액세스/비밀 키", "पासवर्ड",  # ko, hi
)
# These must start a word (after a space, `_`, `-`, a digit or nothing, never a letter): each also ends everyday words
# (pt resenha 'review', es autoclave, tr deşifre 'decipher').
WORDS = (
    "senha", "palavra passe", "segredo", "chave api/secreta/privada", "chave de/da/do api/acesso",  # pt
    "contraseña/contrasena", "clave", "secreto", "clave api/secreta/privada", "clave de api/acceso",  # es
    "clave de la api",
    "mot de passe", "mdp", "jeton", "clé/cle api/secrète/secrete/privée/privee",  # fr
    "clé/cle d'api/d'accès/d'acces", "clé/cle de l'api",
    "segreto", "parola d'ordine", "chiave api/segreta/privata/d'accesso", "chiave di/della accesso/api",  # it
    "chiave dell'api",
    "hasło/haslo", "heslo", "sekret", "klucz api/tajny/prywatny/dostępu/dostepu", "tajny/prywatny klucz",  # pl, cs
    "пароль", "токен", "секрет", "api/апи/секретный/секретний/закрытый/приватный/приватний ключ",  # ru, uk
    "ключ api/апи/доступа/доступу",
    "şifre/sifre", "parola", "api/gizli/özel/ozel/erişim/erisim anahtar/anahtarı/anahtari",  # tr
    "συνθηματικό", "κωδικός πρόσβασης",  # el
    "كلمة المرور/السر", "mật/mat khẩu/khau", "kata sandi/laluan",  # ar, vi, id/ms
)


def spelled(name: str) -> set[str]:
    """Every lower-case spelling of a name written in the notation above."""
    out = {""}
    for n, word in enumerate(name.split(" ")):
        joins = ("",) if n == 0 else ("", " ", "_", "-")
        out = {done + join + alternative for done in out for join in joins for alternative in word.split("/")}
    return out


_GLUED = frozenset(spelling for name in GLUED for spelling in spelled(name))
_ALL = _GLUED | {spelling for name in WORDS for spelling in spelled(name)}
_BY_ENDING: dict[str, tuple[str, ...]] = {}  # by their last two letters, longest first
for _name in sorted(_ALL, key=len, reverse=True):
    _BY_ENDING[_name[-2:]] = (*_BY_ENDING.get(_name[-2:], ()), _name)
_LONGEST = max(map(len, _ALL))
_SEPARATOR = re.compile(f"[{SEPARATORS}]")


def named(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each name that stands before a separator, as secretscan's value pattern allows (spaces, a
    quote, a JSON-escaped quote between)."""
    for m in _SEPARATOR.finditer(text):
        end = m.start()
        while end and text[end - 1] in " \t":
            end -= 1
        if end and text[end - 1] in "\"'":
            end -= 2 if end > 1 and text[end - 2] == "\\" else 1
        # İ is the one letter whose lower case is longer (i and a combining dot): ŞİFRE must stay five letters.
        names = _BY_ENDING.get(text[max(0, end - 2):end].replace("\u0130", "i").lower())
        if not names:
            continue
        before = text[max(0, end - _LONGEST):end].replace("\u0130", "i").lower()
        for name in names:
            start = end - len(name)
            if before.endswith(name) and (name in _GLUED or not start or not text[start - 1].isalpha()):
                yield start, end
                break
