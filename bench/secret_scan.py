"""Benchmark: the secret scanner — detection per rule family, false positives on benign text, throughput.

Baseline measured in the same run: Yelp's detect-secrets run as its CLI runs (each text a file, default plugins
and filters) on the same fixtures and the same corpus, when it is installed (`pip install detect-secrets`);
otherwise the output says why it is missing.

Benign corpus (every line is something a memory may legitimately hold): LoCoMo conversations (prose), this
repository's code and docs, a sample of installed Python packages, wheel RECORD files (sha256 digests), npm
lockfiles (sha512 integrity), git SHAs, UUIDs and hex digests.

    python bench/secret_scan.py             # the full corpus
    python bench/secret_scan.py --small     # the small mode CI runs
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
sys.path.insert(0, str(ROOT))

from repo_memory.guards import secretscan  # noqa: E402
from tests.guards.test_secrets import FAKES, GLUED, _b64url, sample  # noqa: E402 - the same fixtures the tests prove


def corpus(small: bool) -> dict[str, list[str]]:
    """Benign lines, by source."""
    out: dict[str, list[str]] = {}
    if LOCOMO.is_file():
        texts = [turn.get("text", "") for conv in json.loads(LOCOMO.read_text(encoding="utf-8"))
                 for key, session in conv["conversation"].items() if key.startswith("session_") and isinstance(session, list)
                 for turn in session]
        out["prose (LoCoMo)"] = texts[:2000] if small else texts
    own = [p for pattern in ("server/**/*.py", "bench/*.py", "*.md", "plugin/skills/**/*.md") for p in glob.glob(str(ROOT / pattern), recursive=True)]
    out["code (this repo)"] = [line for p in sorted(own)[:: 4 if small else 1] for line in Path(p).read_text(encoding="utf-8").splitlines()]
    site = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "**", "*.py"), recursive=True))
    step = max(1, len(site) // (60 if small else 600))
    out["code (site-packages)"] = [line for p in site[::step] for line in Path(p).read_text(encoding="utf-8", errors="replace").splitlines()]
    records = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "*.dist-info", "RECORD")))
    out["wheel RECORD"] = [line for p in records[: 10 if small else None] for line in Path(p).read_text(encoding="utf-8").splitlines()]
    locks = sorted(glob.glob(str(ROOT / ".tools" / "**" / "package-lock.json"), recursive=True))
    out["npm lockfiles"] = [line for p in locks[:3 if small else None] for line in Path(p).read_text(encoding="utf-8").splitlines()]
    n = 300 if small else 3000
    out["git SHAs"] = [hashlib.sha1(f"c{i}".encode()).hexdigest() for i in range(n)]  # noqa: S324 - shape only
    out["UUIDs"] = [str(uuid.uuid5(uuid.NAMESPACE_DNS, str(i))) for i in range(n)]
    out["sha256 digests"] = [hashlib.sha256(f"d{i}".encode()).hexdigest() for i in range(n)]
    return {k: [line for line in v if line.strip()] for k, v in out.items()}


def ours(lines: list[str]) -> set[int]:
    """Indexes of the lines repo-memory flags."""
    return {i for i, line in enumerate(lines) if secretscan.scan(line)}


def baseline() -> tuple[Callable[[list[str]], set[int]] | None, str]:
    """detect-secrets as its CLI runs it (`detect-secrets scan`): each text is a file, default plugins and filters."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError as exc:
        return None, f"detect-secrets (not installed: {exc}; pip install detect-secrets)"
    from importlib.metadata import version

    def run(lines: list[str]) -> set[int]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "corpus.txt"
            path.write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
            found = SecretsCollection()
            with default_settings():
                found.scan_file(str(path))
            return {secret.line_number - 1 for _, secret in found}

    return run, f"detect-secrets {version('detect-secrets')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="a small corpus (CI)")
    args = parser.parse_args()
    base, base_name = baseline()
    scanners = [(name, scan) for name, scan in (("repo-memory", ours), (base_name, base)) if scan is not None]
    if base is None:
        print(f"baseline: {base_name}")
    fixtures = [sample(rule).splitlines()[1] for rule in FAKES]
    print(f"fixtures: {len(FAKES)} rule families, one secret each, inside a line of notes")
    for name, scan in scanners:
        print(f"  {name:22} detected {len(scan(fixtures))}/{len(FAKES)}")
    hard = [f"session-{before}{FAKES[rule]} was used" for rule, befores in GLUED.items() for before in befores]
    payload = _b64url(b'{ "sub": "42" }')
    hard += [f"cookie {_b64url(header)}.{payload}.{'k' * 20}Z9x" for header in
             (b'{ "alg": "HS256" }', b'{\n  "alg": "RS256"\n}', b'{\t"alg":"none"}')]
    print(f"hard shapes: {len(hard)} lines (a provider's key glued to the character before it; JWTs with spaced JSON headers)")
    for name, scan in scanners:
        print(f"  {name:22} detected {len(scan(hard))}/{len(hard)}")
    lines = corpus(args.small)
    total = sum(map(len, lines.values()))
    print(f"\nbenign corpus: {total} lines; false positives (lines flagged)")
    print(f"  {'source':22} {'lines':>8} " + " ".join(f"{name.split()[0]:>16}" for name, _ in scanners))
    bad_total = dict.fromkeys([name for name, _ in scanners], 0)
    for source, items in lines.items():
        row = []
        for name, scan in scanners:
            bad = len(scan(items))
            bad_total[name] += bad
            row.append(f"{bad:>7} ({100 * bad / max(1, len(items)):5.2f}%)")
        print(f"  {source:22} {len(items):>8} " + " ".join(row))
    print(f"  {'all':22} {total:>8} " + " ".join(f"{v:>7} ({100 * v / total:5.2f}%)" for v in bad_total.values()))
    code = lines.get("code (site-packages)", [])
    size = sum(len(line) + 1 for line in code) / 1e6
    print(f"\nthroughput on {size:.1f} MB of code")
    speeds = {}
    for name, scan in scanners:
        started = time.perf_counter()
        if name == "repo-memory":  # in 64 KiB chunks, as the hooks call it
            text = "\n".join(code)
            for i in range(0, len(text), 65536):
                secretscan.scan(text[i:i + 65536])
        else:
            scan(code)
        speeds[name] = size / (time.perf_counter() - started)
    for name, speed in speeds.items():
        ratio = "" if name == "repo-memory" else f"  (repo-memory is {speeds['repo-memory'] / speed:.1f}x faster)"
        print(f"  {name:22} {speed:7.2f} MB/s{ratio}")


if __name__ == "__main__":
    main()
