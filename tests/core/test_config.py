"""Configuration: the file, and the REPO_MEMORY_<KEY> variables that override each of its keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.errors import ConfigError

SCHEMA = json.loads((Path(__file__).parents[2] / "schemas/config.schema.json").read_text(encoding="utf-8"))
SET = {"review": ("optional", "review", "optional"), "commit": ("off", "commit", "off"), "sign": ("never", "sign", "never"),
       "commit_window_seconds": ("0.5", "commit_window", 0.5), "writes_per_minute": ("0", "writes_per_minute", 0),
       "write_bytes_per_minute": ("1024", "write_bytes_per_minute", 1024), "write_bytes_per_session": ("2048", "write_bytes_per_session", 2048),
       "semantic": ("false", "semantic", False), "decay_half_life_days": ("0", "decay_half_life_days", 0.0),
       "mirror_limit": ("5", "mirror_limit", 5), "tool_output_blobs": ("false", "tool_output_blobs", False),
       "recall_limit": ("3", "recall_limit", 3), "inline_max_bytes": ("4096", "inline_max", 4096),
       "skill_dirs": (".claude/skills,docs/skills", "skill_dirs", (".claude/skills", "docs/skills")),
       "author": ('{"name": "Ops Bot", "email": "ops@example.com"}', "author_name", "Ops Bot")}


def test_every_key_of_the_file_is_overridden_by_its_environment_variable(repo: Path):
    """reference.md says REPO_MEMORY_<KEY> overrides every key; only five were read, and the others (a rate limit set
    to 0 to lift it, say) were ignored without a word."""
    assert set(SET) == set(SCHEMA["properties"])  # a new key gets its line here
    env = {f"REPO_MEMORY_{key.upper()}": value for key, (value, _, _) in SET.items()}
    config = Config.load(repo, env=env)
    assert {key: getattr(config, field) for key, (_, field, _) in SET.items()} == {key: want for key, (_, _, want) in SET.items()}


@pytest.mark.parametrize("key, value", [("WRITES_PER_MINUTE", "lots"), ("SEMANTIC", "maybe"), ("COMMIT", "sometimes"), ("AUTHOR", "{")])
def test_a_variable_the_key_cannot_take_names_the_variable(repo: Path, key: str, value: str):
    with pytest.raises(ConfigError, match=f"REPO_MEMORY_{key}"):
        Config.load(repo, env={f"REPO_MEMORY_{key}": value})
