"""Passwords given on a command line, found by family: what the shell passes is a literal unless it is a reference.

- `password-option`: an option named for a password with a value (`--password=…`, `--http-password …`), or a
  program's own password option (`mysql -p…`, `sshpass -p …`, `redis-cli -a …`, `docker login -p …`, `htpasswd -b`).
- `user-password-option`: `user:password` after curl's `-u`/`--user`/`--proxy-user` (smbclient's `user%password`).
- `password-env`: a password-named variable assigned before a command, exported, or passed with `-e`/`--env`.

Not a password: no value (`mysql -p` prompts, `curl -u root`), a reference (`$VAR`, `${VAR}`, `"$(cat …)"`), a file or
a stream (`--password-file`, `--password-stdin`, `sshpass -f`), a placeholder (`<password>`, `***`, `YOUR_PASSWORD`,
`PASSWORD`), a default everyone knows (`changeme`, `postgres`, `guest`, the user name again: `admin:admin`), a switch's
or a mode's value (`yes`, `off`, `all`, `basic`, a port mapping `27017:27017`), a switch's name (`--no-password`,
`MYSQL_ALLOW_EMPTY_PASSWORD`, `DISABLE_AUTH`), and an option of the same letter elsewhere (`docker run -p 8080:80`,
`ssh -p 22`). A value given after a space that is one lower-case word (`--password option`) reads as prose and is left.
A variable named `…AUTH`, `…_PASS` or `…_PWD` is as often a mode or a directory (`AUTH=basic`, `TEST_PASS=all`,
`CI_PWD=/builds/x`): it counts only with a value shaped like a secret (see `_secret_shaped`), unless a program reads
its password from it (`SSHPASS`, `MYSQL_PWD`, `REDISCLI_AUTH`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One shell word: unquoted characters or quoted strings, glued; a command ends at a separator or the line's end.
_WORD = re.compile(r"""[ \t]*(?:\\\n[ \t]*)*((?:[^\s'"`;|&()<>]|'[^'\n]*'|"[^"\n]*")+)""")
_MAX_WORDS = 64
_PROGRAM_END = re.compile(r"[\w.-]*")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# Found by the name's end (a literal the regex engine looks for quickly), then the option's `--` before it.
_LONG = re.compile(r"pass(?:word|wd|phrase)(=|[ \t]+)")
_LONG_START = re.compile(r"(?<![\w-])--((?:[a-z0-9]+[-_])*)\Z")
# A word in the name before the password's says the option or variable is a switch (`--no-password`,
# `MYSQL_ALLOW_EMPTY_PASSWORD=yes`, `DISABLE_AUTH=1`), not a password.
_SWITCHES = frozenset({"no", "ask", "prompt", "skip", "use", "with", "without", "require", "reset", "change", "random",
                       "generate", "show", "hide", "forgot", "empty", "force", "allow", "disable", "enable", "disabled",
                       "enabled", "required", "ignore"})
# Upper case, as environment variables are named: `password=…` at a line's start is more often a keyword argument.
_ENV_NAME = re.compile(r"(?:PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|AUTH)=")
_ENV_FULL_NAME = re.compile(r"(?:[A-Z0-9_]*_|PG|SSH)?(?:PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|AUTH)")
_ENV_AMBIGUOUS = re.compile(r".*(?:PASS|PWD|AUTH)")  # ends in a word that often names no password
_ENV_PROGRAMS = frozenset({"SSHPASS", "MYSQL_PWD", "REDISCLI_AUTH"})  # where a program reads its password from
# What may stand before an assignment that the shell reads as one: a command's start, `export`/`env`/`sudo`, other
# assignments; or docker's and kubectl's `-e`/`--env`.
_ENV_LEAD = re.compile(r"(?:.*(?:[;&|`(]|\$\())?[ \t]*(?:[-*>$][ \t]+)?(?:(?:export|env|sudo|sudo -E|declare -x)[ \t]+)?"
                       r"(?:[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|[^\s'\"])*[ \t]+)*|.*(?<![\w-])(?:-e|--env)[ \t=]+")
_REFERENCE = re.compile(r"\$[A-Za-z_{(]|`")
_PLACEHOLDER = re.compile(r"(?i)example|sample|dummy|placeholder|changeme|change_me|^your|your[_-]?pass|xxx|\*\*\*|\.\.\."
                          r"|redacted|^<|^%|^\{|\{\{")
_WORDS = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret", "passphrase", "mypassword", "yourpassword", "mypass",
                    # a switch's or a mode's value
                    "yes", "no", "true", "false", "on", "off", "all", "any", "none", "null", "nil", "empty", "random", "basic",
                    "bearer", "digest", "token", "trust", "required", "optional", "enabled", "disabled", "enable", "disable",
                    "skip", "ignore", "default", "auto", "unset", "prompt", "stdin",
                    # defaults everyone knows: an image's or a tool's documented password
                    "root", "admin", "postgres", "mysql", "guest", "test", "user", "demo", "changeit", "minioadmin",
                    "x-oauth-basic"})
_PORTS = re.compile(r"[\d.:]*\d:\d+(?:/(?:tcp|udp))?")  # `-p 27017:27017` publishes a port


@dataclass(frozen=True)
class Program:
    """A program taking a password as an option's value, and how that value is written."""

    literal: str  # found by substring search first (a text naming no program costs little), then the whole word
    names: str  # the whole word fullmatches this
    options: tuple[str, ...]
    glued: bool = True  # `-pVALUE`, `--user=VALUE`
    spaced: bool = True  # `-p VALUE`
    user: str = ""  # the value is user<this>password
    prefix: str = ""  # the value starts with this (openssl's `pass:…`)
    until_operand: bool = False  # options end at the first operand (sshpass runs the command after it)
    rule: str = "password-option"


# A registry client's `-p` is a password only in `login` (`docker run -p` publishes a port): found by that word.
_REGISTRY_CLIENT = re.compile(r"(?<![\w.-])(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|regctl)[ \t]")
PROGRAMS = (
    Program("mysql", r"mysql\w*", ("-p",), spaced=False),  # `mysql -p db` prompts, and db names the database
    Program("mariadb", r"mariadb(?:-\w+)?", ("-p",), spaced=False),
    Program("pass", "sshpass", ("-p",), until_operand=True),
    Program("pass", "htpasswd", ()),  # `-b`: the password is an operand (see _htpasswd)
    Program("redis", "redis-cli", ("-a",)),
    Program("mongo", r"mongo(?:sh|dump|restore|export|import|stat|top|files)?", ("-p",)),
    Program("ldap", r"ldap(?:search|add|modify|delete|modrdn|compare|whoami|passwd|exop)", ("-w",)),
    Program("sqlcmd", "sqlcmd", ("-P",)),
    Program("bcp", "bcp", ("-P",)),
    Program("zip", "zip|unzip|zipcloak", ("-P",)),
    Program("7z", "7za?|7zz|7zr", ("-p",), spaced=False),
    Program("keytool", "keytool", ("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass",
                                   "-destkeypass", "-new"), glued=False),
    Program("openssl", "openssl", ("-pass", "-passin", "-passout"), glued=False, prefix="pass:"),
    Program("login", "login", ("-p",)),
    Program("curl", "curl", ("-u", "--user", "-U", "--proxy-user"), user=":", rule="user-password-option"),
    Program("smbclient", "smbclient", ("-U", "--user"), user="%", rule="user-password-option"),
)
_BY_LITERAL = {literal: [p for p in PROGRAMS if p.literal == literal] for literal in dict.fromkeys(p.literal for p in PROGRAMS)}


def find(text: str, lowered: str) -> list[tuple[int, int, str]]:
    """Every command-line password in `text` (`lowered` is its ASCII lower case): (start, end, rule)."""
    spans: list[tuple[int, int, str]] = []
    for m in _LONG.finditer(lowered):
        option = _LONG_START.search(lowered, max(0, m.start() - 64), m.start())
        if option and not _SWITCHES.intersection(re.split(r"[-_]", option.group(1))):
            spans += _value(text, m.end(), "password-option", spaced=m.group(1) != "=")
    for literal, programs in _BY_LITERAL.items():
        at = lowered.find(literal)
        while at >= 0:
            start = at
            while start and text[start - 1] in _WORD_CHARS:
                start -= 1
            end = _PROGRAM_END.match(text, at).end()  # type: ignore[union-attr]
            for program in programs:
                if re.fullmatch(program.names, text[start:end]):
                    spans += _given_to(text, start, end, program)
            at = lowered.find(literal, end + 1)
    for m in _ENV_NAME.finditer(text):
        start = m.start()
        while start and (text[start - 1].isupper() or text[start - 1].isdigit() or text[start - 1] == "_"):
            start -= 1
        name = text[start:m.end() - 1]
        line_start = text.rfind("\n", 0, start) + 1
        if (name != "PWD" and _ENV_FULL_NAME.fullmatch(name)  # a switch's (ALLOW_EMPTY_PASSWORD) mode values are no literal
                and (not start or text[start - 1] not in _WORD_CHARS | {"$"}) and _ENV_LEAD.fullmatch(text, line_start, start)):
            shaped = bool(_ENV_AMBIGUOUS.fullmatch(name)) and name not in _ENV_PROGRAMS
            spans += [span for span in _value(text, m.end(), "password-env", spaced=False)
                      if (not shaped or _secret_shaped(text[span[0]:span[1]])) and not _named(text[span[0]:span[1]], name)]
    return spans


def _given_to(text: str, start: int, end: int, program: Program) -> list[tuple[int, int, str]]:
    """The passwords given to `program`, whose name is the word text[start:end]."""
    if program.names == "htpasswd":
        return _htpasswd(text, end)
    if program.literal == "login":  # a registry client's, earlier in the same command
        command_start = max(text.rfind(c, 0, start) for c in "\n;|&`(") + 1
        if not _REGISTRY_CLIENT.search(text, command_start, start):
            return []
    return _options(text, end, program)


def _words(text: str, at: int) -> list[tuple[int, int]]:
    """The shell words of the command from `at` to its end, as spans."""
    out: list[tuple[int, int]] = []
    while len(out) < _MAX_WORDS and (m := _WORD.match(text, at)):
        out.append(m.span(1))
        at = m.end()
    return out


def _options(text: str, at: int, program: Program) -> list[tuple[int, int, str]]:
    """The passwords given to one run of `program`, whose arguments start at `at`."""
    words = _words(text, at)
    found: list[tuple[int, int, str]] = []
    n = 0
    while n < len(words):
        start, end = words[n]
        word = text[start:end]
        if not word.startswith("-") and program.until_operand:
            break
        if word.startswith("-"):
            if word in program.options and program.spaced and n + 1 < len(words):
                n += 1
                found += _literal(text, *words[n], program, spaced=True)
            elif option := next((o for o in program.options if program.glued and _glued(word, o)), ""):
                found += _literal(text, start + len(option) + option.startswith("--"), end, program, spaced=False)
        n += 1
    return found


def _glued(word: str, option: str) -> bool:
    """Whether `word` is `option` with its value attached (`-pVALUE`; a long option's `--user=VALUE`)."""
    return word.startswith(option) and len(word) > len(option) and (not option.startswith("--") or word[len(option)] == "=")


def _htpasswd(text: str, at: int) -> list[tuple[int, int, str]]:
    """`htpasswd -b [-c] FILE USER PASSWORD` and `htpasswd -nb USER PASSWORD`: with -b the password is an operand."""
    words = _words(text, at)
    flags = "".join(text[start + 1:end] for start, end in words if text[start] == "-" and text[start + 1:start + 2] != "-")
    operands = [span for span in words if not text.startswith("-", span[0])]
    at_operand = 1 if "n" in flags else 2
    if "b" not in flags or len(operands) <= at_operand:
        return []
    start, end = _unquoted(text, *operands[at_operand])
    return [(start, end, "password-option")] if given(text[start:end], spaced=True) else []


def _literal(text: str, start: int, end: int, program: Program, spaced: bool) -> list[tuple[int, int, str]]:
    start, end = _unquoted(text, start, end)
    if program.prefix:
        if not text.startswith(program.prefix, start):
            return []
        start += len(program.prefix)
    if program.user:
        at = text.find(program.user, start, end)
        if at < 0 or text[start:at] == text[at + 1:end]:  # `admin:admin`, `guest:guest`: a default everyone knows
            return []
        start, spaced = at + 1, False
    return [(start, end, program.rule)] if given(text[start:end], spaced) else []


def _value(text: str, at: int, rule: str, spaced: bool) -> list[tuple[int, int, str]]:
    m = _WORD.match(text, at)
    if not m or (m.start(1) > at and not spaced):  # `--password= x` and `NAME= cmd` give an empty value
        return []
    start, end = _unquoted(text, *m.span(1))
    return [(start, end, rule)] if given(text[start:end], spaced) else []


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    if end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


def documented(value: str) -> bool:
    """Whether a value is a placeholder or a default everyone knows (`YourStrong@Passw0rd`, `postgres`, `guest`): what a
    vendor's quick start writes, which reveals nothing, wherever it is assigned."""
    return value.lower() in _WORDS or bool(_PLACEHOLDER.search(value))


def given(value: str, spaced: bool) -> bool:
    """Whether a value on a command line is a literal password, not a reference, a placeholder or a word of prose."""
    if len(value) < 3 or value.lower() in _WORDS or any(c.isspace() for c in value) or value.startswith("-"):
        return False
    if _REFERENCE.search(value) or _PLACEHOLDER.search(value) or re.fullmatch(r"[A-Z][A-Z_]*", value) or _PORTS.fullmatch(value):
        return False
    return not (spaced and re.fullmatch(r"[a-z]+", value))


def _named(value: str, name: str) -> bool:
    """Whether a variable's value is the default its own name gives away: a word of the name (`WORDPRESS_DB_PASSWORD=
    wordpress`), or `user/password` whose password is one, the user again or a known default (`NEO4J_AUTH=neo4j/password`)."""
    user, _, password = value.lower().rpartition("/")
    return password in name.lower().split("_") or bool(user) and (password == user or documented(password))


def _secret_shaped(value: str) -> bool:
    """Whether the value of a variable whose name often names no password (`TEST_PASS`, `AUTH`) looks like one: 6+
    characters, not a path, a version or a word of one case alone (`all`, `unit`, `kerberos`): a word with digits
    (`hunter22`, `welcome2024`) is the commonest shape of a person's password."""
    if len(value) < 6 or value.startswith(("/", "./", "../", "~/")) or re.fullmatch(r"v?\d+(?:\.\d+)+", value):
        return False
    return not re.fullmatch(r"[a-z]+|[A-Z]+", value)
