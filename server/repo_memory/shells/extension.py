"""The MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640) over the skills this repository publishes
(core/catalog.py: active skills only, never drafts, deprecated or quarantined ones).

`skills/list` pages through them, `skills/get` answers one by the URI of its SKILL.md, `resources/directory/read`
lists a folder of one, and every file of each is a resource `skill://<name>/<path>` that `resources/read` returns
byte for byte, so it matches the digest and size its entry lists. A name is unique in a repository, so URIs carry no
prefix: `skill://release-checklist/SKILL.md`. The older `skill://<name>` resource (shells/mcp.py) still reads a
SKILL.md of any status, as the `read` tool does.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import quote, unquote, urlsplit

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams, RequestParams

from repo_memory.core.catalog import Catalog, Published
from repo_memory.errors import RepoMemoryError
from repo_memory.formats.skills import SKILL_FILE
from repo_memory.shells.served import Served

IDENTIFIER = "io.modelcontextprotocol/skills"
SCHEME = "skill"
PAGE = 100  # skills per skills/list page; an entry (with every file's digest) is never split across pages
CACHE = {"ttlMs": 0, "cacheScope": "private"}  # a person may edit a skill any moment; it is this repository's, no one else's
DIRECTORY = "inode/directory"
SETTINGS = {"directoryRead": True}
T = TypeVar("T")


class SkillsParams(PaginatedRequestParams):
    """skills/list: an optional cursor."""


class SkillParams(RequestParams):
    """skills/get: the URI of a skill's SKILL.md."""

    uri: str


class DirectoryParams(PaginatedRequestParams):
    """resources/directory/read: the URI of a skill folder or a folder inside one."""

    uri: str


def uri(name: str, path: str = "") -> str:
    """The resource URI of file `path` of skill `name` (its folder when `path` is empty)."""
    return f"{SCHEME}://{name}" + (f"/{quote(path, safe='/')}" if path else "")


def parse(text: str) -> tuple[str, str]:
    """(skill name, path inside its folder) of a `skill://` URI; the path is '' for the folder itself. Raises MCPError
    (invalid params) for anything else, before any file is looked at: another scheme, a query, empty, `.` or `..`
    segments, or a segment that decodes to a separator."""
    parts = urlsplit(text)
    segments = parts.path.split("/")[1:] if parts.path else []
    decoded = [unquote(s) for s in segments]
    if (parts.scheme != SCHEME or not parts.netloc or parts.query or parts.fragment
            or any(s in ("", ".", "..") or "/" in s or "\\" in s for s in decoded)):
        raise MCPError(INVALID_PARAMS, f"Not a skill URI: {text[:200]!r}; skills are addressed as skill://<name>/SKILL.md.")
    return parts.netloc, "/".join(decoded)


def entry(skill: Published) -> dict[str, Any]:
    """The extension's Skill entry: the SKILL.md URI, its frontmatter as written, and every file with digest and size."""
    return {"uri": uri(skill.name, SKILL_FILE), "frontmatter": skill.frontmatter,
            "resources": [{"uri": uri(skill.name, f.path), "digest": f"sha256:{f.sha256}", "size": f.size} for f in skill.files]}


def catalog(served: Served) -> Catalog:
    store = served.open([])
    return Catalog(store.root, store.skills, store.similar_names)


async def _answer(ctx: ServerRequestContext[Any, Any], work: Callable[[Catalog], T]) -> T:
    """Run `work` on the catalog off the event loop; our errors become invalid params, as the extension asks."""
    served = cast(Served, ctx.lifespan_context)
    try:
        return await anyio.to_thread.run_sync(lambda: work(catalog(served)))
    except RepoMemoryError as exc:
        raise MCPError(INVALID_PARAMS, str(exc)) from exc


async def list_skills(ctx: ServerRequestContext[Any, Any], params: SkillsParams) -> dict[str, Any]:
    after = params.cursor
    if after is not None and not after.startswith("after:"):
        raise MCPError(INVALID_PARAMS, "Invalid cursor: pass back the nextCursor of the previous skills/list page.")
    found, last = await _answer(ctx, lambda c: c.page(after.removeprefix("after:") if after else None, PAGE))
    return {"resultType": "complete", "skills": [entry(s) for s in found], **({"nextCursor": f"after:{last}"} if last else {}), **CACHE}


async def get_skill(ctx: ServerRequestContext[Any, Any], params: SkillParams) -> dict[str, Any]:
    name, path = parse(params.uri)
    if path != SKILL_FILE:
        raise MCPError(INVALID_PARAMS, f"No skill is served at {params.uri[:200]}: skills/get takes the URI of a SKILL.md "
                                       f"(skill://{name}/SKILL.md).")
    return {"resultType": "complete", "skill": entry(await _answer(ctx, lambda c: c.entry(name))), **CACHE}


async def read_directory(ctx: ServerRequestContext[Any, Any], params: DirectoryParams) -> dict[str, Any]:
    name, folder = parse(params.uri)
    skill = await _answer(ctx, lambda c: c.entry(name))
    prefix = f"{folder}/" if folder else ""
    children: dict[str, dict[str, Any]] = {}
    for file in skill.files:
        if not file.path.startswith(prefix):
            continue
        child, _, deeper = file.path[len(prefix):].partition("/")
        path = prefix + child
        children[child] = ({"uri": uri(name, path), "name": child, "mimeType": DIRECTORY} if deeper
                           else {"uri": uri(name, path), "name": child, "mimeType": mime_type(path), "size": file.size})
    if not children:
        raise MCPError(INVALID_PARAMS, f"{params.uri[:200]} is not a directory resource of a served skill.")
    return {"resultType": "complete", "resources": [children[c] for c in sorted(children)]}


def mime_type(path: str) -> str:
    if path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


class Skills(Extension):
    """The skills extension with its optional directory read."""

    identifier = IDENTIFIER

    def settings(self) -> dict[str, Any]:
        return dict(SETTINGS)

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("skills/list", SkillsParams, list_skills), MethodBinding("skills/get", SkillParams, get_skill),
                MethodBinding("resources/directory/read", DirectoryParams, read_directory)]


async def declare_in_handshake(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Declare the extension in `initialize` too. The SDK declares it in `server/discover` (2026-07-28) but leaves it
    out of the handshake of earlier versions, whose schema has no `extensions`; clients that speak the extension over
    such a connection look for it there, and others ignore a field they do not know."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
        capabilities = result["capabilities"]
        result = {**result, "capabilities": {**capabilities, "extensions": {**capabilities.get("extensions", {}), IDENTIFIER: SETTINGS}}}
    return result


def register(server: MCPServer[Any], served: Served) -> None:
    """Declare the extension in the handshake, and serve every file of a published skill as `skill://<name>/<path>`,
    byte for byte (text when it is UTF-8)."""
    server.middleware.append(declare_in_handshake)

    def read(name: str, path: str) -> str | bytes:
        try:
            data = catalog(served).file(name, path)
        except RepoMemoryError as exc:  # not found is invalid params, as the base protocol asks
            raise ResourceNotFoundError(str(exc)) from exc
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data

    @server.resource(f"{SCHEME}://{{name}}/{SKILL_FILE}", name="skill-file", mime_type="text/markdown")
    def skill_md(name: str) -> str | bytes:
        """The SKILL.md of a skill served through the skills extension (active skills only), byte for byte."""
        return read(name, SKILL_FILE)

    @server.resource(f"{SCHEME}://{{name}}/{{+path}}", name="skill-supporting-file")
    def skill_file(name: str, path: str) -> str | bytes:
        """A file of a skill served through the skills extension, byte for byte (text when it is UTF-8, else a blob)."""
        return read(name, path)
