"""Secrets: one true positive per rule family on every write path, zero secret bytes in git objects, SQLite or stderr,
and a benign corpus (digests, UUIDs, prose, code, lockfiles) under 1% false positives."""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import os
import random
import shutil
import string
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.guards import secretscan
from repo_memory.shells.cli import cli
from repo_memory.config import Config
from repo_memory.git.committer import Committer, Policy
from repo_memory.git.repo import Git
from repo_memory.errors import SecretError
from repo_memory.core.store import Store
from repo_memory.shells.watch import Watcher

from tests.conftest import git, records_of, skill_row, write_skill_file

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
_rng = random.Random(20261202)
UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
B62 = UPPER + LOWER + DIGITS


def rand(alphabet: str, n: int) -> str:
    """Random characters; generated at run time so this repository holds no secret-shaped literal."""
    return "".join(_rng.choice(alphabet) for _ in range(n))


# rule family -> (a fake secret of that shape, the text it appears in)
FAKES: dict[str, str] = {
    "aws-access-key-id": "AKIA" + rand(UPPER + DIGITS, 16),
    "aws-secret-access-key": rand(B62 + "/+", 40),
    "github-token": "ghp_" + rand(B62, 36),
    "gitlab-token": "glpat-" + rand(B62, 20),
    "slack-token": "xoxb-" + rand(DIGITS, 12) + "-" + rand(B62, 24),
    "slack-webhook": "https://hooks.slack.com/services/T" + rand(UPPER + DIGITS, 8) + "/B" + rand(UPPER + DIGITS, 8) + "/" + rand(B62, 24),
    "stripe-key": "sk_live_" + rand(B62, 24),
    "openai-key": "sk-proj-" + rand(B62, 20) + "T3BlbkFJ" + rand(B62, 20),
    "anthropic-key": "sk-ant-api03-" + rand(B62 + "_-", 93),
    "google-api-key": "AIza" + rand(B62 + "_-", 35),
    "huggingface-token": "hf_" + rand(B62, 34),
    "npm-token": "npm_" + rand(B62, 36),
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + rand(B62, 60),
    "sendgrid-key": "SG." + rand(B62, 22) + "." + rand(B62, 43),
    "twilio-api-key": "SK" + rand("0123456789abcdef", 32),
    "telegram-bot-token": rand(DIGITS, 9) + ":AA" + rand(B62, 33),
    "discord-bot-token": "M" + rand(B62, 23) + "." + rand(B62, 6) + "." + rand(B62, 27),
    "mailchimp-key": rand("0123456789abcdef", 32) + "-us12",
    "square-token": "sq0atp-" + rand(B62, 22),
    "azure-storage-key": rand(B62 + "+/", 86) + "==",
    "jwt": ".".join(base64.urlsafe_b64encode(part).decode().rstrip("=") for part in (
        b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"' + rand(DIGITS, 10).encode() + b'","iat":1516239022}', rand(B62, 32).encode())),
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
    "private-key-body": "MIIEowIBAAKCAQEA" + rand(B62 + "+/", 48),
    "secret-assignment": "Tr0ub4dor&3-" + rand(DIGITS, 4),
    "url-credentials": "s3cr3t-" + rand(B62, 10),
    "authorization-header": rand(B62, 40),
    "high-entropy-token": rand(B62, 40),
    "password-option": "Pw" + rand(B62, 10),
    "user-password-option": "Pw" + rand(B62, 10),
    "password-env": "Pw" + rand(B62, 10),
}
CONTEXT = {
    "aws-secret-access-key": "aws_secret_access_key = {}",
    "azure-storage-key": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
    "private-key": "{}\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "secret-assignment": 'DB_PASSWORD = "{}"',  # a shell's DB_PASSWORD=… at a line's start is password-env
    "url-credentials": "postgres://deploy:{}@db.internal:5432/app",
    "authorization-header": "Authorization: Bearer {}",
    "password-option": "`mysql -u root -p{} prod`",
    "user-password-option": "`curl -u admin:{} https://api.example.com/v1`",
    "password-env": "`PGPASSWORD={} psql -h db`",
}


def in_context(rule: str) -> str:
    return CONTEXT.get(rule, "use {}").format(FAKES[rule]).splitlines()[0]


def sample(rule: str) -> str:
    return f"Deploy notes.\nStep 2: {in_context(rule)} then restart.\n"


# Credentials given on a command line, by family: (rule, the command with {} where the password goes).
COMMAND_LINES: list[tuple[str, str]] = [
    ("password-option", "mysql -u root -p{} prod"),
    ("password-option", "mysqldump -uroot -p'{}' app > dump.sql"),
    ("password-option", "mariadb -p\"{}\" -e 'select 1'"),
    ("password-option", "mysql --password={} -h db app"),
    ("password-option", "wget --http-user=ci --http-password={} https://files.internal/x.tgz"),
    ("password-option", "podman login --username ci --password {} quay.io"),
    ("password-option", "docker login -u ci -p {} registry.internal"),
    ("password-option", "sudo docker login -u ci -p{} registry.internal"),
    ("password-option", "sshpass -p {} ssh deploy@host uptime"),
    ("password-option", "sshpass -p'{}' scp build.tgz deploy@host:"),
    ("password-option", "redis-cli -h cache -a {} ping"),
    ("password-option", "mongosh -u admin -p {} --host db"),
    ("password-option", "htpasswd -b -c .htpasswd admin {}"),
    ("password-option", "htpasswd -nbB admin {}"),
    ("password-option", "ldapsearch -x -D cn=admin,dc=x -w {} -b dc=x"),
    ("password-option", "openssl pkcs12 -export -in c.pem -passout pass:{} -out k.p12"),
    ("password-option", "keytool -list -keystore k.jks -storepass {}"),
    ("password-option", "sqlcmd -S db -U sa -P {} -Q 'select 1'"),
    ("user-password-option", "curl -u admin:{} https://api.example.com/v1"),
    ("user-password-option", "curl -s --user 'admin:{}' https://api.internal"),
    ("user-password-option", "curl -uadmin:{} https://api.internal"),
    ("user-password-option", "curl --proxy-user proxy:{} https://api.internal"),
    ("user-password-option", "curl --user=admin:{} https://api.internal"),
    ("user-password-option", "smbclient //srv/share -U admin%{}"),
    ("password-env", "PGPASSWORD={} psql -h db -U app"),
    ("password-env", "MYSQL_PWD='{}' mysql -u root"),
    ("password-env", "SSHPASS={} sshpass -e ssh host"),
    ("password-env", "cd app && DB_PASSWORD={} ./migrate up"),
    ("password-env", "export REDISCLI_AUTH={}"),
    ("password-env", "docker run -e POSTGRES_PASSWORD={} postgres:16"),
    ("password-env", "DB_PASS={} ./migrate up"),
    ("password-env", "export API_AUTH={}"),
    ("password-env", "docker run -e MYSQL_ALLOW_EMPTY_PASSWORD=yes -e MYSQL_PASSWORD={} mysql:8"),
    ("password-option", "docker exec -it mongo mongosh -u admin -p {}"),
]
COMMAND_SECRETS = ["Pw" + rand(B62, 8) + "!" for _ in COMMAND_LINES]
# What a command line holds that is not a password: these must stay clean.
NOT_PASSWORDS = [
    "mysql -u root -p prod", "mysql -p", "mysql -uroot -p -h db app", "curl -u root https://api.internal",
    "curl -u admin: https://api.internal", "docker run -p 8080:80 nginx", "docker run -d -p 5432:5432 postgres:16",
    "docker compose run -p 80:80 web", "ssh -p 22 deploy@host", "ssh -p 2222 -i key deploy@host", "python -m http.server -p 8000",
    "scp -P 2222 f host:", "tar -xzpf build.tgz", "pytest -p no:cacheprovider", "mysql --password-file=/run/secrets/db app",
    "docker login -u ci --password-stdin registry.internal < token.txt", "sshpass -f ~/.pw ssh host", "sshpass -e ssh host",
    'curl -u "$USER:$PASS" https://api.internal', "curl -u admin:${API_PASSWORD} https://api.internal",
    'mysql -p"$DB_PASS" app', 'mysql --password="$(cat /run/secrets/db)" app', "mysql --password=$MYSQL_PASSWORD app",
    "PGPASSWORD=$PGPASS psql -h db", 'PGPASSWORD="$(pass show db)" psql', "PGPASSWORD=${PGPASS} psql",
    "redis-cli -a <password> ping", "mysql -p<password> app", "mysql --password=*** app", "mysql -p'***' app",
    "curl -u user:password https://api.internal", "curl -u admin:changeme https://api.internal",
    "mysql --password=YOUR_PASSWORD app", "mysql --password PASSWORD app", "mysql -pPASSWORD app",
    "psql --no-password -h db app", "use the --password option to pass it", "the --password flag is deprecated",
    "redis-cli -h cache ping", "htpasswd -c .htpasswd admin", "htpasswd -B .htpasswd admin", "PWD=/tmp make",
    "export PGPASSFILE=~/.pgpass", "PASSWORD_MIN_LENGTH=12 ./run", "sshpass -p is unsafe: use sshpass -e",
    'parser.add_argument("--password", help="the password")', 'args = ["--password=" + password]',
    'cmd = f"mysql -p{password} app"', '"--password=%s" % pw', "redis-cli -a $REDIS_PASSWORD ping",
    "DB_PASSWORD= ./run", "kubectl port-forward svc/db 5432:5432",
    # A password-named variable that is a switch, by its name or by its value; an AUTH or PASS one holding no secret.
    "docker run -d -e MYSQL_ALLOW_EMPTY_PASSWORD=yes -p 3306:3306 mysql:8",
    "docker run -d -e ALLOW_EMPTY_PASSWORD=yes bitnami/redis",
    "docker run -e MYSQL_RANDOM_ROOT_PASSWORD=yes mysql:8", "docker run -e MARIADB_RANDOM_ROOT_PASSWORD=yes mariadb",
    "docker run -e MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1 mariadb", "DISABLE_AUTH=yes npm run dev", "SKIP_AUTH=yes pytest",
    "NO_AUTH=yes ./serve", "AUTH=off ./run.sh", "export AUTH=none", "docker compose run -e AUTH=basic web",
    "HTTP_AUTH=basic ./serve", "docker run -e AUTH=bearer api", "BASIC_AUTH=no ./serve", "REQUIRE_AUTH=true ./serve",
    "TEST_PASS=all make check", "TEST_PASS=3 make check", "CI_PWD=/builds/x make", "mysql --password=yes",
    "mysqld --allow-empty-password=yes", "app --skip-password=true", "RAILS_ENV=test PASSWORD_RESET_TTL=10 bin/rails test",
    "docker run -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16", "export MONGO_INITDB_ROOT_PASSWORD_FILE=/run/secrets/pw",
    # Defaults everyone knows: an image's documented password, or the user name again.
    "docker run -e POSTGRES_PASSWORD=postgres -p 5432:5432 postgres:16", "PGPASSWORD=postgres psql -h localhost -U postgres",
    "docker run -e MYSQL_ROOT_PASSWORD=root mysql:8", "docker run -e RABBITMQ_DEFAULT_PASS=guest rabbitmq:3",
    "docker run -e GF_SECURITY_ADMIN_PASSWORD=admin grafana/grafana", "docker run -e MINIO_ROOT_PASSWORD=minioadmin minio/minio",
    "mysql -uroot -proot -e 'show databases'", "curl --user admin:admin http://localhost:8080/api",
    "curl -u guest:guest http://localhost:15672/api/overview", "curl -u $GITHUB_TOKEN:x-oauth-basic https://api.github.com/user",
    "ldapsearch -x -D cn=admin,dc=example,dc=org -w admin", "sqlcmd -S localhost -U sa -P 'YourStrong@Passw0rd'",
    # The same letters on the command lines agents run every day.
    "docker run --name mongo -p 27017:27017 -d mongo:7", "docker run --name login -p 8080:80 nginx", "kubectl logs mongo -p",
    "git add -p", "git log -p --follow src/auth/password.py", "pytest -p no:randomly -k password", "jest --passWithNoTests",
    "app --pass-through --password-reset", "./manage.py --password-reset-timeout 3600", "ssh-keygen -p -f ~/.ssh/id_rsa",
    "openssl enc -aes-256-cbc -pass env:PASS -in a -out b", "keytool -list -storepass:env STOREPASS -keystore k.jks",
    # Vendors' own quick-start lines, as an agent notes what it ran: the documented placeholder or default.
    'docker run -e "ACCEPT_EULA=Y" -e "MSSQL_SA_PASSWORD=YourStrong@Passw0rd" -p 1433:1433 mcr.microsoft.com/mssql/server:2022-latest',
    "psql postgres://postgres:postgres@localhost:5432/app", "DATABASE_URL=postgresql://root:root@localhost/app ./migrate",
    "amqp://guest:guest@localhost:5672/", "redis://default:password@localhost:6379",
    # A default the variable's own name gives away: a word of the name, or `user/password` whose password is one, the
    # user again or a known default.
    "docker run -e WORDPRESS_DB_PASSWORD=wordpress wordpress:6", "export REDIS_PASSWORD=redis",
    "docker run -e NEO4J_AUTH=neo4j/password neo4j:5", "docker run -e NEO4J_AUTH=neo4j/neo4j neo4j:5",
    "docker run -e KEYCLOAK_ADMIN_PASSWORD=keycloak quay.io/keycloak/keycloak",
]


def test_there_is_a_fixture_for_every_rule():
    assert set(FAKES) == {*secretscan.PROVIDERS, *secretscan.GENERIC}


@pytest.mark.parametrize("rule", sorted(FAKES))
def test_each_rule_family_is_found_located_and_redacted(rule: str):
    text = sample(rule)
    found = secretscan.scan(text)
    assert [f.rule for f in found] == [rule]
    assert found[0].line == 2 and text.splitlines()[1][found[0].column - 1:].startswith(FAKES[rule][:10])
    clean, _ = secretscan.redact(text)
    assert FAKES[rule] not in clean and f"[REDACTED:{rule}]" in clean and secretscan.scan(clean) == []
    shifted = "İstanbul ünïcode " + text  # characters whose lower case is longer do not shift positions
    assert [f.rule for f in secretscan.scan(shifted)] == [rule] and FAKES[rule] not in secretscan.redact(shifted)[0]


@pytest.mark.parametrize(("rule", "command", "secret"), [(*case, secret) for case, secret in zip(COMMAND_LINES, COMMAND_SECRETS)])
def test_a_password_on_a_command_line_is_found_by_family_and_redacted(rule: str, command: str, secret: str):
    text = f"Ran `{command.format(secret)}` to check.\n"
    found = secretscan.scan(text)
    assert [f.rule for f in found] == [rule], found
    assert text[found[0].start:found[0].end] == secret
    clean, _ = secretscan.redact(text)
    assert secret not in clean and f"[REDACTED:{rule}]" in clean and secretscan.scan(clean) == []
    assert [f.rule for f in secretscan.scan(command.format(secret))] == [rule]  # a command alone, at the start of the text


@pytest.mark.parametrize("text", ["export DB_PASS=qwerty123", "export SMTP_PASS=welcome2024", "export DB_PWD=pa55word",
                                  "export APP_AUTH=letmein123", "DB_PASS=hunter22 ./migrate up", "export GIT_PASS=ghp1234567",
                                  "export ENABLE_PASSWORD='Xk9#mPq2'", "NO_PROXY_PASSWORD=S3cr3t!x make",
                                  "REQUIRED_PASSWORD=Xk9mPq2z ./run", "docker run -e NEO4J_AUTH=neo4j/Xk29fjs8aa neo4j:5",
                                  "WORDPRESS_DB_PASSWORD=wordpress2024 ./run", "export REDIS_PASSWORD=redis-Xk9mPq2z"])
def test_a_persons_password_in_a_variable_whose_name_or_words_also_name_switches_is_found(text: str):
    """A word with digits is the commonest shape of a person's password: read as "a word with a version" it went
    through in a PASS, PWD or AUTH variable, and a switch word anywhere in the name (NO_, REQUIRED_) let any value
    through. A switch's values are its modes (`yes`, `1`, `off`), which are no password whatever the name."""
    assert [f.rule for f in secretscan.scan(text)] == ["password-env"], text


@pytest.mark.parametrize("text", NOT_PASSWORDS)
def test_what_a_command_line_holds_that_is_not_a_password_is_not_flagged(text: str):
    assert secretscan.scan(text) == [] and secretscan.scan(f"Ran `{text}` to check.") == []


def _benign_corpus() -> dict[str, list[str]]:
    corpus: dict[str, list[str]] = {}
    scratch = git_shas()
    corpus["git SHAs"] = scratch
    corpus["UUIDs"] = [str(uuid.UUID(int=_rng.getrandbits(128), version=4)) for _ in range(2000)]
    corpus["UUIDs"] += [u.upper() for u in corpus["UUIDs"][:500]]
    digests = [hashlib.sha256(str(i).encode()).digest() + hashlib.sha256(str(-i).encode()).digest() for i in range(1000)]
    corpus["digests"] = [d[:32].hex() for d in digests] + [hashlib.md5(d).hexdigest() for d in digests]  # noqa: S324 - a benign fixture
    corpus["lockfile hashes"] = (
        [f'"integrity": "sha512-{base64.b64encode(d).decode()}"' for d in digests]  # package-lock, pnpm
        + [f"pkg/name-{i}.py,sha256={base64.urlsafe_b64encode(d[:32]).decode().rstrip('=')},{i * 7}" for i, d in enumerate(digests)]  # wheel RECORD
        + [f"example.com/mod v1.{i}.0 h1:{base64.b64encode(d[:32]).decode()}" for i, d in enumerate(digests)]  # go.sum
        + [f'checksum = "{d[:32].hex()}"' for d in digests]  # Cargo.lock
    )
    corpus["code"] = []
    for pattern in ("server/**/*.py", "bench/*.py", "*.md", "plugin/skills/**/*.md", "examples/**/*.md"):
        for path in sorted(glob.glob(str(ROOT / pattern), recursive=True)):
            corpus["code"] += Path(path).read_text(encoding="utf-8").splitlines()
    site = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "**", "*.py"), recursive=True))
    for path in site[:: max(1, len(site) // 300)]:
        corpus["code"] += Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    corpus["prose"] = []
    if LOCOMO.is_file():
        for conversation in json.loads(LOCOMO.read_text(encoding="utf-8")):
            for key, session in conversation["conversation"].items():
                if key.startswith("session_") and isinstance(session, list):
                    corpus["prose"] += [turn.get("text", "") for turn in session]
    corpus["prose"] += (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")
    return {k: [line for line in v if line.strip()] for k, v in corpus.items()}


def git_shas() -> list[str]:
    return [
        hashlib.sha1(f"commit {i}".encode()).hexdigest() + " " + hashlib.sha1(f"tree {i}".encode()).hexdigest()[:7]  # noqa: S324
        for i in range(1000)
    ]


@pytest.mark.slow
def test_benign_corpus_has_under_one_percent_false_positives_and_none_on_digests():
    corpus = _benign_corpus()
    assert sum(map(len, corpus.values())) > 20_000
    flagged = {name: [line for line in lines if secretscan.scan(line)] for name, lines in corpus.items()}
    for name in ("git SHAs", "UUIDs", "digests", "lockfile hashes"):
        assert flagged[name] == [], f"{name}: {flagged[name][:3]}"
    total, bad = sum(map(len, corpus.values())), sum(map(len, flagged.values()))
    assert bad / total <= 0.01, {k: v[:3] for k, v in flagged.items() if v}


def _leaks(repo: Path, secrets: list[str]) -> list[str]:
    """Which secrets appear in any git object, in the SQLite index files or in the memory tree on disk."""
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True).stdout
    index_bytes = b"".join(p.read_bytes() for p in (repo / ".git" / "repo-memory").rglob("*") if p.is_file())
    return [s for s in secrets if s.encode() in objects or s.encode() in index_bytes]


def _write_path_cases() -> list[tuple[str, str, str]]:
    """(rule, secret, the line holding it): one per rule family, then one per command-line family member."""
    cases = [(rule, FAKES[rule], in_context(rule)) for rule in sorted(FAKES)]
    cases += [(rule, secret, f"`{command.format(secret)}`") for (rule, command), secret in zip(COMMAND_LINES, COMMAND_SECRETS)]
    return cases


@pytest.mark.slow
def test_no_secret_reaches_a_file_a_git_object_the_index_or_stderr_on_any_write_path(repo: Path, runner: CliRunner):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    cases = _write_path_cases()
    (repo / ".agents" / "repo-memory.toml").write_text("writes_per_minute = 0\n", encoding="utf-8")  # 300 writes in a few seconds
    store = Store(Config.load(repo))
    messages: list[str] = []

    async def agent() -> None:
        async with Client(server.build(store)) as client:
            for i, (rule, _, line) in enumerate(cases):
                text = f"Deploy notes.\nStep 2: {line} then restart.\n"
                calls = [
                    ("skill_write", {"name": f"deploy-{i}", "description": "How to deploy.", "body": text}),  # skill body
                    ("skill_write", {"name": f"tagged-{i}", "description": "How to deploy.", "body": "Steps.",
                                     "tags": ["ok", line]}),  # frontmatter
                    ("skill_write", {"name": f"described-{i}", "description": f"Deploy with {line}.", "body": "Steps."}),
                    ("remember", {"text": text}),  # experience text
                    ("remember", {"text": "config", "data": {"env": text}}),  # experience data
                ]
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    answer = result.content[0].text  # type: ignore[union-attr]
                    assert result.is_error, (tool, rule, line)
                    assert "secret" in answer and rule in answer and "line" in answer
                    messages.append(answer)

    anyio.run(agent)
    store.write_skill("clean", "How to deploy.", "kubectl apply", actor="human")
    store.close()
    assert not any((repo / ".agents" / "skills").glob("deploy-*")) and not any((repo / ".agents" / "skills").glob("tagged-*"))

    # a person's `log add`: refused, nothing written
    for rule, _, line in cases:
        out = runner.invoke(cli, ["--root", str(repo), "log", "add", f"Ran {line}", "-s", "by-hand"])
        assert out.exit_code != 0 and rule in out.output, (rule, line)
        messages.append(out.output)

    # captured tool output and the command that made it, through the real hook command: redacted, never refused
    stderr = b""
    for rule, _, line in cases:
        command = line.strip("`") if line.startswith("`") else "cat .env"
        payload = {"session_id": "hooked", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command},
                   "tool_response": {"stdout": f"Deploy notes.\nStep 2: {line} then restart.\n" + "z" * 3000, "stderr": ""}}
        proc = subprocess.run([sys.executable, "-m", "repo_memory", "hook", "post-tool"], input=json.dumps(payload).encode(),
                              capture_output=True, cwd=repo, env={**os.environ, "REPO_MEMORY_DEBUG": "1"})
        assert proc.returncode == 0
        stderr += proc.stderr
    after = Store(Config.load(repo))
    records = records_of(after, "hooked")
    after.close()
    assert [r["data"]["redacted"] for r in records] == [[rule] for rule, _, _ in cases]
    assert all("[REDACTED:" in r["data"]["output_text"] for r in records)
    git(repo, "log", "-1")  # commits landed
    secrets = [secret for _, secret, _ in cases]
    assert _leaks(repo, secrets) == []
    on_disk = b"".join(p.read_bytes() for p in (repo / ".agents").rglob("*") if p.is_file())
    assert [s for s in secrets if s.encode() in on_disk] == []
    assert [s for s in secrets if s in "\n".join(messages) or s.encode() in stderr] == []


def test_a_persons_edit_holding_a_secret_is_flagged_redacted_in_the_index_and_never_committed(store: Store, repo: Path,
                                                                                                 runner: CliRunner):
    token = FAKES["github-token"]
    watcher = Watcher(store)
    watcher.start()
    seen = threading.Event()
    watcher.listeners.append(lambda: seen.set() if skill_row(store, "hand-edited") else None)
    try:
        path = write_skill_file(repo, "hand-edited", "How to release.", f"Run `gh release` with GH_TOKEN={token}.",
                                extra="metadata:\n  status: draft\n")
        assert seen.wait(5)
    finally:
        watcher.stop()
    row = skill_row(store, "hand-edited")
    assert row is not None and "secret: github-token at line" in row["flags"]
    assert token not in row["body"] and store.recall("release", kinds=["skill"]).hits == []  # out of default recall
    assert token not in store.read("hand-edited").content
    # the agent cannot launder it into a commit: updating the skill is refused, accepting it too
    with pytest.raises(SecretError, match="github-token"):
        store.write_skill("hand-edited", "How to release.", "Run gh release.\n\n" + path.read_text().split("---", 2)[2])
    with pytest.raises(SecretError):
        store.review("hand-edited", accept=True)
    # even when its path is pending for commit, the commit leaves it out
    person = Committer(Git(repo, repo / ".git"), repo / ".git" / "repo-memory", Policy())
    person.record([".agents/skills/hand-edited/SKILL.md", ".agents/skills/other/SKILL.md"], "memory(skill): update hand-edited")
    store.write_skill("other", "Something else.", "Steps.", actor="human")
    person.flush()
    store.flush()
    assert "hand-edited" not in git(repo, "log", "--all", "--name-only", "--format=")
    assert "contains what looks like a secret" in person.describe()
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "hand-edited" in out and "github-token" in out and token not in out
    assert _leaks(repo, [token]) == []


def test_code_anchors_and_paths_named_like_secrets_are_not_secrets():
    pinned = '"src/auth/provider.py::Provider.revoke_token": "0cd9dd2cab0533e3"'
    assert secretscan.scan(pinned) == [] and secretscan.scan("config/api_key: 0cd9dd2cab0533e3x") == []
    assert [f.rule for f in secretscan.scan('revoke_token: "0cd9dd2cab0533e3"')] == ["secret-assignment"]


def key_bodies(tmp: Path) -> dict[str, str]:
    """The base64 bodies (armour lines removed) of freshly generated private keys of every common kind."""
    commands = {
        "rsa pkcs1": "openssl genrsa -traditional 2048", "rsa pkcs8": "openssl genpkey -algorithm rsa",
        "ec p-256 sec1": "openssl ecparam -name prime256v1 -genkey -noout",
        "ec p-384 sec1": "openssl ecparam -name secp384r1 -genkey -noout", "ec pkcs8": "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256",
        "ed25519 pkcs8": "openssl genpkey -algorithm ed25519", "encrypted pkcs8": "openssl genpkey -algorithm rsa -aes256 -pass pass:x",
        "dsa": "openssl dsaparam -genkey 1024 | openssl dsa",
    }
    bodies = {}
    for kind, command in commands.items():
        pem = subprocess.run(command, shell=True, capture_output=True, text=True, check=True).stdout
        bodies[kind] = "\n".join(line for line in pem.splitlines() if not line.startswith("-----"))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp / "id")], check=True, capture_output=True)
    bodies["openssh"] = "\n".join(ln for ln in (tmp / "id").read_text().splitlines() if not ln.startswith("-----"))
    return bodies


@pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("ssh-keygen")), reason="needs openssl and ssh-keygen to make keys")
def test_private_key_material_is_found_without_its_armour(tmp_path: Path):
    for kind, body in key_bodies(tmp_path).items():
        first_line = body.splitlines()[0]
        assert [f.rule for f in secretscan.scan(f"here is the key:\n{first_line}\n")] == ["private-key-body"], kind
        assert "private-key-body" in {f.rule for f in secretscan.scan(body)}, kind
    assert secretscan.scan("PKCS#1 keys start with MIIEowIBAAKCAQEA when base64-encoded.") == []  # naming the prefix is fine


def _b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# Secrets whose shape is their own (a prefix no word has) glued to what comes before them: word boundaries missed them.
GLUED = {
    "aws-access-key-id": ["x", "7", "_", "-", "%3D", "key="],
    "github-token": ["x", "7", "-", "%3D"],
    "google-api-key": ["x", "7", "_", "%3D"],
    "huggingface-token": ["x", "7", "-"],
    "stripe-key": ["x", "7", "-"],
}


@pytest.mark.parametrize(("rule", "before"), [(rule, before) for rule, befores in GLUED.items() for before in befores])
def test_a_credential_glued_to_the_character_before_it_is_found(rule: str, before: str):
    text = f"session-{before}{FAKES[rule]} was used"
    found = secretscan.scan(text)
    assert [f.rule for f in found] == [rule], (rule, before, found)
    assert FAKES[rule] not in secretscan.redact(text)[0]


@pytest.mark.parametrize("header", [b'{ "alg": "HS256", "typ": "JWT" }', b'{\n  "alg": "RS256"\n}', b'{\t"alg":"none"}'])
def test_a_jwt_is_found_whatever_the_whitespace_in_its_json_header(header: bytes):
    payload = _b64url(b'{ "sub": "1234567890", "name": "A" }')
    token = f"{_b64url(header)}.{payload}.{rand(B62, 43)}"
    assert not token.startswith("eyJ")
    assert [f.rule for f in secretscan.scan(f"Authorization cookie {token} expired")] == ["jwt"]


def test_a_session_id_holding_a_glued_key_is_refused(repo: Path):
    key = FAKES["aws-access-key-id"]
    with pytest.raises(Exception, match="secret|credential") as refused:
        Store(Config.load(repo), session=f"deploy-x{key}")
    assert key not in str(refused.value)
    assert not list((repo / ".agents/experience").glob(f"*/*{key}*"))


def test_a_secret_in_remembers_refs_is_refused_naming_refs_not_a_field_never_passed(repo: Path):
    """refs=["AKIA…"] was refused as "the session id contains what looks like a secret", refs=["see AKIA…"] as "the
    name": the refs were parsed as ids first, and the agent was pointed at a field it never passed."""
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    key, store = FAKES["aws-access-key-id"], Store(Config.load(repo))

    async def agent() -> list[str]:
        async with Client(server.build(store)) as client:
            said = []
            for refs in ([key], ["https://example.com/ticket/1", f"see {key}"]):
                result = await client.call_tool("remember", {"text": "deploy notes", "refs": refs})
                assert result.is_error
                said.append(result.content[0].text)  # type: ignore[union-attr]
            result = await client.call_tool("checkpoint", {"summary": "deployed", "covers": [f"{key}#1"]})
            assert result.is_error
            said.append(result.content[0].text)  # type: ignore[union-attr]
            return said

    try:
        first, second, covered = anyio.run(agent)
    finally:
        store.close()
    assert "refs[0]" in first and "session id" not in first and key not in first, first
    assert "refs[1]" in second and "the name" not in second and key not in second, second
    assert "covers[0]" in covered and "session id" not in covered and key not in covered, covered


def test_doctor_says_a_secret_a_commit_holds_is_committed_and_to_rotate_it_first(repo: Path, runner: CliRunner):
    """A teammate hand-wrote a key into a skill and committed and pushed it; doctor in every clone said "it is not
    committed", so a team could decide not to rotate the key."""
    key = FAKES["aws-access-key-id"]
    write_skill_file(repo, "deploy-staging", "How we deploy to staging.", f"1. export AWS_ACCESS_KEY_ID={key}",
                     extra="metadata:\n  status: active\n  origin: human\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deploy skill")
    [found] = [f for f in json.loads(runner.invoke(cli, ["--root", str(repo), "doctor", "--json"]).output)
               if f["path"] == ".agents/skills/deploy-staging/SKILL.md" and "secret" in f["message"]]
    assert "not committed" not in found["message"] and "HEAD holds it" in found["message"], found
    assert found["fix"].startswith("Rotate it first") and key not in json.dumps(found), found
    write_skill_file(repo, "draft-notes", "Notes on deploys.", f"1. key {key}", extra="metadata:\n  status: draft\n")
    [uncommitted] = [f for f in json.loads(runner.invoke(cli, ["--root", str(repo), "doctor", "--json"]).output)
                     if f["path"] == ".agents/skills/draft-notes/SKILL.md" and "secret" in f["message"]]
    assert "it is not committed" in uncommitted["message"], uncommitted
