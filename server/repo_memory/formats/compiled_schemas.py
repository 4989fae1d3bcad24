"""Validators generated from schemas/ by repo_memory.formats.schema.compiled_source(); do not edit."""

# ruff: noqa

# mypy: ignore-errors

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS_config = {
    '^[^/~][^\\u0000]*$': re.compile('^[^/~][^\\u0000]*\\Z')
}

NoneType = type(None)

def validate_https___repo_memory_dev_schemas_config_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/config.schema.json', 'title': 'repo-memory configuration (.agents/repo-memory.toml)', 'description': 'Every key is optional. Precedence: command-line flag > REPO_MEMORY_<KEY> environment variable > this file > default.', 'type': 'object', 'additionalProperties': False, 'properties': {'review': {'description': 'required: skills an agent writes start as drafts until a person accepts them; optional: they start active.', 'enum': ['required', 'optional'], 'default': 'required'}, 'commit': {'description': 'auto: the server commits memory paths itself on the checked-out branch; private: it commits them to refs/memory/<branch>, never touching the branch or the index; stage: it stages them; off: files only.', 'enum': ['auto', 'private', 'stage', 'off'], 'default': 'auto'}, 'sign': {'description': "auto: memory commits follow commit.gpgSign, bounded to 15 s so a missing agent cannot hang a write; never: memory commits are unsigned, when the person says so (REPO_MEMORY_SIGN=never, or `git config repo-memory.sign never`); this file's never is not followed while the person's git signs their commits, since anyone who commits can write it.", 'enum': ['auto', 'never'], 'default': 'auto'}, 'author': {'description': 'Author of memory commits where git knows no one (no user.name or user.email: a CI container, a fresh machine); a file anyone who commits can write never stands in for the person git knows (REPO_MEMORY_AUTHOR, set by the person, does). The committer is repo-memory.', 'type': 'object', 'additionalProperties': False, 'properties': {'name': {'type': 'string'}, 'email': {'type': 'string'}}}, 'commit_window_seconds': {'description': 'Writes within this many seconds are coalesced into one commit.', 'type': 'number', 'minimum': 0, 'maximum': 3600, 'default': 2}, 'writes_per_minute': {'description': 'How many memory writes (skill_write, remember, checkpoint, loop_step) one server accepts from agents per minute, as a bucket that refills evenly; a runaway writer gets an error saying when to retry. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 120}, 'write_bytes_per_minute': {'description': 'How many bytes of arguments (JSON) the writing tools of one server accept from agents per minute, refilled evenly; one call larger than this is refused. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 1073741824, 'default': 8388608}, 'write_bytes_per_session': {'description': 'How many bytes the writing tools of one server (one harness session) accept from agents in all. 0 turns the limit off.', 'type': 'integer', 'minimum': 0, 'maximum': 17179869184, 'default': 67108864}, 'semantic': {'description': 'true: recall fuses full-text ranking with similarity of meaning (an embedding model bundled with repo-memory; vectors are computed in the background and kept in the git dir); false: full-text ranking only, and nothing is embedded.', 'type': 'boolean', 'default': True}, 'decay_half_life_days': {'description': 'Recall ranks a skill nobody used (or changed) for this many days 10% lower than a fresh one, approaching 20% lower as it ages further; 0 turns decay off. Utility from outcomes is not affected.', 'type': 'number', 'minimum': 0, 'maximum': 36500, 'default': 90}, 'mirror_limit': {'description': 'At most this many skills are copied into .claude/skills (sync, setup claude-code, accept), the most useful first: Claude Code lists every skill there on every request, so past this the rest are left to recall, which serves them ranked.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 40}, 'recall_limit': {'description': 'Default number of hits recall returns.', 'type': 'integer', 'minimum': 1, 'maximum': 50, 'default': 8}, 'inline_max_bytes': {'description': 'Experience content larger than this goes to .agents/experience/blobs/<sha256>; the record keeps a preview and the hash.', 'type': 'integer', 'minimum': 1024, 'maximum': 8388608, 'default': 65536}, 'tool_output_blobs': {'description': 'Whether a hook keeps the whole output of a tool call whose record holds only its first 2,000 characters of text, as a blob of .agents/experience/blobs/ (a file read as HEAD holds it is kept by git, never in a blob); false: the record says how long the output was.', 'type': 'boolean', 'default': True}, 'skill_dirs': {'description': 'Folders (relative to the repository root) read for skills besides .agents/skills.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^/~][^\\u0000]*$'}, 'default': ['.claude/skills', '.codex/skills']}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "review" in data_keys:
            data_keys.remove("review")
            data__review = data["review"]
            if not (isinstance(data__review, str) and data__review == 'required' or isinstance(data__review, str) and data__review == 'optional'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".review must be one of ['required', 'optional']", value=data__review, name="" + (name_prefix or "data") + ".review", definition={'description': 'required: skills an agent writes start as drafts until a person accepts them; optional: they start active.', 'enum': ['required', 'optional'], 'default': 'required'}, rule='enum')
        if "commit" in data_keys:
            data_keys.remove("commit")
            data__commit = data["commit"]
            if not (isinstance(data__commit, str) and data__commit == 'auto' or isinstance(data__commit, str) and data__commit == 'private' or isinstance(data__commit, str) and data__commit == 'stage' or isinstance(data__commit, str) and data__commit == 'off'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".commit must be one of ['auto', 'private', 'stage', 'off']", value=data__commit, name="" + (name_prefix or "data") + ".commit", definition={'description': 'auto: the server commits memory paths itself on the checked-out branch; private: it commits them to refs/memory/<branch>, never touching the branch or the index; stage: it stages them; off: files only.', 'enum': ['auto', 'private', 'stage', 'off'], 'default': 'auto'}, rule='enum')
        if "sign" in data_keys:
            data_keys.remove("sign")
            data__sign = data["sign"]
            if not (isinstance(data__sign, str) and data__sign == 'auto' or isinstance(data__sign, str) and data__sign == 'never'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".sign must be one of ['auto', 'never']", value=data__sign, name="" + (name_prefix or "data") + ".sign", definition={'description': "auto: memory commits follow commit.gpgSign, bounded to 15 s so a missing agent cannot hang a write; never: memory commits are unsigned, when the person says so (REPO_MEMORY_SIGN=never, or `git config repo-memory.sign never`); this file's never is not followed while the person's git signs their commits, since anyone who commits can write it.", 'enum': ['auto', 'never'], 'default': 'auto'}, rule='enum')
        if "author" in data_keys:
            data_keys.remove("author")
            data__author = data["author"]
            if not isinstance(data__author, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".author must be object", value=data__author, name="" + (name_prefix or "data") + ".author", definition={'description': 'Author of memory commits where git knows no one (no user.name or user.email: a CI container, a fresh machine); a file anyone who commits can write never stands in for the person git knows (REPO_MEMORY_AUTHOR, set by the person, does). The committer is repo-memory.', 'type': 'object', 'additionalProperties': False, 'properties': {'name': {'type': 'string'}, 'email': {'type': 'string'}}}, rule='type')
            data__author_is_dict = isinstance(data__author, dict)
            if data__author_is_dict:
                data__author_keys = set(data__author.keys())
                if "name" in data__author_keys:
                    data__author_keys.remove("name")
                    data__author__name = data__author["name"]
                    if not isinstance(data__author__name, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".author.name must be string", value=data__author__name, name="" + (name_prefix or "data") + ".author.name", definition={'type': 'string'}, rule='type')
                if "email" in data__author_keys:
                    data__author_keys.remove("email")
                    data__author__email = data__author["email"]
                    if not isinstance(data__author__email, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".author.email must be string", value=data__author__email, name="" + (name_prefix or "data") + ".author.email", definition={'type': 'string'}, rule='type')
                if data__author_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".author must not contain "+str(data__author_keys)+" properties", value=data__author, name="" + (name_prefix or "data") + ".author", definition={'description': 'Author of memory commits where git knows no one (no user.name or user.email: a CI container, a fresh machine); a file anyone who commits can write never stands in for the person git knows (REPO_MEMORY_AUTHOR, set by the person, does). The committer is repo-memory.', 'type': 'object', 'additionalProperties': False, 'properties': {'name': {'type': 'string'}, 'email': {'type': 'string'}}}, rule='additionalProperties')
        if "commit_window_seconds" in data_keys:
            data_keys.remove("commit_window_seconds")
            data__commitwindowseconds = data["commit_window_seconds"]
            if not isinstance(data__commitwindowseconds, (int, float, Decimal)) or isinstance(data__commitwindowseconds, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".commit_window_seconds must be number", value=data__commitwindowseconds, name="" + (name_prefix or "data") + ".commit_window_seconds", definition={'description': 'Writes within this many seconds are coalesced into one commit.', 'type': 'number', 'minimum': 0, 'maximum': 3600, 'default': 2}, rule='type')
            if isinstance(data__commitwindowseconds, (int, float, Decimal)) and not isinstance(data__commitwindowseconds, bool):
                if data__commitwindowseconds < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".commit_window_seconds must be bigger than or equal to 0", value=data__commitwindowseconds, name="" + (name_prefix or "data") + ".commit_window_seconds", definition={'description': 'Writes within this many seconds are coalesced into one commit.', 'type': 'number', 'minimum': 0, 'maximum': 3600, 'default': 2}, rule='minimum')
                if data__commitwindowseconds > 3600:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".commit_window_seconds must be smaller than or equal to 3600", value=data__commitwindowseconds, name="" + (name_prefix or "data") + ".commit_window_seconds", definition={'description': 'Writes within this many seconds are coalesced into one commit.', 'type': 'number', 'minimum': 0, 'maximum': 3600, 'default': 2}, rule='maximum')
        if "writes_per_minute" in data_keys:
            data_keys.remove("writes_per_minute")
            data__writesperminute = data["writes_per_minute"]
            if not isinstance(data__writesperminute, (int)) and not (isinstance(data__writesperminute, float) and data__writesperminute.is_integer()) or isinstance(data__writesperminute, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".writes_per_minute must be integer", value=data__writesperminute, name="" + (name_prefix or "data") + ".writes_per_minute", definition={'description': 'How many memory writes (skill_write, remember, checkpoint, loop_step) one server accepts from agents per minute, as a bucket that refills evenly; a runaway writer gets an error saying when to retry. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 120}, rule='type')
            if isinstance(data__writesperminute, (int, float, Decimal)) and not isinstance(data__writesperminute, bool):
                if data__writesperminute < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".writes_per_minute must be bigger than or equal to 0", value=data__writesperminute, name="" + (name_prefix or "data") + ".writes_per_minute", definition={'description': 'How many memory writes (skill_write, remember, checkpoint, loop_step) one server accepts from agents per minute, as a bucket that refills evenly; a runaway writer gets an error saying when to retry. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 120}, rule='minimum')
                if data__writesperminute > 100000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".writes_per_minute must be smaller than or equal to 100000", value=data__writesperminute, name="" + (name_prefix or "data") + ".writes_per_minute", definition={'description': 'How many memory writes (skill_write, remember, checkpoint, loop_step) one server accepts from agents per minute, as a bucket that refills evenly; a runaway writer gets an error saying when to retry. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 120}, rule='maximum')
        if "write_bytes_per_minute" in data_keys:
            data_keys.remove("write_bytes_per_minute")
            data__writebytesperminute = data["write_bytes_per_minute"]
            if not isinstance(data__writebytesperminute, (int)) and not (isinstance(data__writebytesperminute, float) and data__writebytesperminute.is_integer()) or isinstance(data__writebytesperminute, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_minute must be integer", value=data__writebytesperminute, name="" + (name_prefix or "data") + ".write_bytes_per_minute", definition={'description': 'How many bytes of arguments (JSON) the writing tools of one server accept from agents per minute, refilled evenly; one call larger than this is refused. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 1073741824, 'default': 8388608}, rule='type')
            if isinstance(data__writebytesperminute, (int, float, Decimal)) and not isinstance(data__writebytesperminute, bool):
                if data__writebytesperminute < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_minute must be bigger than or equal to 0", value=data__writebytesperminute, name="" + (name_prefix or "data") + ".write_bytes_per_minute", definition={'description': 'How many bytes of arguments (JSON) the writing tools of one server accept from agents per minute, refilled evenly; one call larger than this is refused. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 1073741824, 'default': 8388608}, rule='minimum')
                if data__writebytesperminute > 1073741824:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_minute must be smaller than or equal to 1073741824", value=data__writebytesperminute, name="" + (name_prefix or "data") + ".write_bytes_per_minute", definition={'description': 'How many bytes of arguments (JSON) the writing tools of one server accept from agents per minute, refilled evenly; one call larger than this is refused. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 1073741824, 'default': 8388608}, rule='maximum')
        if "write_bytes_per_session" in data_keys:
            data_keys.remove("write_bytes_per_session")
            data__writebytespersession = data["write_bytes_per_session"]
            if not isinstance(data__writebytespersession, (int)) and not (isinstance(data__writebytespersession, float) and data__writebytespersession.is_integer()) or isinstance(data__writebytespersession, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_session must be integer", value=data__writebytespersession, name="" + (name_prefix or "data") + ".write_bytes_per_session", definition={'description': 'How many bytes the writing tools of one server (one harness session) accept from agents in all. 0 turns the limit off.', 'type': 'integer', 'minimum': 0, 'maximum': 17179869184, 'default': 67108864}, rule='type')
            if isinstance(data__writebytespersession, (int, float, Decimal)) and not isinstance(data__writebytespersession, bool):
                if data__writebytespersession < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_session must be bigger than or equal to 0", value=data__writebytespersession, name="" + (name_prefix or "data") + ".write_bytes_per_session", definition={'description': 'How many bytes the writing tools of one server (one harness session) accept from agents in all. 0 turns the limit off.', 'type': 'integer', 'minimum': 0, 'maximum': 17179869184, 'default': 67108864}, rule='minimum')
                if data__writebytespersession > 17179869184:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".write_bytes_per_session must be smaller than or equal to 17179869184", value=data__writebytespersession, name="" + (name_prefix or "data") + ".write_bytes_per_session", definition={'description': 'How many bytes the writing tools of one server (one harness session) accept from agents in all. 0 turns the limit off.', 'type': 'integer', 'minimum': 0, 'maximum': 17179869184, 'default': 67108864}, rule='maximum')
        if "semantic" in data_keys:
            data_keys.remove("semantic")
            data__semantic = data["semantic"]
            if not isinstance(data__semantic, (bool)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".semantic must be boolean", value=data__semantic, name="" + (name_prefix or "data") + ".semantic", definition={'description': 'true: recall fuses full-text ranking with similarity of meaning (an embedding model bundled with repo-memory; vectors are computed in the background and kept in the git dir); false: full-text ranking only, and nothing is embedded.', 'type': 'boolean', 'default': True}, rule='type')
        if "decay_half_life_days" in data_keys:
            data_keys.remove("decay_half_life_days")
            data__decayhalflifedays = data["decay_half_life_days"]
            if not isinstance(data__decayhalflifedays, (int, float, Decimal)) or isinstance(data__decayhalflifedays, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".decay_half_life_days must be number", value=data__decayhalflifedays, name="" + (name_prefix or "data") + ".decay_half_life_days", definition={'description': 'Recall ranks a skill nobody used (or changed) for this many days 10% lower than a fresh one, approaching 20% lower as it ages further; 0 turns decay off. Utility from outcomes is not affected.', 'type': 'number', 'minimum': 0, 'maximum': 36500, 'default': 90}, rule='type')
            if isinstance(data__decayhalflifedays, (int, float, Decimal)) and not isinstance(data__decayhalflifedays, bool):
                if data__decayhalflifedays < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".decay_half_life_days must be bigger than or equal to 0", value=data__decayhalflifedays, name="" + (name_prefix or "data") + ".decay_half_life_days", definition={'description': 'Recall ranks a skill nobody used (or changed) for this many days 10% lower than a fresh one, approaching 20% lower as it ages further; 0 turns decay off. Utility from outcomes is not affected.', 'type': 'number', 'minimum': 0, 'maximum': 36500, 'default': 90}, rule='minimum')
                if data__decayhalflifedays > 36500:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".decay_half_life_days must be smaller than or equal to 36500", value=data__decayhalflifedays, name="" + (name_prefix or "data") + ".decay_half_life_days", definition={'description': 'Recall ranks a skill nobody used (or changed) for this many days 10% lower than a fresh one, approaching 20% lower as it ages further; 0 turns decay off. Utility from outcomes is not affected.', 'type': 'number', 'minimum': 0, 'maximum': 36500, 'default': 90}, rule='maximum')
        if "mirror_limit" in data_keys:
            data_keys.remove("mirror_limit")
            data__mirrorlimit = data["mirror_limit"]
            if not isinstance(data__mirrorlimit, (int)) and not (isinstance(data__mirrorlimit, float) and data__mirrorlimit.is_integer()) or isinstance(data__mirrorlimit, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".mirror_limit must be integer", value=data__mirrorlimit, name="" + (name_prefix or "data") + ".mirror_limit", definition={'description': 'At most this many skills are copied into .claude/skills (sync, setup claude-code, accept), the most useful first: Claude Code lists every skill there on every request, so past this the rest are left to recall, which serves them ranked.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 40}, rule='type')
            if isinstance(data__mirrorlimit, (int, float, Decimal)) and not isinstance(data__mirrorlimit, bool):
                if data__mirrorlimit < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".mirror_limit must be bigger than or equal to 0", value=data__mirrorlimit, name="" + (name_prefix or "data") + ".mirror_limit", definition={'description': 'At most this many skills are copied into .claude/skills (sync, setup claude-code, accept), the most useful first: Claude Code lists every skill there on every request, so past this the rest are left to recall, which serves them ranked.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 40}, rule='minimum')
                if data__mirrorlimit > 100000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".mirror_limit must be smaller than or equal to 100000", value=data__mirrorlimit, name="" + (name_prefix or "data") + ".mirror_limit", definition={'description': 'At most this many skills are copied into .claude/skills (sync, setup claude-code, accept), the most useful first: Claude Code lists every skill there on every request, so past this the rest are left to recall, which serves them ranked.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 40}, rule='maximum')
        if "recall_limit" in data_keys:
            data_keys.remove("recall_limit")
            data__recalllimit = data["recall_limit"]
            if not isinstance(data__recalllimit, (int)) and not (isinstance(data__recalllimit, float) and data__recalllimit.is_integer()) or isinstance(data__recalllimit, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".recall_limit must be integer", value=data__recalllimit, name="" + (name_prefix or "data") + ".recall_limit", definition={'description': 'Default number of hits recall returns.', 'type': 'integer', 'minimum': 1, 'maximum': 50, 'default': 8}, rule='type')
            if isinstance(data__recalllimit, (int, float, Decimal)) and not isinstance(data__recalllimit, bool):
                if data__recalllimit < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".recall_limit must be bigger than or equal to 1", value=data__recalllimit, name="" + (name_prefix or "data") + ".recall_limit", definition={'description': 'Default number of hits recall returns.', 'type': 'integer', 'minimum': 1, 'maximum': 50, 'default': 8}, rule='minimum')
                if data__recalllimit > 50:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".recall_limit must be smaller than or equal to 50", value=data__recalllimit, name="" + (name_prefix or "data") + ".recall_limit", definition={'description': 'Default number of hits recall returns.', 'type': 'integer', 'minimum': 1, 'maximum': 50, 'default': 8}, rule='maximum')
        if "inline_max_bytes" in data_keys:
            data_keys.remove("inline_max_bytes")
            data__inlinemaxbytes = data["inline_max_bytes"]
            if not isinstance(data__inlinemaxbytes, (int)) and not (isinstance(data__inlinemaxbytes, float) and data__inlinemaxbytes.is_integer()) or isinstance(data__inlinemaxbytes, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".inline_max_bytes must be integer", value=data__inlinemaxbytes, name="" + (name_prefix or "data") + ".inline_max_bytes", definition={'description': 'Experience content larger than this goes to .agents/experience/blobs/<sha256>; the record keeps a preview and the hash.', 'type': 'integer', 'minimum': 1024, 'maximum': 8388608, 'default': 65536}, rule='type')
            if isinstance(data__inlinemaxbytes, (int, float, Decimal)) and not isinstance(data__inlinemaxbytes, bool):
                if data__inlinemaxbytes < 1024:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".inline_max_bytes must be bigger than or equal to 1024", value=data__inlinemaxbytes, name="" + (name_prefix or "data") + ".inline_max_bytes", definition={'description': 'Experience content larger than this goes to .agents/experience/blobs/<sha256>; the record keeps a preview and the hash.', 'type': 'integer', 'minimum': 1024, 'maximum': 8388608, 'default': 65536}, rule='minimum')
                if data__inlinemaxbytes > 8388608:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".inline_max_bytes must be smaller than or equal to 8388608", value=data__inlinemaxbytes, name="" + (name_prefix or "data") + ".inline_max_bytes", definition={'description': 'Experience content larger than this goes to .agents/experience/blobs/<sha256>; the record keeps a preview and the hash.', 'type': 'integer', 'minimum': 1024, 'maximum': 8388608, 'default': 65536}, rule='maximum')
        if "tool_output_blobs" in data_keys:
            data_keys.remove("tool_output_blobs")
            data__tooloutputblobs = data["tool_output_blobs"]
            if not isinstance(data__tooloutputblobs, (bool)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".tool_output_blobs must be boolean", value=data__tooloutputblobs, name="" + (name_prefix or "data") + ".tool_output_blobs", definition={'description': 'Whether a hook keeps the whole output of a tool call whose record holds only its first 2,000 characters of text, as a blob of .agents/experience/blobs/ (a file read as HEAD holds it is kept by git, never in a blob); false: the record says how long the output was.', 'type': 'boolean', 'default': True}, rule='type')
        if "skill_dirs" in data_keys:
            data_keys.remove("skill_dirs")
            data__skilldirs = data["skill_dirs"]
            if not isinstance(data__skilldirs, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".skill_dirs must be array", value=data__skilldirs, name="" + (name_prefix or "data") + ".skill_dirs", definition={'description': 'Folders (relative to the repository root) read for skills besides .agents/skills.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^/~][^\\u0000]*$'}, 'default': ['.claude/skills', '.codex/skills']}, rule='type')
            data__skilldirs_is_list = isinstance(data__skilldirs, (list, tuple))
            if data__skilldirs_is_list:
                data__skilldirs_len = len(data__skilldirs)
                for data__skilldirs_x, data__skilldirs_item in enumerate(data__skilldirs):
                    if not isinstance(data__skilldirs_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".skill_dirs[{data__skilldirs_x}]".format(**locals()) + " must be string", value=data__skilldirs_item, name="" + (name_prefix or "data") + ".skill_dirs[{data__skilldirs_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^/~][^\\u0000]*$'}, rule='type')
                    if isinstance(data__skilldirs_item, str):
                        if not REGEX_PATTERNS_config['^[^/~][^\\u0000]*$'].search(data__skilldirs_item):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".skill_dirs[{data__skilldirs_x}]".format(**locals()) + " must match pattern ^[^/~][^\\u0000]*$", value=data__skilldirs_item, name="" + (name_prefix or "data") + ".skill_dirs[{data__skilldirs_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^/~][^\\u0000]*$'}, rule='pattern')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/config.schema.json', 'title': 'repo-memory configuration (.agents/repo-memory.toml)', 'description': 'Every key is optional. Precedence: command-line flag > REPO_MEMORY_<KEY> environment variable > this file > default.', 'type': 'object', 'additionalProperties': False, 'properties': {'review': {'description': 'required: skills an agent writes start as drafts until a person accepts them; optional: they start active.', 'enum': ['required', 'optional'], 'default': 'required'}, 'commit': {'description': 'auto: the server commits memory paths itself on the checked-out branch; private: it commits them to refs/memory/<branch>, never touching the branch or the index; stage: it stages them; off: files only.', 'enum': ['auto', 'private', 'stage', 'off'], 'default': 'auto'}, 'sign': {'description': "auto: memory commits follow commit.gpgSign, bounded to 15 s so a missing agent cannot hang a write; never: memory commits are unsigned, when the person says so (REPO_MEMORY_SIGN=never, or `git config repo-memory.sign never`); this file's never is not followed while the person's git signs their commits, since anyone who commits can write it.", 'enum': ['auto', 'never'], 'default': 'auto'}, 'author': {'description': 'Author of memory commits where git knows no one (no user.name or user.email: a CI container, a fresh machine); a file anyone who commits can write never stands in for the person git knows (REPO_MEMORY_AUTHOR, set by the person, does). The committer is repo-memory.', 'type': 'object', 'additionalProperties': False, 'properties': {'name': {'type': 'string'}, 'email': {'type': 'string'}}}, 'commit_window_seconds': {'description': 'Writes within this many seconds are coalesced into one commit.', 'type': 'number', 'minimum': 0, 'maximum': 3600, 'default': 2}, 'writes_per_minute': {'description': 'How many memory writes (skill_write, remember, checkpoint, loop_step) one server accepts from agents per minute, as a bucket that refills evenly; a runaway writer gets an error saying when to retry. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 120}, 'write_bytes_per_minute': {'description': 'How many bytes of arguments (JSON) the writing tools of one server accept from agents per minute, refilled evenly; one call larger than this is refused. 0 turns the limit off. People (CLI) and hooks are not limited.', 'type': 'integer', 'minimum': 0, 'maximum': 1073741824, 'default': 8388608}, 'write_bytes_per_session': {'description': 'How many bytes the writing tools of one server (one harness session) accept from agents in all. 0 turns the limit off.', 'type': 'integer', 'minimum': 0, 'maximum': 17179869184, 'default': 67108864}, 'semantic': {'description': 'true: recall fuses full-text ranking with similarity of meaning (an embedding model bundled with repo-memory; vectors are computed in the background and kept in the git dir); false: full-text ranking only, and nothing is embedded.', 'type': 'boolean', 'default': True}, 'decay_half_life_days': {'description': 'Recall ranks a skill nobody used (or changed) for this many days 10% lower than a fresh one, approaching 20% lower as it ages further; 0 turns decay off. Utility from outcomes is not affected.', 'type': 'number', 'minimum': 0, 'maximum': 36500, 'default': 90}, 'mirror_limit': {'description': 'At most this many skills are copied into .claude/skills (sync, setup claude-code, accept), the most useful first: Claude Code lists every skill there on every request, so past this the rest are left to recall, which serves them ranked.', 'type': 'integer', 'minimum': 0, 'maximum': 100000, 'default': 40}, 'recall_limit': {'description': 'Default number of hits recall returns.', 'type': 'integer', 'minimum': 1, 'maximum': 50, 'default': 8}, 'inline_max_bytes': {'description': 'Experience content larger than this goes to .agents/experience/blobs/<sha256>; the record keeps a preview and the hash.', 'type': 'integer', 'minimum': 1024, 'maximum': 8388608, 'default': 65536}, 'tool_output_blobs': {'description': 'Whether a hook keeps the whole output of a tool call whose record holds only its first 2,000 characters of text, as a blob of .agents/experience/blobs/ (a file read as HEAD holds it is kept by git, never in a blob); false: the record says how long the output was.', 'type': 'boolean', 'default': True}, 'skill_dirs': {'description': 'Folders (relative to the repository root) read for skills besides .agents/skills.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^/~][^\\u0000]*$'}, 'default': ['.claude/skills', '.codex/skills']}}}, rule='additionalProperties')
    return data
validate_config = validate_https___repo_memory_dev_schemas_config_schema_json

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS_skill = {
    '^[a-z0-9]+(-[a-z0-9]+)*$': re.compile('^[a-z0-9]+(-[a-z0-9]+)*\\Z'),
    '^[^\\s:]\\S*::\\S+$': re.compile('^[^\\s:]\\S*::\\S+\\Z'),
    '^[0-9a-f]{16}$': re.compile('^[0-9a-f]{16}\\Z')
}

NoneType = type(None)

def validate_https___repo_memory_dev_schemas_skill_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/skill.schema.json', 'title': "SKILL.md frontmatter (Agent Skills format, with repo-memory's fields under metadata)", 'description': 'Standard fields: name, description, license, compatibility, allowed-tools, metadata. Other top-level keys that harnesses define are kept untouched.', 'type': 'object', 'required': ['name', 'description'], 'properties': {'name': {'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, 'description': {'description': 'What the skill does and when to use it; at most 1024 characters.', 'type': 'string', 'minLength': 1, 'maxLength': 1024}, 'license': {'type': 'string'}, 'compatibility': {'type': 'string', 'maxLength': 500}, 'allowed-tools': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, 'metadata': {'type': 'object', 'properties': {'status': {'description': 'draft: written by an agent, awaiting review; active: in use; deprecated: kept for history, left out of default recall.', 'enum': ['draft', 'active', 'deprecated']}, 'origin': {'description': 'Who first wrote the skill: human, agent, or a free-form source.', 'type': 'string'}, 'tags': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, 'related': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}]}, 'anchors': {'description': 'Code this skill describes, as path/to/file.py::Class.method; the skill is flagged stale when that code changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}, 'anchor_hashes': {'description': "Set by repo-memory: each anchor's code hash when the skill was last written or checked (comments and formatting ignored).", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}}}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['name', 'description']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/skill.schema.json', 'title': "SKILL.md frontmatter (Agent Skills format, with repo-memory's fields under metadata)", 'description': 'Standard fields: name, description, license, compatibility, allowed-tools, metadata. Other top-level keys that harnesses define are kept untouched.', 'type': 'object', 'required': ['name', 'description'], 'properties': {'name': {'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, 'description': {'description': 'What the skill does and when to use it; at most 1024 characters.', 'type': 'string', 'minLength': 1, 'maxLength': 1024}, 'license': {'type': 'string'}, 'compatibility': {'type': 'string', 'maxLength': 500}, 'allowed-tools': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, 'metadata': {'type': 'object', 'properties': {'status': {'description': 'draft: written by an agent, awaiting review; active: in use; deprecated: kept for history, left out of default recall.', 'enum': ['draft', 'active', 'deprecated']}, 'origin': {'description': 'Who first wrote the skill: human, agent, or a free-form source.', 'type': 'string'}, 'tags': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, 'related': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}]}, 'anchors': {'description': 'Code this skill describes, as path/to/file.py::Class.method; the skill is flagged stale when that code changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}, 'anchor_hashes': {'description': "Set by repo-memory: each anchor's code hash when the skill was last written or checked (comments and formatting ignored).", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}}}}}, rule='required')
        data_keys = set(data.keys())
        if "name" in data_keys:
            data_keys.remove("name")
            data__name = data["name"]
            if not isinstance(data__name, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be string", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='type')
            if isinstance(data__name, str):
                data__name_len = len(data__name)
                if data__name_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be longer than or equal to 1 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='minLength')
                if data__name_len > 64:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be shorter than or equal to 64 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='maxLength')
                if not REGEX_PATTERNS_skill['^[a-z0-9]+(-[a-z0-9]+)*$'].search(data__name):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must match pattern ^[a-z0-9]+(-[a-z0-9]+)*$", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'description': 'ASCII lowercase letters a-z, digits 0-9 and single hyphens; at most 64 characters; equal to the folder name.', 'type': 'string', 'minLength': 1, 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='pattern')
        if "description" in data_keys:
            data_keys.remove("description")
            data__description = data["description"]
            if not isinstance(data__description, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be string", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'description': 'What the skill does and when to use it; at most 1024 characters.', 'type': 'string', 'minLength': 1, 'maxLength': 1024}, rule='type')
            if isinstance(data__description, str):
                data__description_len = len(data__description)
                if data__description_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be longer than or equal to 1 characters", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'description': 'What the skill does and when to use it; at most 1024 characters.', 'type': 'string', 'minLength': 1, 'maxLength': 1024}, rule='minLength')
                if data__description_len > 1024:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be shorter than or equal to 1024 characters", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'description': 'What the skill does and when to use it; at most 1024 characters.', 'type': 'string', 'minLength': 1, 'maxLength': 1024}, rule='maxLength')
        if "license" in data_keys:
            data_keys.remove("license")
            data__license = data["license"]
            if not isinstance(data__license, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".license must be string", value=data__license, name="" + (name_prefix or "data") + ".license", definition={'type': 'string'}, rule='type')
        if "compatibility" in data_keys:
            data_keys.remove("compatibility")
            data__compatibility = data["compatibility"]
            if not isinstance(data__compatibility, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".compatibility must be string", value=data__compatibility, name="" + (name_prefix or "data") + ".compatibility", definition={'type': 'string', 'maxLength': 500}, rule='type')
            if isinstance(data__compatibility, str):
                data__compatibility_len = len(data__compatibility)
                if data__compatibility_len > 500:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".compatibility must be shorter than or equal to 500 characters", value=data__compatibility, name="" + (name_prefix or "data") + ".compatibility", definition={'type': 'string', 'maxLength': 500}, rule='maxLength')
        if "allowed-tools" in data_keys:
            data_keys.remove("allowed-tools")
            data__allowedtools = data["allowed-tools"]
            data__allowedtools_one_of_count1 = 0
            if data__allowedtools_one_of_count1 < 2:
                try:
                    if not isinstance(data__allowedtools, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".allowed-tools must be string", value=data__allowedtools, name="" + (name_prefix or "data") + ".allowed-tools", definition={'type': 'string'}, rule='type')
                    data__allowedtools_one_of_count1 += 1
                except (JsonSchemaValueException, JsonSchemaValuesException): pass
            if data__allowedtools_one_of_count1 < 2:
                try:
                    if not isinstance(data__allowedtools, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".allowed-tools must be array", value=data__allowedtools, name="" + (name_prefix or "data") + ".allowed-tools", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
                    data__allowedtools_is_list = isinstance(data__allowedtools, (list, tuple))
                    if data__allowedtools_is_list:
                        data__allowedtools_len = len(data__allowedtools)
                        for data__allowedtools_x, data__allowedtools_item in enumerate(data__allowedtools):
                            if not isinstance(data__allowedtools_item, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".allowed-tools[{data__allowedtools_x}]".format(**locals()) + " must be string", value=data__allowedtools_item, name="" + (name_prefix or "data") + ".allowed-tools[{data__allowedtools_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                    data__allowedtools_one_of_count1 += 1
                except (JsonSchemaValueException, JsonSchemaValuesException): pass
            if data__allowedtools_one_of_count1 != 1:
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".allowed-tools must be valid exactly by one definition" + (" (" + str(data__allowedtools_one_of_count1) + " matches found)"), value=data__allowedtools, name="" + (name_prefix or "data") + ".allowed-tools", definition={'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, rule='oneOf')
        if "metadata" in data_keys:
            data_keys.remove("metadata")
            data__metadata = data["metadata"]
            if not isinstance(data__metadata, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata must be object", value=data__metadata, name="" + (name_prefix or "data") + ".metadata", definition={'type': 'object', 'properties': {'status': {'description': 'draft: written by an agent, awaiting review; active: in use; deprecated: kept for history, left out of default recall.', 'enum': ['draft', 'active', 'deprecated']}, 'origin': {'description': 'Who first wrote the skill: human, agent, or a free-form source.', 'type': 'string'}, 'tags': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, 'related': {'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}]}, 'anchors': {'description': 'Code this skill describes, as path/to/file.py::Class.method; the skill is flagged stale when that code changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}, 'anchor_hashes': {'description': "Set by repo-memory: each anchor's code hash when the skill was last written or checked (comments and formatting ignored).", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}}}, rule='type')
            data__metadata_is_dict = isinstance(data__metadata, dict)
            if data__metadata_is_dict:
                data__metadata_keys = set(data__metadata.keys())
                if "status" in data__metadata_keys:
                    data__metadata_keys.remove("status")
                    data__metadata__status = data__metadata["status"]
                    if not (isinstance(data__metadata__status, str) and data__metadata__status == 'draft' or isinstance(data__metadata__status, str) and data__metadata__status == 'active' or isinstance(data__metadata__status, str) and data__metadata__status == 'deprecated'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.status must be one of ['draft', 'active', 'deprecated']", value=data__metadata__status, name="" + (name_prefix or "data") + ".metadata.status", definition={'description': 'draft: written by an agent, awaiting review; active: in use; deprecated: kept for history, left out of default recall.', 'enum': ['draft', 'active', 'deprecated']}, rule='enum')
                if "origin" in data__metadata_keys:
                    data__metadata_keys.remove("origin")
                    data__metadata__origin = data__metadata["origin"]
                    if not isinstance(data__metadata__origin, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.origin must be string", value=data__metadata__origin, name="" + (name_prefix or "data") + ".metadata.origin", definition={'description': 'Who first wrote the skill: human, agent, or a free-form source.', 'type': 'string'}, rule='type')
                if "tags" in data__metadata_keys:
                    data__metadata_keys.remove("tags")
                    data__metadata__tags = data__metadata["tags"]
                    data__metadata__tags_one_of_count2 = 0
                    if data__metadata__tags_one_of_count2 < 2:
                        try:
                            if not isinstance(data__metadata__tags, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.tags must be string", value=data__metadata__tags, name="" + (name_prefix or "data") + ".metadata.tags", definition={'type': 'string'}, rule='type')
                            data__metadata__tags_one_of_count2 += 1
                        except (JsonSchemaValueException, JsonSchemaValuesException): pass
                    if data__metadata__tags_one_of_count2 < 2:
                        try:
                            if not isinstance(data__metadata__tags, (list, tuple)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.tags must be array", value=data__metadata__tags, name="" + (name_prefix or "data") + ".metadata.tags", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
                            data__metadata__tags_is_list = isinstance(data__metadata__tags, (list, tuple))
                            if data__metadata__tags_is_list:
                                data__metadata__tags_len = len(data__metadata__tags)
                                for data__metadata__tags_x, data__metadata__tags_item in enumerate(data__metadata__tags):
                                    if not isinstance(data__metadata__tags_item, (str)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.tags[{data__metadata__tags_x}]".format(**locals()) + " must be string", value=data__metadata__tags_item, name="" + (name_prefix or "data") + ".metadata.tags[{data__metadata__tags_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                            data__metadata__tags_one_of_count2 += 1
                        except (JsonSchemaValueException, JsonSchemaValuesException): pass
                    if data__metadata__tags_one_of_count2 != 1:
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.tags must be valid exactly by one definition" + (" (" + str(data__metadata__tags_one_of_count2) + " matches found)"), value=data__metadata__tags, name="" + (name_prefix or "data") + ".metadata.tags", definition={'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}]}, rule='oneOf')
                if "related" in data__metadata_keys:
                    data__metadata_keys.remove("related")
                    data__metadata__related = data__metadata["related"]
                    data__metadata__related_one_of_count3 = 0
                    if data__metadata__related_one_of_count3 < 2:
                        try:
                            if not isinstance(data__metadata__related, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.related must be string", value=data__metadata__related, name="" + (name_prefix or "data") + ".metadata.related", definition={'type': 'string'}, rule='type')
                            data__metadata__related_one_of_count3 += 1
                        except (JsonSchemaValueException, JsonSchemaValuesException): pass
                    if data__metadata__related_one_of_count3 < 2:
                        try:
                            if not isinstance(data__metadata__related, (list, tuple)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.related must be array", value=data__metadata__related, name="" + (name_prefix or "data") + ".metadata.related", definition={'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, rule='type')
                            data__metadata__related_is_list = isinstance(data__metadata__related, (list, tuple))
                            if data__metadata__related_is_list:
                                data__metadata__related_len = len(data__metadata__related)
                                for data__metadata__related_x, data__metadata__related_item in enumerate(data__metadata__related):
                                    if not isinstance(data__metadata__related_item, (str)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.related[{data__metadata__related_x}]".format(**locals()) + " must be string", value=data__metadata__related_item, name="" + (name_prefix or "data") + ".metadata.related[{data__metadata__related_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='type')
                                    if isinstance(data__metadata__related_item, str):
                                        if not REGEX_PATTERNS_skill['^[a-z0-9]+(-[a-z0-9]+)*$'].search(data__metadata__related_item):
                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.related[{data__metadata__related_x}]".format(**locals()) + " must match pattern ^[a-z0-9]+(-[a-z0-9]+)*$", value=data__metadata__related_item, name="" + (name_prefix or "data") + ".metadata.related[{data__metadata__related_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='pattern')
                            data__metadata__related_one_of_count3 += 1
                        except (JsonSchemaValueException, JsonSchemaValuesException): pass
                    if data__metadata__related_one_of_count3 != 1:
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.related must be valid exactly by one definition" + (" (" + str(data__metadata__related_one_of_count3) + " matches found)"), value=data__metadata__related, name="" + (name_prefix or "data") + ".metadata.related", definition={'oneOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}]}, rule='oneOf')
                if "anchors" in data__metadata_keys:
                    data__metadata_keys.remove("anchors")
                    data__metadata__anchors = data__metadata["anchors"]
                    if not isinstance(data__metadata__anchors, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchors must be array", value=data__metadata__anchors, name="" + (name_prefix or "data") + ".metadata.anchors", definition={'description': 'Code this skill describes, as path/to/file.py::Class.method; the skill is flagged stale when that code changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}, rule='type')
                    data__metadata__anchors_is_list = isinstance(data__metadata__anchors, (list, tuple))
                    if data__metadata__anchors_is_list:
                        data__metadata__anchors_len = len(data__metadata__anchors)
                        for data__metadata__anchors_x, data__metadata__anchors_item in enumerate(data__metadata__anchors):
                            if not isinstance(data__metadata__anchors_item, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchors[{data__metadata__anchors_x}]".format(**locals()) + " must be string", value=data__metadata__anchors_item, name="" + (name_prefix or "data") + ".metadata.anchors[{data__metadata__anchors_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}, rule='type')
                            if isinstance(data__metadata__anchors_item, str):
                                if not REGEX_PATTERNS_skill['^[^\\s:]\\S*::\\S+$'].search(data__metadata__anchors_item):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchors[{data__metadata__anchors_x}]".format(**locals()) + " must match pattern ^[^\\s:]\\S*::\\S+$", value=data__metadata__anchors_item, name="" + (name_prefix or "data") + ".metadata.anchors[{data__metadata__anchors_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}, rule='pattern')
                if "anchor_hashes" in data__metadata_keys:
                    data__metadata_keys.remove("anchor_hashes")
                    data__metadata__anchorhashes = data__metadata["anchor_hashes"]
                    if not isinstance(data__metadata__anchorhashes, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchor_hashes must be object", value=data__metadata__anchorhashes, name="" + (name_prefix or "data") + ".metadata.anchor_hashes", definition={'description': "Set by repo-memory: each anchor's code hash when the skill was last written or checked (comments and formatting ignored).", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}, rule='type')
                    data__metadata__anchorhashes_is_dict = isinstance(data__metadata__anchorhashes, dict)
                    if data__metadata__anchorhashes_is_dict:
                        data__metadata__anchorhashes_keys = set(data__metadata__anchorhashes.keys())
                        for data__metadata__anchorhashes_key in data__metadata__anchorhashes_keys:
                            if data__metadata__anchorhashes_key not in []:
                                data__metadata__anchorhashes_value = data__metadata__anchorhashes.get(data__metadata__anchorhashes_key)
                                if not isinstance(data__metadata__anchorhashes_value, (str)):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchor_hashes.{data__metadata__anchorhashes_key}".format(**locals()) + " must be string", value=data__metadata__anchorhashes_value, name="" + (name_prefix or "data") + ".metadata.anchor_hashes.{data__metadata__anchorhashes_key}".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[0-9a-f]{16}$'}, rule='type')
                                if isinstance(data__metadata__anchorhashes_value, str):
                                    if not REGEX_PATTERNS_skill['^[0-9a-f]{16}$'].search(data__metadata__anchorhashes_value):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".metadata.anchor_hashes.{data__metadata__anchorhashes_key}".format(**locals()) + " must match pattern ^[0-9a-f]{16}$", value=data__metadata__anchorhashes_value, name="" + (name_prefix or "data") + ".metadata.anchor_hashes.{data__metadata__anchorhashes_key}".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[0-9a-f]{16}$'}, rule='pattern')
    return data
validate_skill = validate_https___repo_memory_dev_schemas_skill_schema_json

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS_experience = {
    '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$': re.compile('^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*\\Z'),
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$': re.compile('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z\\Z'),
    '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$': re.compile('^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\\Z'),
    '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$': re.compile('^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)\\Z'),
    '^[0-9a-f]{16}$': re.compile('^[0-9a-f]{16}\\Z'),
    '^[0-9a-f]{8}$': re.compile('^[0-9a-f]{8}\\Z'),
    '^[0-9a-f]{64}$': re.compile('^[0-9a-f]{64}\\Z'),
    '^[0-9a-f]{32}$': re.compile('^[0-9a-f]{32}\\Z')
}

NoneType = type(None)

def validate_https___repo_memory_dev_schemas_experience_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/experience.schema.json', 'title': 'One experience record: a line of .agents/experience/<YYYY-MM>/<session>.jsonl', 'description': "Append-only. sha256 is the hash of the record's canonical JSON without the sha256 field; prev is the sha256 of the previous record in the same file (null for the first), so the file is a hash chain.", 'type': 'object', 'required': ['id', 'ts', 'session', 'seq', 'kind', 'refs', 'source', 'sha256', 'prev'], 'additionalProperties': False, 'properties': {'id': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'}, 'ts': {'type': 'string', 'pattern': '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'}, 'session': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'}, 'seq': {'type': 'integer', 'minimum': 1}, 'kind': {'type': 'string', 'pattern': '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'}, 'text': {'type': 'string'}, 'data': {'description': 'Structured details, kept and returned by read as written. Recall indexes the words of the text, not of data: bookkeeping (ids, hashes, flags) would otherwise match questions. The exceptions are the keys below marked x-searchable (indexed with the text), speaker (who said it; its own field in the index) and when or date (the time the record is about; relative times in the text are read from it). A record with no text is indexed by its data.', 'properties': {'speaker': {'description': "Who said it: a person's name. Without it, the record's actor (human or agent) stands in."}, 'when': {'description': "The time the record is about, in the records' UTC form; the record's ts is when it was written."}, 'date': {'description': "The time the record is about as its source wrote it (an import's own date text)."}, 'input': {'x-searchable': True, 'description': "A tool call's input, as a hook recorded it."}, 'output_text': {'x-searchable': True, 'description': "The text of a tool call's output as a hook recorded it: the strings it returned (not the harness's field names, flags or counts), its first 2,000 characters. output_chars is the whole text's length when it is longer; the whole output is then in output_blob (a blob of the response), or output_file ({path, git_blob}: a file read as HEAD held it) when git keeps it."}, 'output_excerpt': {'x-searchable': True, 'description': "The opening of a tool call's output as hooks recorded it before output_text: the JSON of a structured response. Its strings are indexed, not its field names."}}}, 'refs': {'type': 'array', 'items': {'type': 'string'}}, 'covers': {'description': 'For summaries: the ids and ranges (session#10-42) it compresses.', 'type': 'array', 'items': {'type': 'string'}}, 'anchors': {'description': "Set by the server for refs that cite code (path::Symbol): each one's code hash when the record was written.", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}, 'source': {'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, 'blob': {'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, 'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'mac': {'type': 'string', 'pattern': '^[0-9a-f]{32}$', 'description': "Set by repo-memory: an HMAC of sha256 under the writing clone's key (kept outside the repository), so what the server wrote can be told from a record re-hashed by hand."}, 'prev': {'type': ['string', 'null'], 'pattern': '^[0-9a-f]{64}$'}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['id', 'ts', 'session', 'seq', 'kind', 'refs', 'source', 'sha256', 'prev']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/experience.schema.json', 'title': 'One experience record: a line of .agents/experience/<YYYY-MM>/<session>.jsonl', 'description': "Append-only. sha256 is the hash of the record's canonical JSON without the sha256 field; prev is the sha256 of the previous record in the same file (null for the first), so the file is a hash chain.", 'type': 'object', 'required': ['id', 'ts', 'session', 'seq', 'kind', 'refs', 'source', 'sha256', 'prev'], 'additionalProperties': False, 'properties': {'id': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'}, 'ts': {'type': 'string', 'pattern': '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'}, 'session': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'}, 'seq': {'type': 'integer', 'minimum': 1}, 'kind': {'type': 'string', 'pattern': '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'}, 'text': {'type': 'string'}, 'data': {'description': 'Structured details, kept and returned by read as written. Recall indexes the words of the text, not of data: bookkeeping (ids, hashes, flags) would otherwise match questions. The exceptions are the keys below marked x-searchable (indexed with the text), speaker (who said it; its own field in the index) and when or date (the time the record is about; relative times in the text are read from it). A record with no text is indexed by its data.', 'properties': {'speaker': {'description': "Who said it: a person's name. Without it, the record's actor (human or agent) stands in."}, 'when': {'description': "The time the record is about, in the records' UTC form; the record's ts is when it was written."}, 'date': {'description': "The time the record is about as its source wrote it (an import's own date text)."}, 'input': {'x-searchable': True, 'description': "A tool call's input, as a hook recorded it."}, 'output_text': {'x-searchable': True, 'description': "The text of a tool call's output as a hook recorded it: the strings it returned (not the harness's field names, flags or counts), its first 2,000 characters. output_chars is the whole text's length when it is longer; the whole output is then in output_blob (a blob of the response), or output_file ({path, git_blob}: a file read as HEAD held it) when git keeps it."}, 'output_excerpt': {'x-searchable': True, 'description': "The opening of a tool call's output as hooks recorded it before output_text: the JSON of a structured response. Its strings are indexed, not its field names."}}}, 'refs': {'type': 'array', 'items': {'type': 'string'}}, 'covers': {'description': 'For summaries: the ids and ranges (session#10-42) it compresses.', 'type': 'array', 'items': {'type': 'string'}}, 'anchors': {'description': "Set by the server for refs that cite code (path::Symbol): each one's code hash when the record was written.", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}, 'source': {'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, 'blob': {'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, 'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'mac': {'type': 'string', 'pattern': '^[0-9a-f]{32}$', 'description': "Set by repo-memory: an HMAC of sha256 under the writing clone's key (kept outside the repository), so what the server wrote can be told from a record re-hashed by hand."}, 'prev': {'type': ['string', 'null'], 'pattern': '^[0-9a-f]{64}$'}}}, rule='required')
        data_keys = set(data.keys())
        if "id" in data_keys:
            data_keys.remove("id")
            data__id = data["id"]
            if not isinstance(data__id, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".id must be string", value=data__id, name="" + (name_prefix or "data") + ".id", definition={'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'}, rule='type')
            if isinstance(data__id, str):
                if not REGEX_PATTERNS_experience['^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'].search(data__id):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".id must match pattern ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$", value=data__id, name="" + (name_prefix or "data") + ".id", definition={'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'}, rule='pattern')
        if "ts" in data_keys:
            data_keys.remove("ts")
            data__ts = data["ts"]
            if not isinstance(data__ts, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".ts must be string", value=data__ts, name="" + (name_prefix or "data") + ".ts", definition={'type': 'string', 'pattern': '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'}, rule='type')
            if isinstance(data__ts, str):
                if not REGEX_PATTERNS_experience['^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'].search(data__ts):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".ts must match pattern ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$", value=data__ts, name="" + (name_prefix or "data") + ".ts", definition={'type': 'string', 'pattern': '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'}, rule='pattern')
        if "session" in data_keys:
            data_keys.remove("session")
            data__session = data["session"]
            if not isinstance(data__session, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".session must be string", value=data__session, name="" + (name_prefix or "data") + ".session", definition={'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'}, rule='type')
            if isinstance(data__session, str):
                if not REGEX_PATTERNS_experience['^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'].search(data__session):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".session must match pattern ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", value=data__session, name="" + (name_prefix or "data") + ".session", definition={'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'}, rule='pattern')
        if "seq" in data_keys:
            data_keys.remove("seq")
            data__seq = data["seq"]
            if not isinstance(data__seq, (int)) and not (isinstance(data__seq, float) and data__seq.is_integer()) or isinstance(data__seq, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".seq must be integer", value=data__seq, name="" + (name_prefix or "data") + ".seq", definition={'type': 'integer', 'minimum': 1}, rule='type')
            if isinstance(data__seq, (int, float, Decimal)) and not isinstance(data__seq, bool):
                if data__seq < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".seq must be bigger than or equal to 1", value=data__seq, name="" + (name_prefix or "data") + ".seq", definition={'type': 'integer', 'minimum': 1}, rule='minimum')
        if "kind" in data_keys:
            data_keys.remove("kind")
            data__kind = data["kind"]
            if not isinstance(data__kind, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind must be string", value=data__kind, name="" + (name_prefix or "data") + ".kind", definition={'type': 'string', 'pattern': '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'}, rule='type')
            if isinstance(data__kind, str):
                if not REGEX_PATTERNS_experience['^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'].search(data__kind):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind must match pattern ^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$", value=data__kind, name="" + (name_prefix or "data") + ".kind", definition={'type': 'string', 'pattern': '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'}, rule='pattern')
        if "text" in data_keys:
            data_keys.remove("text")
            data__text = data["text"]
            if not isinstance(data__text, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".text must be string", value=data__text, name="" + (name_prefix or "data") + ".text", definition={'type': 'string'}, rule='type')
        if "data" in data_keys:
            data_keys.remove("data")
            data__data = data["data"]
            data__data_is_dict = isinstance(data__data, dict)
            if data__data_is_dict:
                data__data_keys = set(data__data.keys())
                if "speaker" in data__data_keys:
                    data__data_keys.remove("speaker")
                    data__data__speaker = data__data["speaker"]
                if "when" in data__data_keys:
                    data__data_keys.remove("when")
                    data__data__when = data__data["when"]
                if "date" in data__data_keys:
                    data__data_keys.remove("date")
                    data__data__date = data__data["date"]
                if "input" in data__data_keys:
                    data__data_keys.remove("input")
                    data__data__input = data__data["input"]
                if "output_text" in data__data_keys:
                    data__data_keys.remove("output_text")
                    data__data__outputtext = data__data["output_text"]
                if "output_excerpt" in data__data_keys:
                    data__data_keys.remove("output_excerpt")
                    data__data__outputexcerpt = data__data["output_excerpt"]
        if "refs" in data_keys:
            data_keys.remove("refs")
            data__refs = data["refs"]
            if not isinstance(data__refs, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".refs must be array", value=data__refs, name="" + (name_prefix or "data") + ".refs", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__refs_is_list = isinstance(data__refs, (list, tuple))
            if data__refs_is_list:
                data__refs_len = len(data__refs)
                for data__refs_x, data__refs_item in enumerate(data__refs):
                    if not isinstance(data__refs_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".refs[{data__refs_x}]".format(**locals()) + " must be string", value=data__refs_item, name="" + (name_prefix or "data") + ".refs[{data__refs_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "covers" in data_keys:
            data_keys.remove("covers")
            data__covers = data["covers"]
            if not isinstance(data__covers, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".covers must be array", value=data__covers, name="" + (name_prefix or "data") + ".covers", definition={'description': 'For summaries: the ids and ranges (session#10-42) it compresses.', 'type': 'array', 'items': {'type': 'string'}}, rule='type')
            data__covers_is_list = isinstance(data__covers, (list, tuple))
            if data__covers_is_list:
                data__covers_len = len(data__covers)
                for data__covers_x, data__covers_item in enumerate(data__covers):
                    if not isinstance(data__covers_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".covers[{data__covers_x}]".format(**locals()) + " must be string", value=data__covers_item, name="" + (name_prefix or "data") + ".covers[{data__covers_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "anchors" in data_keys:
            data_keys.remove("anchors")
            data__anchors = data["anchors"]
            if not isinstance(data__anchors, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".anchors must be object", value=data__anchors, name="" + (name_prefix or "data") + ".anchors", definition={'description': "Set by the server for refs that cite code (path::Symbol): each one's code hash when the record was written.", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}, rule='type')
            data__anchors_is_dict = isinstance(data__anchors, dict)
            if data__anchors_is_dict:
                data__anchors_keys = set(data__anchors.keys())
                for data__anchors_key in data__anchors_keys:
                    if data__anchors_key not in []:
                        data__anchors_value = data__anchors.get(data__anchors_key)
                        if not isinstance(data__anchors_value, (str)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".anchors.{data__anchors_key}".format(**locals()) + " must be string", value=data__anchors_value, name="" + (name_prefix or "data") + ".anchors.{data__anchors_key}".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[0-9a-f]{16}$'}, rule='type')
                        if isinstance(data__anchors_value, str):
                            if not REGEX_PATTERNS_experience['^[0-9a-f]{16}$'].search(data__anchors_value):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".anchors.{data__anchors_key}".format(**locals()) + " must match pattern ^[0-9a-f]{16}$", value=data__anchors_value, name="" + (name_prefix or "data") + ".anchors.{data__anchors_key}".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[0-9a-f]{16}$'}, rule='pattern')
        if "source" in data_keys:
            data_keys.remove("source")
            data__source = data["source"]
            if not isinstance(data__source, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".source must be object", value=data__source, name="" + (name_prefix or "data") + ".source", definition={'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, rule='type')
            data__source_is_dict = isinstance(data__source, dict)
            if data__source_is_dict:
                data__source__missing_keys = set(['actor']) - data__source.keys()
                if data__source__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source must contain " + (str(sorted(data__source__missing_keys)) + " properties"), value=data__source, name="" + (name_prefix or "data") + ".source", definition={'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, rule='required')
                data__source_keys = set(data__source.keys())
                if "actor" in data__source_keys:
                    data__source_keys.remove("actor")
                    data__source__actor = data__source["actor"]
                    if not (isinstance(data__source__actor, str) and data__source__actor == 'human' or isinstance(data__source__actor, str) and data__source__actor == 'agent'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".source.actor must be one of ['human', 'agent']", value=data__source__actor, name="" + (name_prefix or "data") + ".source.actor", definition={'enum': ['human', 'agent']}, rule='enum')
                if "harness" in data__source_keys:
                    data__source_keys.remove("harness")
                    data__source__harness = data__source["harness"]
                    if not isinstance(data__source__harness, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".source.harness must be string", value=data__source__harness, name="" + (name_prefix or "data") + ".source.harness", definition={'type': 'string'}, rule='type')
                if "tool" in data__source_keys:
                    data__source_keys.remove("tool")
                    data__source__tool = data__source["tool"]
                    if not isinstance(data__source__tool, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".source.tool must be string", value=data__source__tool, name="" + (name_prefix or "data") + ".source.tool", definition={'type': 'string'}, rule='type')
                if "clone" in data__source_keys:
                    data__source_keys.remove("clone")
                    data__source__clone = data__source["clone"]
                    if not isinstance(data__source__clone, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".source.clone must be string", value=data__source__clone, name="" + (name_prefix or "data") + ".source.clone", definition={'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}, rule='type')
                    if isinstance(data__source__clone, str):
                        if not REGEX_PATTERNS_experience['^[0-9a-f]{8}$'].search(data__source__clone):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".source.clone must match pattern ^[0-9a-f]{8}$", value=data__source__clone, name="" + (name_prefix or "data") + ".source.clone", definition={'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}, rule='pattern')
                if data__source_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".source must not contain "+str(data__source_keys)+" properties", value=data__source, name="" + (name_prefix or "data") + ".source", definition={'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, rule='additionalProperties')
        if "blob" in data_keys:
            data_keys.remove("blob")
            data__blob = data["blob"]
            if not isinstance(data__blob, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob must be object", value=data__blob, name="" + (name_prefix or "data") + ".blob", definition={'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, rule='type')
            data__blob_is_dict = isinstance(data__blob, dict)
            if data__blob_is_dict:
                data__blob__missing_keys = set(['sha256', 'bytes', 'field']) - data__blob.keys()
                if data__blob__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob must contain " + (str(sorted(data__blob__missing_keys)) + " properties"), value=data__blob, name="" + (name_prefix or "data") + ".blob", definition={'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, rule='required')
                data__blob_keys = set(data__blob.keys())
                if "sha256" in data__blob_keys:
                    data__blob_keys.remove("sha256")
                    data__blob__sha256 = data__blob["sha256"]
                    if not isinstance(data__blob__sha256, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob.sha256 must be string", value=data__blob__sha256, name="" + (name_prefix or "data") + ".blob.sha256", definition={'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, rule='type')
                    if isinstance(data__blob__sha256, str):
                        if not REGEX_PATTERNS_experience['^[0-9a-f]{64}$'].search(data__blob__sha256):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob.sha256 must match pattern ^[0-9a-f]{64}$", value=data__blob__sha256, name="" + (name_prefix or "data") + ".blob.sha256", definition={'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, rule='pattern')
                if "bytes" in data__blob_keys:
                    data__blob_keys.remove("bytes")
                    data__blob__bytes = data__blob["bytes"]
                    if not isinstance(data__blob__bytes, (int)) and not (isinstance(data__blob__bytes, float) and data__blob__bytes.is_integer()) or isinstance(data__blob__bytes, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob.bytes must be integer", value=data__blob__bytes, name="" + (name_prefix or "data") + ".blob.bytes", definition={'type': 'integer', 'minimum': 0}, rule='type')
                    if isinstance(data__blob__bytes, (int, float, Decimal)) and not isinstance(data__blob__bytes, bool):
                        if data__blob__bytes < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob.bytes must be bigger than or equal to 0", value=data__blob__bytes, name="" + (name_prefix or "data") + ".blob.bytes", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
                if "field" in data__blob_keys:
                    data__blob_keys.remove("field")
                    data__blob__field = data__blob["field"]
                    if not (isinstance(data__blob__field, str) and data__blob__field == 'text' or isinstance(data__blob__field, str) and data__blob__field == 'data'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob.field must be one of ['text', 'data']", value=data__blob__field, name="" + (name_prefix or "data") + ".blob.field", definition={'enum': ['text', 'data']}, rule='enum')
                if data__blob_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".blob must not contain "+str(data__blob_keys)+" properties", value=data__blob, name="" + (name_prefix or "data") + ".blob", definition={'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, rule='additionalProperties')
        if "sha256" in data_keys:
            data_keys.remove("sha256")
            data__sha256 = data["sha256"]
            if not isinstance(data__sha256, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".sha256 must be string", value=data__sha256, name="" + (name_prefix or "data") + ".sha256", definition={'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, rule='type')
            if isinstance(data__sha256, str):
                if not REGEX_PATTERNS_experience['^[0-9a-f]{64}$'].search(data__sha256):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".sha256 must match pattern ^[0-9a-f]{64}$", value=data__sha256, name="" + (name_prefix or "data") + ".sha256", definition={'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, rule='pattern')
        if "mac" in data_keys:
            data_keys.remove("mac")
            data__mac = data["mac"]
            if not isinstance(data__mac, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".mac must be string", value=data__mac, name="" + (name_prefix or "data") + ".mac", definition={'type': 'string', 'pattern': '^[0-9a-f]{32}$', 'description': "Set by repo-memory: an HMAC of sha256 under the writing clone's key (kept outside the repository), so what the server wrote can be told from a record re-hashed by hand."}, rule='type')
            if isinstance(data__mac, str):
                if not REGEX_PATTERNS_experience['^[0-9a-f]{32}$'].search(data__mac):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".mac must match pattern ^[0-9a-f]{32}$", value=data__mac, name="" + (name_prefix or "data") + ".mac", definition={'type': 'string', 'pattern': '^[0-9a-f]{32}$', 'description': "Set by repo-memory: an HMAC of sha256 under the writing clone's key (kept outside the repository), so what the server wrote can be told from a record re-hashed by hand."}, rule='pattern')
        if "prev" in data_keys:
            data_keys.remove("prev")
            data__prev = data["prev"]
            if not isinstance(data__prev, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".prev must be string or null", value=data__prev, name="" + (name_prefix or "data") + ".prev", definition={'type': ['string', 'null'], 'pattern': '^[0-9a-f]{64}$'}, rule='type')
            if isinstance(data__prev, str):
                if not REGEX_PATTERNS_experience['^[0-9a-f]{64}$'].search(data__prev):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".prev must match pattern ^[0-9a-f]{64}$", value=data__prev, name="" + (name_prefix or "data") + ".prev", definition={'type': ['string', 'null'], 'pattern': '^[0-9a-f]{64}$'}, rule='pattern')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/experience.schema.json', 'title': 'One experience record: a line of .agents/experience/<YYYY-MM>/<session>.jsonl', 'description': "Append-only. sha256 is the hash of the record's canonical JSON without the sha256 field; prev is the sha256 of the previous record in the same file (null for the first), so the file is a hash chain.", 'type': 'object', 'required': ['id', 'ts', 'session', 'seq', 'kind', 'refs', 'source', 'sha256', 'prev'], 'additionalProperties': False, 'properties': {'id': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}#[1-9][0-9]*$'}, 'ts': {'type': 'string', 'pattern': '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$'}, 'session': {'type': 'string', 'pattern': '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'}, 'seq': {'type': 'integer', 'minimum': 1}, 'kind': {'type': 'string', 'pattern': '^(note|action|observation|tool|decision|error|summary|skill\\.used|outcome|redaction|loop\\.[a-z_]+)$'}, 'text': {'type': 'string'}, 'data': {'description': 'Structured details, kept and returned by read as written. Recall indexes the words of the text, not of data: bookkeeping (ids, hashes, flags) would otherwise match questions. The exceptions are the keys below marked x-searchable (indexed with the text), speaker (who said it; its own field in the index) and when or date (the time the record is about; relative times in the text are read from it). A record with no text is indexed by its data.', 'properties': {'speaker': {'description': "Who said it: a person's name. Without it, the record's actor (human or agent) stands in."}, 'when': {'description': "The time the record is about, in the records' UTC form; the record's ts is when it was written."}, 'date': {'description': "The time the record is about as its source wrote it (an import's own date text)."}, 'input': {'x-searchable': True, 'description': "A tool call's input, as a hook recorded it."}, 'output_text': {'x-searchable': True, 'description': "The text of a tool call's output as a hook recorded it: the strings it returned (not the harness's field names, flags or counts), its first 2,000 characters. output_chars is the whole text's length when it is longer; the whole output is then in output_blob (a blob of the response), or output_file ({path, git_blob}: a file read as HEAD held it) when git keeps it."}, 'output_excerpt': {'x-searchable': True, 'description': "The opening of a tool call's output as hooks recorded it before output_text: the JSON of a structured response. Its strings are indexed, not its field names."}}}, 'refs': {'type': 'array', 'items': {'type': 'string'}}, 'covers': {'description': 'For summaries: the ids and ranges (session#10-42) it compresses.', 'type': 'array', 'items': {'type': 'string'}}, 'anchors': {'description': "Set by the server for refs that cite code (path::Symbol): each one's code hash when the record was written.", 'type': 'object', 'additionalProperties': {'type': 'string', 'pattern': '^[0-9a-f]{16}$'}}, 'source': {'type': 'object', 'required': ['actor'], 'additionalProperties': False, 'properties': {'actor': {'enum': ['human', 'agent']}, 'harness': {'type': 'string'}, 'tool': {'type': 'string'}, 'clone': {'type': 'string', 'pattern': '^[0-9a-f]{8}$', 'description': 'The clone that wrote the record; a log is continued only by the clone that wrote its last record.'}}}, 'blob': {'description': 'Content too large to inline, stored at .agents/experience/blobs/<sha256>; text then holds a preview.', 'type': 'object', 'required': ['sha256', 'bytes', 'field'], 'additionalProperties': False, 'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'bytes': {'type': 'integer', 'minimum': 0}, 'field': {'enum': ['text', 'data']}}}, 'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'}, 'mac': {'type': 'string', 'pattern': '^[0-9a-f]{32}$', 'description': "Set by repo-memory: an HMAC of sha256 under the writing clone's key (kept outside the repository), so what the server wrote can be told from a record re-hashed by hand."}, 'prev': {'type': ['string', 'null'], 'pattern': '^[0-9a-f]{64}$'}}}, rule='additionalProperties')
    return data
validate_experience = validate_https___repo_memory_dev_schemas_experience_schema_json

VERSION = "2.22.3"
from decimal import Decimal
import re
from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS_loop = {
    '^[a-z0-9]+(-[a-z0-9]+)*$': re.compile('^[a-z0-9]+(-[a-z0-9]+)*\\Z'),
    '^[^\\s:]\\S*::\\S+$': re.compile('^[^\\s:]\\S*::\\S+\\Z')
}

NoneType = type(None)

def validate_https___repo_memory_dev_schemas_loop_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/loop.schema.json', 'title': 'Loop specification frontmatter (.agents/loops/<name>.md)', 'description': 'A bounded, reusable loop: trigger, goal, verification ladder (cheapest first), stopping rule, memory binding. The markdown after the frontmatter is notes for the agent.', 'type': 'object', 'required': ['name', 'goal', 'verify', 'stop', 'success_requires_level'], 'additionalProperties': False, 'properties': {'name': {'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, 'description': {'type': 'string', 'maxLength': 1024}, 'status': {'enum': ['draft', 'active'], 'description': 'Only active specs run their verification commands (and only once a person accepted this content).'}, 'trigger': {'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, 'goal': {'type': 'string', 'minLength': 1}, 'verify': {'type': 'array', 'minItems': 1, 'items': {'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}}, 'stop': {'type': 'object', 'additionalProperties': False, 'properties': {'max_iterations': {'type': 'integer', 'minimum': 1, 'maximum': 100}, 'max_minutes': {'type': 'number', 'exclusiveMinimum': 0}, 'no_progress_after': {'type': 'integer', 'minimum': 1}}}, 'success_requires_level': {'type': 'integer', 'minimum': 1, 'maximum': 5}, 'memory': {'type': 'object', 'additionalProperties': False, 'properties': {'skills': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, 'recall': {'type': 'string'}, 'anchors': {'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}}}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['name', 'goal', 'verify', 'stop', 'success_requires_level']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/loop.schema.json', 'title': 'Loop specification frontmatter (.agents/loops/<name>.md)', 'description': 'A bounded, reusable loop: trigger, goal, verification ladder (cheapest first), stopping rule, memory binding. The markdown after the frontmatter is notes for the agent.', 'type': 'object', 'required': ['name', 'goal', 'verify', 'stop', 'success_requires_level'], 'additionalProperties': False, 'properties': {'name': {'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, 'description': {'type': 'string', 'maxLength': 1024}, 'status': {'enum': ['draft', 'active'], 'description': 'Only active specs run their verification commands (and only once a person accepted this content).'}, 'trigger': {'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, 'goal': {'type': 'string', 'minLength': 1}, 'verify': {'type': 'array', 'minItems': 1, 'items': {'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}}, 'stop': {'type': 'object', 'additionalProperties': False, 'properties': {'max_iterations': {'type': 'integer', 'minimum': 1, 'maximum': 100}, 'max_minutes': {'type': 'number', 'exclusiveMinimum': 0}, 'no_progress_after': {'type': 'integer', 'minimum': 1}}}, 'success_requires_level': {'type': 'integer', 'minimum': 1, 'maximum': 5}, 'memory': {'type': 'object', 'additionalProperties': False, 'properties': {'skills': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, 'recall': {'type': 'string'}, 'anchors': {'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}}}}}, rule='required')
        data_keys = set(data.keys())
        if "name" in data_keys:
            data_keys.remove("name")
            data__name = data["name"]
            if not isinstance(data__name, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be string", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='type')
            if isinstance(data__name, str):
                data__name_len = len(data__name)
                if data__name_len > 64:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must be shorter than or equal to 64 characters", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='maxLength')
                if not REGEX_PATTERNS_loop['^[a-z0-9]+(-[a-z0-9]+)*$'].search(data__name):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".name must match pattern ^[a-z0-9]+(-[a-z0-9]+)*$", value=data__name, name="" + (name_prefix or "data") + ".name", definition={'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='pattern')
        if "description" in data_keys:
            data_keys.remove("description")
            data__description = data["description"]
            if not isinstance(data__description, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be string", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'type': 'string', 'maxLength': 1024}, rule='type')
            if isinstance(data__description, str):
                data__description_len = len(data__description)
                if data__description_len > 1024:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".description must be shorter than or equal to 1024 characters", value=data__description, name="" + (name_prefix or "data") + ".description", definition={'type': 'string', 'maxLength': 1024}, rule='maxLength')
        if "status" in data_keys:
            data_keys.remove("status")
            data__status = data["status"]
            if not (isinstance(data__status, str) and data__status == 'draft' or isinstance(data__status, str) and data__status == 'active'):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".status must be one of ['draft', 'active']", value=data__status, name="" + (name_prefix or "data") + ".status", definition={'enum': ['draft', 'active'], 'description': 'Only active specs run their verification commands (and only once a person accepted this content).'}, rule='enum')
        if "trigger" in data_keys:
            data_keys.remove("trigger")
            data__trigger = data["trigger"]
            if not isinstance(data__trigger, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger must be object", value=data__trigger, name="" + (name_prefix or "data") + ".trigger", definition={'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, rule='type')
            data__trigger_is_dict = isinstance(data__trigger, dict)
            if data__trigger_is_dict:
                data__trigger__missing_keys = set(['on']) - data__trigger.keys()
                if data__trigger__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger must contain " + (str(sorted(data__trigger__missing_keys)) + " properties"), value=data__trigger, name="" + (name_prefix or "data") + ".trigger", definition={'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, rule='required')
                data__trigger_keys = set(data__trigger.keys())
                if "on" in data__trigger_keys:
                    data__trigger_keys.remove("on")
                    data__trigger__on = data__trigger["on"]
                    if not (isinstance(data__trigger__on, str) and data__trigger__on == 'manual' or isinstance(data__trigger__on, str) and data__trigger__on == 'schedule' or isinstance(data__trigger__on, str) and data__trigger__on == 'change' or isinstance(data__trigger__on, str) and data__trigger__on == 'git' or isinstance(data__trigger__on, str) and data__trigger__on == 'ci'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.on must be one of ['manual', 'schedule', 'change', 'git', 'ci']", value=data__trigger__on, name="" + (name_prefix or "data") + ".trigger.on", definition={'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, rule='enum')
                if "cron" in data__trigger_keys:
                    data__trigger_keys.remove("cron")
                    data__trigger__cron = data__trigger["cron"]
                    if not isinstance(data__trigger__cron, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.cron must be string", value=data__trigger__cron, name="" + (name_prefix or "data") + ".trigger.cron", definition={'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, rule='type')
                if "paths" in data__trigger_keys:
                    data__trigger_keys.remove("paths")
                    data__trigger__paths = data__trigger["paths"]
                    if not isinstance(data__trigger__paths, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.paths must be array", value=data__trigger__paths, name="" + (name_prefix or "data") + ".trigger.paths", definition={'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, rule='type')
                    data__trigger__paths_is_list = isinstance(data__trigger__paths, (list, tuple))
                    if data__trigger__paths_is_list:
                        data__trigger__paths_len = len(data__trigger__paths)
                        for data__trigger__paths_x, data__trigger__paths_item in enumerate(data__trigger__paths):
                            if not isinstance(data__trigger__paths_item, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.paths[{data__trigger__paths_x}]".format(**locals()) + " must be string", value=data__trigger__paths_item, name="" + (name_prefix or "data") + ".trigger.paths[{data__trigger__paths_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                if "events" in data__trigger_keys:
                    data__trigger_keys.remove("events")
                    data__trigger__events = data__trigger["events"]
                    if not isinstance(data__trigger__events, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.events must be array", value=data__trigger__events, name="" + (name_prefix or "data") + ".trigger.events", definition={'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}, rule='type')
                    data__trigger__events_is_list = isinstance(data__trigger__events, (list, tuple))
                    if data__trigger__events_is_list:
                        data__trigger__events_len = len(data__trigger__events)
                        for data__trigger__events_x, data__trigger__events_item in enumerate(data__trigger__events):
                            if not (isinstance(data__trigger__events_item, str) and data__trigger__events_item == 'post-commit' or isinstance(data__trigger__events_item, str) and data__trigger__events_item == 'pre-push'):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger.events[{data__trigger__events_x}]".format(**locals()) + " must be one of ['post-commit', 'pre-push']", value=data__trigger__events_item, name="" + (name_prefix or "data") + ".trigger.events[{data__trigger__events_x}]".format(**locals()) + "", definition={'enum': ['post-commit', 'pre-push']}, rule='enum')
                if data__trigger_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".trigger must not contain "+str(data__trigger_keys)+" properties", value=data__trigger, name="" + (name_prefix or "data") + ".trigger", definition={'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, rule='additionalProperties')
        if "goal" in data_keys:
            data_keys.remove("goal")
            data__goal = data["goal"]
            if not isinstance(data__goal, (str)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".goal must be string", value=data__goal, name="" + (name_prefix or "data") + ".goal", definition={'type': 'string', 'minLength': 1}, rule='type')
            if isinstance(data__goal, str):
                data__goal_len = len(data__goal)
                if data__goal_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".goal must be longer than or equal to 1 characters", value=data__goal, name="" + (name_prefix or "data") + ".goal", definition={'type': 'string', 'minLength': 1}, rule='minLength')
        if "verify" in data_keys:
            data_keys.remove("verify")
            data__verify = data["verify"]
            if not isinstance(data__verify, (list, tuple)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify must be array", value=data__verify, name="" + (name_prefix or "data") + ".verify", definition={'type': 'array', 'minItems': 1, 'items': {'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}}, rule='type')
            data__verify_is_list = isinstance(data__verify, (list, tuple))
            if data__verify_is_list:
                data__verify_len = len(data__verify)
                if data__verify_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify must contain at least 1 items", value=data__verify, name="" + (name_prefix or "data") + ".verify", definition={'type': 'array', 'minItems': 1, 'items': {'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}}, rule='minItems')
                for data__verify_x, data__verify_item in enumerate(data__verify):
                    if not isinstance(data__verify_item, (dict)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + " must be object", value=data__verify_item, name="" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + "", definition={'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}, rule='type')
                    data__verify_item_is_dict = isinstance(data__verify_item, dict)
                    if data__verify_item_is_dict:
                        data__verify_item__missing_keys = set(['level']) - data__verify_item.keys()
                        if data__verify_item__missing_keys:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + " must contain " + (str(sorted(data__verify_item__missing_keys)) + " properties"), value=data__verify_item, name="" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + "", definition={'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}, rule='required')
                        data__verify_item_keys = set(data__verify_item.keys())
                        if "level" in data__verify_item_keys:
                            data__verify_item_keys.remove("level")
                            data__verify_item__level = data__verify_item["level"]
                            if not isinstance(data__verify_item__level, (int)) and not (isinstance(data__verify_item__level, float) and data__verify_item__level.is_integer()) or isinstance(data__verify_item__level, bool):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + " must be integer", value=data__verify_item__level, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + "", definition={'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, rule='type')
                            if isinstance(data__verify_item__level, (int, float, Decimal)) and not isinstance(data__verify_item__level, bool):
                                if data__verify_item__level < 1:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + " must be bigger than or equal to 1", value=data__verify_item__level, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + "", definition={'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, rule='minimum')
                                if data__verify_item__level > 5:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + " must be smaller than or equal to 5", value=data__verify_item__level, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].level".format(**locals()) + "", definition={'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, rule='maximum')
                        if "name" in data__verify_item_keys:
                            data__verify_item_keys.remove("name")
                            data__verify_item__name = data__verify_item["name"]
                            if not isinstance(data__verify_item__name, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].name".format(**locals()) + " must be string", value=data__verify_item__name, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].name".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                        if "run" in data__verify_item_keys:
                            data__verify_item_keys.remove("run")
                            data__verify_item__run = data__verify_item["run"]
                            if not isinstance(data__verify_item__run, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].run".format(**locals()) + " must be string", value=data__verify_item__run, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].run".format(**locals()) + "", definition={'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, rule='type')
                            if isinstance(data__verify_item__run, str):
                                data__verify_item__run_len = len(data__verify_item__run)
                                if data__verify_item__run_len < 1:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].run".format(**locals()) + " must be longer than or equal to 1 characters", value=data__verify_item__run, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].run".format(**locals()) + "", definition={'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, rule='minLength')
                        if "checklist" in data__verify_item_keys:
                            data__verify_item_keys.remove("checklist")
                            data__verify_item__checklist = data__verify_item["checklist"]
                            if not isinstance(data__verify_item__checklist, (list, tuple)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist".format(**locals()) + " must be array", value=data__verify_item__checklist, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist".format(**locals()) + "", definition={'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, rule='type')
                            data__verify_item__checklist_is_list = isinstance(data__verify_item__checklist, (list, tuple))
                            if data__verify_item__checklist_is_list:
                                data__verify_item__checklist_len = len(data__verify_item__checklist)
                                if data__verify_item__checklist_len < 1:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist".format(**locals()) + " must contain at least 1 items", value=data__verify_item__checklist, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist".format(**locals()) + "", definition={'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, rule='minItems')
                                for data__verify_item__checklist_x, data__verify_item__checklist_item in enumerate(data__verify_item__checklist):
                                    if not isinstance(data__verify_item__checklist_item, (str)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist[{data__verify_item__checklist_x}]".format(**locals()) + " must be string", value=data__verify_item__checklist_item, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].checklist[{data__verify_item__checklist_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                        if "expect" in data__verify_item_keys:
                            data__verify_item_keys.remove("expect")
                            data__verify_item__expect = data__verify_item["expect"]
                            if not isinstance(data__verify_item__expect, (dict)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect".format(**locals()) + " must be object", value=data__verify_item__expect, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect".format(**locals()) + "", definition={'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, rule='type')
                            data__verify_item__expect_is_dict = isinstance(data__verify_item__expect, dict)
                            if data__verify_item__expect_is_dict:
                                data__verify_item__expect_keys = set(data__verify_item__expect.keys())
                                if "exit" in data__verify_item__expect_keys:
                                    data__verify_item__expect_keys.remove("exit")
                                    data__verify_item__expect__exit = data__verify_item__expect["exit"]
                                    if not isinstance(data__verify_item__expect__exit, (int)) and not (isinstance(data__verify_item__expect__exit, float) and data__verify_item__expect__exit.is_integer()) or isinstance(data__verify_item__expect__exit, bool):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.exit".format(**locals()) + " must be integer", value=data__verify_item__expect__exit, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.exit".format(**locals()) + "", definition={'type': 'integer'}, rule='type')
                                if "regex" in data__verify_item__expect_keys:
                                    data__verify_item__expect_keys.remove("regex")
                                    data__verify_item__expect__regex = data__verify_item__expect["regex"]
                                    if not isinstance(data__verify_item__expect__regex, (str)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.regex".format(**locals()) + " must be string", value=data__verify_item__expect__regex, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.regex".format(**locals()) + "", definition={'type': 'string', 'description': 'Must match the combined output.'}, rule='type')
                                if "threshold" in data__verify_item__expect_keys:
                                    data__verify_item__expect_keys.remove("threshold")
                                    data__verify_item__expect__threshold = data__verify_item__expect["threshold"]
                                    if not isinstance(data__verify_item__expect__threshold, (dict)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + " must be object", value=data__verify_item__expect__threshold, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + "", definition={'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}, rule='type')
                                    data__verify_item__expect__threshold_is_dict = isinstance(data__verify_item__expect__threshold, dict)
                                    if data__verify_item__expect__threshold_is_dict:
                                        data__verify_item__expect__threshold__missing_keys = set(['pattern']) - data__verify_item__expect__threshold.keys()
                                        if data__verify_item__expect__threshold__missing_keys:
                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + " must contain " + (str(sorted(data__verify_item__expect__threshold__missing_keys)) + " properties"), value=data__verify_item__expect__threshold, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + "", definition={'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}, rule='required')
                                        data__verify_item__expect__threshold_keys = set(data__verify_item__expect__threshold.keys())
                                        if "pattern" in data__verify_item__expect__threshold_keys:
                                            data__verify_item__expect__threshold_keys.remove("pattern")
                                            data__verify_item__expect__threshold__pattern = data__verify_item__expect__threshold["pattern"]
                                            if not isinstance(data__verify_item__expect__threshold__pattern, (str)):
                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.pattern".format(**locals()) + " must be string", value=data__verify_item__expect__threshold__pattern, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.pattern".format(**locals()) + "", definition={'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, rule='type')
                                        if "min" in data__verify_item__expect__threshold_keys:
                                            data__verify_item__expect__threshold_keys.remove("min")
                                            data__verify_item__expect__threshold__min = data__verify_item__expect__threshold["min"]
                                            if not isinstance(data__verify_item__expect__threshold__min, (int, float, Decimal)) or isinstance(data__verify_item__expect__threshold__min, bool):
                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.min".format(**locals()) + " must be number", value=data__verify_item__expect__threshold__min, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.min".format(**locals()) + "", definition={'type': 'number'}, rule='type')
                                        if "max" in data__verify_item__expect__threshold_keys:
                                            data__verify_item__expect__threshold_keys.remove("max")
                                            data__verify_item__expect__threshold__max = data__verify_item__expect__threshold["max"]
                                            if not isinstance(data__verify_item__expect__threshold__max, (int, float, Decimal)) or isinstance(data__verify_item__expect__threshold__max, bool):
                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.max".format(**locals()) + " must be number", value=data__verify_item__expect__threshold__max, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold.max".format(**locals()) + "", definition={'type': 'number'}, rule='type')
                                        if data__verify_item__expect__threshold_keys:
                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + " must not contain "+str(data__verify_item__expect__threshold_keys)+" properties", value=data__verify_item__expect__threshold, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect.threshold".format(**locals()) + "", definition={'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}, rule='additionalProperties')
                                if data__verify_item__expect_keys:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].expect".format(**locals()) + " must not contain "+str(data__verify_item__expect_keys)+" properties", value=data__verify_item__expect, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].expect".format(**locals()) + "", definition={'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, rule='additionalProperties')
                        if "timeout" in data__verify_item_keys:
                            data__verify_item_keys.remove("timeout")
                            data__verify_item__timeout = data__verify_item["timeout"]
                            if not isinstance(data__verify_item__timeout, (int, float, Decimal)) or isinstance(data__verify_item__timeout, bool):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + " must be number", value=data__verify_item__timeout, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + "", definition={'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}, rule='type')
                            if isinstance(data__verify_item__timeout, (int, float, Decimal)) and not isinstance(data__verify_item__timeout, bool):
                                if data__verify_item__timeout > 86400:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + " must be smaller than or equal to 86400", value=data__verify_item__timeout, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + "", definition={'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}, rule='maximum')
                                if data__verify_item__timeout <= 0:
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + " must be bigger than 0", value=data__verify_item__timeout, name="" + (name_prefix or "data") + ".verify[{data__verify_x}].timeout".format(**locals()) + "", definition={'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}, rule='exclusiveMinimum')
                        if data__verify_item_keys:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + " must not contain "+str(data__verify_item_keys)+" properties", value=data__verify_item, name="" + (name_prefix or "data") + ".verify[{data__verify_x}]".format(**locals()) + "", definition={'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}, rule='additionalProperties')
        if "stop" in data_keys:
            data_keys.remove("stop")
            data__stop = data["stop"]
            if not isinstance(data__stop, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop must be object", value=data__stop, name="" + (name_prefix or "data") + ".stop", definition={'type': 'object', 'additionalProperties': False, 'properties': {'max_iterations': {'type': 'integer', 'minimum': 1, 'maximum': 100}, 'max_minutes': {'type': 'number', 'exclusiveMinimum': 0}, 'no_progress_after': {'type': 'integer', 'minimum': 1}}}, rule='type')
            data__stop_is_dict = isinstance(data__stop, dict)
            if data__stop_is_dict:
                data__stop_keys = set(data__stop.keys())
                if "max_iterations" in data__stop_keys:
                    data__stop_keys.remove("max_iterations")
                    data__stop__maxiterations = data__stop["max_iterations"]
                    if not isinstance(data__stop__maxiterations, (int)) and not (isinstance(data__stop__maxiterations, float) and data__stop__maxiterations.is_integer()) or isinstance(data__stop__maxiterations, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.max_iterations must be integer", value=data__stop__maxiterations, name="" + (name_prefix or "data") + ".stop.max_iterations", definition={'type': 'integer', 'minimum': 1, 'maximum': 100}, rule='type')
                    if isinstance(data__stop__maxiterations, (int, float, Decimal)) and not isinstance(data__stop__maxiterations, bool):
                        if data__stop__maxiterations < 1:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.max_iterations must be bigger than or equal to 1", value=data__stop__maxiterations, name="" + (name_prefix or "data") + ".stop.max_iterations", definition={'type': 'integer', 'minimum': 1, 'maximum': 100}, rule='minimum')
                        if data__stop__maxiterations > 100:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.max_iterations must be smaller than or equal to 100", value=data__stop__maxiterations, name="" + (name_prefix or "data") + ".stop.max_iterations", definition={'type': 'integer', 'minimum': 1, 'maximum': 100}, rule='maximum')
                if "max_minutes" in data__stop_keys:
                    data__stop_keys.remove("max_minutes")
                    data__stop__maxminutes = data__stop["max_minutes"]
                    if not isinstance(data__stop__maxminutes, (int, float, Decimal)) or isinstance(data__stop__maxminutes, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.max_minutes must be number", value=data__stop__maxminutes, name="" + (name_prefix or "data") + ".stop.max_minutes", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='type')
                    if isinstance(data__stop__maxminutes, (int, float, Decimal)) and not isinstance(data__stop__maxminutes, bool):
                        if data__stop__maxminutes <= 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.max_minutes must be bigger than 0", value=data__stop__maxminutes, name="" + (name_prefix or "data") + ".stop.max_minutes", definition={'type': 'number', 'exclusiveMinimum': 0}, rule='exclusiveMinimum')
                if "no_progress_after" in data__stop_keys:
                    data__stop_keys.remove("no_progress_after")
                    data__stop__noprogressafter = data__stop["no_progress_after"]
                    if not isinstance(data__stop__noprogressafter, (int)) and not (isinstance(data__stop__noprogressafter, float) and data__stop__noprogressafter.is_integer()) or isinstance(data__stop__noprogressafter, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.no_progress_after must be integer", value=data__stop__noprogressafter, name="" + (name_prefix or "data") + ".stop.no_progress_after", definition={'type': 'integer', 'minimum': 1}, rule='type')
                    if isinstance(data__stop__noprogressafter, (int, float, Decimal)) and not isinstance(data__stop__noprogressafter, bool):
                        if data__stop__noprogressafter < 1:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop.no_progress_after must be bigger than or equal to 1", value=data__stop__noprogressafter, name="" + (name_prefix or "data") + ".stop.no_progress_after", definition={'type': 'integer', 'minimum': 1}, rule='minimum')
                if data__stop_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".stop must not contain "+str(data__stop_keys)+" properties", value=data__stop, name="" + (name_prefix or "data") + ".stop", definition={'type': 'object', 'additionalProperties': False, 'properties': {'max_iterations': {'type': 'integer', 'minimum': 1, 'maximum': 100}, 'max_minutes': {'type': 'number', 'exclusiveMinimum': 0}, 'no_progress_after': {'type': 'integer', 'minimum': 1}}}, rule='additionalProperties')
        if "success_requires_level" in data_keys:
            data_keys.remove("success_requires_level")
            data__successrequireslevel = data["success_requires_level"]
            if not isinstance(data__successrequireslevel, (int)) and not (isinstance(data__successrequireslevel, float) and data__successrequireslevel.is_integer()) or isinstance(data__successrequireslevel, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".success_requires_level must be integer", value=data__successrequireslevel, name="" + (name_prefix or "data") + ".success_requires_level", definition={'type': 'integer', 'minimum': 1, 'maximum': 5}, rule='type')
            if isinstance(data__successrequireslevel, (int, float, Decimal)) and not isinstance(data__successrequireslevel, bool):
                if data__successrequireslevel < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".success_requires_level must be bigger than or equal to 1", value=data__successrequireslevel, name="" + (name_prefix or "data") + ".success_requires_level", definition={'type': 'integer', 'minimum': 1, 'maximum': 5}, rule='minimum')
                if data__successrequireslevel > 5:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".success_requires_level must be smaller than or equal to 5", value=data__successrequireslevel, name="" + (name_prefix or "data") + ".success_requires_level", definition={'type': 'integer', 'minimum': 1, 'maximum': 5}, rule='maximum')
        if "memory" in data_keys:
            data_keys.remove("memory")
            data__memory = data["memory"]
            if not isinstance(data__memory, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory must be object", value=data__memory, name="" + (name_prefix or "data") + ".memory", definition={'type': 'object', 'additionalProperties': False, 'properties': {'skills': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, 'recall': {'type': 'string'}, 'anchors': {'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}}}, rule='type')
            data__memory_is_dict = isinstance(data__memory, dict)
            if data__memory_is_dict:
                data__memory_keys = set(data__memory.keys())
                if "skills" in data__memory_keys:
                    data__memory_keys.remove("skills")
                    data__memory__skills = data__memory["skills"]
                    if not isinstance(data__memory__skills, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.skills must be array", value=data__memory__skills, name="" + (name_prefix or "data") + ".memory.skills", definition={'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, rule='type')
                    data__memory__skills_is_list = isinstance(data__memory__skills, (list, tuple))
                    if data__memory__skills_is_list:
                        data__memory__skills_len = len(data__memory__skills)
                        for data__memory__skills_x, data__memory__skills_item in enumerate(data__memory__skills):
                            if not isinstance(data__memory__skills_item, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.skills[{data__memory__skills_x}]".format(**locals()) + " must be string", value=data__memory__skills_item, name="" + (name_prefix or "data") + ".memory.skills[{data__memory__skills_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='type')
                            if isinstance(data__memory__skills_item, str):
                                if not REGEX_PATTERNS_loop['^[a-z0-9]+(-[a-z0-9]+)*$'].search(data__memory__skills_item):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.skills[{data__memory__skills_x}]".format(**locals()) + " must match pattern ^[a-z0-9]+(-[a-z0-9]+)*$", value=data__memory__skills_item, name="" + (name_prefix or "data") + ".memory.skills[{data__memory__skills_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, rule='pattern')
                if "recall" in data__memory_keys:
                    data__memory_keys.remove("recall")
                    data__memory__recall = data__memory["recall"]
                    if not isinstance(data__memory__recall, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.recall must be string", value=data__memory__recall, name="" + (name_prefix or "data") + ".memory.recall", definition={'type': 'string'}, rule='type')
                if "anchors" in data__memory_keys:
                    data__memory_keys.remove("anchors")
                    data__memory__anchors = data__memory["anchors"]
                    if not isinstance(data__memory__anchors, (list, tuple)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.anchors must be array", value=data__memory__anchors, name="" + (name_prefix or "data") + ".memory.anchors", definition={'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}, rule='type')
                    data__memory__anchors_is_list = isinstance(data__memory__anchors, (list, tuple))
                    if data__memory__anchors_is_list:
                        data__memory__anchors_len = len(data__memory__anchors)
                        for data__memory__anchors_x, data__memory__anchors_item in enumerate(data__memory__anchors):
                            if not isinstance(data__memory__anchors_item, (str)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.anchors[{data__memory__anchors_x}]".format(**locals()) + " must be string", value=data__memory__anchors_item, name="" + (name_prefix or "data") + ".memory.anchors[{data__memory__anchors_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}, rule='type')
                            if isinstance(data__memory__anchors_item, str):
                                if not REGEX_PATTERNS_loop['^[^\\s:]\\S*::\\S+$'].search(data__memory__anchors_item):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.anchors[{data__memory__anchors_x}]".format(**locals()) + " must match pattern ^[^\\s:]\\S*::\\S+$", value=data__memory__anchors_item, name="" + (name_prefix or "data") + ".memory.anchors[{data__memory__anchors_x}]".format(**locals()) + "", definition={'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}, rule='pattern')
                if data__memory_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory must not contain "+str(data__memory_keys)+" properties", value=data__memory, name="" + (name_prefix or "data") + ".memory", definition={'type': 'object', 'additionalProperties': False, 'properties': {'skills': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, 'recall': {'type': 'string'}, 'anchors': {'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}}}, rule='additionalProperties')
        if data_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must not contain "+str(data_keys)+" properties", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'http://json-schema.org/draft-07/schema#', '$id': 'https://repo-memory.dev/schemas/loop.schema.json', 'title': 'Loop specification frontmatter (.agents/loops/<name>.md)', 'description': 'A bounded, reusable loop: trigger, goal, verification ladder (cheapest first), stopping rule, memory binding. The markdown after the frontmatter is notes for the agent.', 'type': 'object', 'required': ['name', 'goal', 'verify', 'stop', 'success_requires_level'], 'additionalProperties': False, 'properties': {'name': {'type': 'string', 'maxLength': 64, 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}, 'description': {'type': 'string', 'maxLength': 1024}, 'status': {'enum': ['draft', 'active'], 'description': 'Only active specs run their verification commands (and only once a person accepted this content).'}, 'trigger': {'type': 'object', 'required': ['on'], 'additionalProperties': False, 'properties': {'on': {'enum': ['manual', 'schedule', 'change', 'git', 'ci'], 'description': 'ci: due when CI says it failed (`repo-memory loop due --run --event ci-failure` in the failing job).'}, 'cron': {'type': 'string', 'description': 'For on: schedule — five fields: minute hour day-of-month month day-of-week.'}, 'paths': {'type': 'array', 'items': {'type': 'string'}, 'description': 'For on: change — glob patterns relative to the repository root.'}, 'events': {'type': 'array', 'items': {'enum': ['post-commit', 'pre-push']}, 'description': 'For on: git.'}}}, 'goal': {'type': 'string', 'minLength': 1}, 'verify': {'type': 'array', 'minItems': 1, 'items': {'type': 'object', 'required': ['level'], 'additionalProperties': False, 'properties': {'level': {'type': 'integer', 'minimum': 1, 'maximum': 5, 'description': '1 self-report, 2 checklist, 3 static checks, 4 tests, 5 external evaluator.'}, 'name': {'type': 'string'}, 'run': {'type': 'string', 'minLength': 1, 'description': 'Shell command, run in the repository root (levels 3-5).'}, 'checklist': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1, 'description': 'Items the agent answers one by one (level 2).'}, 'expect': {'type': 'object', 'additionalProperties': False, 'properties': {'exit': {'type': 'integer'}, 'regex': {'type': 'string', 'description': 'Must match the combined output.'}, 'threshold': {'type': 'object', 'required': ['pattern'], 'additionalProperties': False, 'properties': {'pattern': {'type': 'string', 'description': 'Regex whose first group is a number in the output.'}, 'min': {'type': 'number'}, 'max': {'type': 'number'}}}}}, 'timeout': {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 86400, 'description': 'Seconds (default 300).'}}}}, 'stop': {'type': 'object', 'additionalProperties': False, 'properties': {'max_iterations': {'type': 'integer', 'minimum': 1, 'maximum': 100}, 'max_minutes': {'type': 'number', 'exclusiveMinimum': 0}, 'no_progress_after': {'type': 'integer', 'minimum': 1}}}, 'success_requires_level': {'type': 'integer', 'minimum': 1, 'maximum': 5}, 'memory': {'type': 'object', 'additionalProperties': False, 'properties': {'skills': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z0-9]+(-[a-z0-9]+)*$'}}, 'recall': {'type': 'string'}, 'anchors': {'description': 'Code this loop works on, as path/to/file.py::Class.method; the loop is flagged stale when it changes.', 'type': 'array', 'items': {'type': 'string', 'pattern': '^[^\\s:]\\S*::\\S+$'}}}}}}, rule='additionalProperties')
    return data
validate_loop = validate_https___repo_memory_dev_schemas_loop_schema_json

HASHES = {
    "config": "dc95dca74b939e1102f56c8ae7664a98ab3c0052b77e4c94fe0c378f660c963c",
    "experience": "c9b9fcfec577d68623f65064a45d2a3fe00bb490c927414ac7b28768dc80b5b4",
    "loop": "5be24be3391e90b8ee101fc812fdef0823f45deaadbc65c66b2278380e9f4709",
    "skill": "b2b632be49c47d9324bda8052b6058f1be629bdc4c907824c6f70da33c17dd5c"
}
