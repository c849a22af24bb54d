"""End-to-end tests of `multiedit mcp` driven by the official MCP Python SDK (the `mcp` package) over stdio.

Run by tests/mcp.rs:  python client.py BINARY SCHEMA WORKDIR
BINARY: the multiedit binary; SCHEMA: server/schema/plan.schema.json; WORKDIR: an empty folder for files.
Prints one line per case and the start-to-first-answer figures; exits 1 if any case failed.
"""

import asyncio
import json
import os
import subprocess
import sys
import time
import traceback

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

BINARY, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SCHEMA = json.load(open(SCHEMA_PATH))
PATCH_SCHEMA = json.load(open(os.path.join(os.path.dirname(SCHEMA_PATH), "patch.schema.json")))
READ_SCHEMA = json.load(open(os.path.join(os.path.dirname(SCHEMA_PATH), "read.schema.json")))
WRITE_SCHEMA = json.load(open(os.path.join(os.path.dirname(SCHEMA_PATH), "write.schema.json")))
SYMBOLS_SCHEMA = json.load(open(os.path.join(os.path.dirname(SCHEMA_PATH), "symbols.schema.json")))
# Started in WORK, as an agent starts it in its project: `multiedit mcp` edits only inside that folder.
SERVER = StdioServerParameters(command=BINARY, args=["mcp"], cwd=WORK)

failures = []


def case(name):
    def wrap(fn):
        async def run(client):
            try:
                await fn(client)
                print(f"ok    {name}", flush=True)
            except Exception:
                failures.append(name)
                print(f"FAIL  {name}\n{traceback.format_exc()}", flush=True)

        run.__name__ = name
        return run

    return wrap


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(text.encode())
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def text_of(result):
    assert len(result.content) == 1, result.content
    assert result.content[0].type == "text", result.content
    return result.content[0].text


def expect(cond, what, got):
    if not cond:
        raise AssertionError(f"{what}; got:\n{got!r}")


def structure(schema):
    """A schema without its descriptions: what decides which inputs it accepts."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k != "description"}
    if "properties" in out:
        out["properties"] = {k: structure(v) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = structure(out["items"])
    return out


@case("tools/list: the six tools, compact schemas with the canonical structure, annotations")
async def tools_list(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    expect(sorted(tools) == ["multiedit", "multiedit_patch", "multiedit_preview", "multiedit_read", "multiedit_symbols", "multiedit_write"], "the six tools", sorted(tools))
    # Each schema is served compact: the canonical structure (so it accepts exactly the same inputs), short descriptions.
    for name, canonical in [("multiedit", SCHEMA), ("multiedit_write", WRITE_SCHEMA), ("multiedit_symbols", SYMBOLS_SCHEMA), ("multiedit_read", READ_SCHEMA), ("multiedit_patch", PATCH_SCHEMA)]:
        served = tools[name].input_schema
        expect(structure(served) == structure(canonical), f"{name}'s inputSchema has the structure of server/schema/", served)
        expect(len(json.dumps(served)) < len(json.dumps(canonical)), f"{name}'s inputSchema is compact", served)
    expect("old_string" in tools["multiedit"].input_schema["properties"]["edits"]["items"]["properties"], "multiedit's schema names old_string", tools["multiedit"].input_schema)
    # The preview takes the same plan without a second copy of its schema.
    expect(tools["multiedit_preview"].input_schema == {"type": "object", "description": "The plan, exactly as multiedit takes it."}, "multiedit_preview points to multiedit's plan", tools["multiedit_preview"].input_schema)
    write_tool = tools["multiedit_write"]
    expect(not write_tool.annotations.read_only_hint and write_tool.annotations.destructive_hint is not False and "sha256" in write_tool.description, "multiedit_write: writes, asks for the hash", write_tool)
    symbols = tools["multiedit_symbols"]
    expect(symbols.annotations.read_only_hint is True, "multiedit_symbols: read-only", symbols.annotations)
    expect("language servers" in symbols.description and "name path" in symbols.description, "it says where the outline comes from", symbols.description)
    read_tool = tools["multiedit_read"]
    expect(read_tool.annotations.read_only_hint is True, "multiedit_read: read-only", read_tool.annotations)
    expect("unsaved" in read_tool.description and "cat -n" in read_tool.description, "it says what it reads and how lines are numbered", read_tool.description)
    patch = tools["multiedit_patch"]
    expect("unified diff" in patch.description and "SEARCH/REPLACE" in patch.description, "it names the formats", patch.description)
    expect(not patch.annotations.read_only_hint, "multiedit_patch: writes", patch.annotations)
    expect("absolute" in tools["multiedit"].description and "exact" in tools["multiedit"].description, "multiedit's description states the rules", tools["multiedit"].description)
    expect(not tools["multiedit"].annotations.read_only_hint, "multiedit: writes", tools["multiedit"].annotations)
    expect(tools["multiedit_preview"].annotations.read_only_hint is True, "multiedit_preview: read-only", tools["multiedit_preview"].annotations)


@case("apply on disk: file changed, text says where, structuredContent")
async def apply_on_disk(client):
    path = write("apply.txt", "alpha\nbeta\ngamma\n")
    r = await client.call_tool("multiedit", {"file_path": path, "edits": [
        {"old_string": "beta", "new_string": "BETA"},
        {"old_string": "a\n", "new_string": "A\n", "replace_all": True},
    ]})
    text = text_of(r)
    expect(not r.is_error, "not an error", text)
    expect(read(path) == b"alphA\nBETA\ngammA\n", "the file holds both edits", read(path))
    expect(text.startswith(f'Applied 2 edits to {path}:\n1. Replaced "beta" with "BETA"\n2. Replaced "a\n" with "A\n"'),
           "the engine's message first", text)
    expect("written to disk" in text.lower(), "the text says the plan was written to disk", text)
    import hashlib
    sha = hashlib.sha256(b"alphA\nBETA\ngammA\n").hexdigest()
    expect(text.endswith(f". No diagnostics: no editor checked the change.\nNew sha256: {sha}"),
           "that no editor gave diagnostics, then the file's new sha256", text)
    s = r.structured_content
    expect(s["ok"] is True and s["applied_in"] == "disk" and "editor" not in s, "ok, applied_in disk", s)
    expect(s["files"] == [{"file_path": path, "edits_applied": 2, "replacements": 3, "created": False, "sha256": sha, "tiers": []}],
           "per-file figures, as multiedit apply --json gives them", s)
    expect(s["message"] == text.split("\n\n")[0], "message is the engine's message", s)


@case("multiedit_patch: a diff and an envelope on disk, relative to root; a stale hunk refused, nothing written")
async def patch_on_disk(client):
    a = write("patch_a.txt", "one\ntwo\nthree\n")
    b = write("patch_b.py", "def f():\n    return 1\n")
    diff = "--- a/patch_a.txt\n+++ b/patch_a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    r = await client.call_tool("multiedit_patch", {"patch": diff, "root": WORK, "preview": True})
    expect(not r.is_error and "-two\n+TWO\n" in text_of(r) and read(a) == b"one\ntwo\nthree\n", "preview: the diff, nothing written", text_of(r))
    r = await client.call_tool("multiedit_patch", {"patch": diff, "root": WORK})
    expect(not r.is_error and read(a) == b"one\nTWO\nthree\n", "the diff applied", text_of(r))
    expect(r.structured_content["applied_in"] == "disk", "on disk", r.structured_content)
    envelope = "*** Begin Patch\n*** Update File: patch_b.py\n@@ def f():\n-    return 1\n+    return 2\n*** Add File: patch_c.txt\n+new\n*** End Patch\n"
    r = await client.call_tool("multiedit_patch", {"patch": envelope, "root": WORK})
    expect(not r.is_error and read(b) == b"def f():\n    return 2\n" and read(os.path.join(WORK, "patch_c.txt")) == b"new\n", "the envelope applied", text_of(r))
    stale = "*** Begin Patch\n*** Update File: patch_a.txt\n-TWO\n+2\n*** Update File: patch_b.py\n-    return 1\n+    return 3\n*** End Patch\n"
    r = await client.call_tool("multiedit_patch", {"patch": stale, "root": WORK})
    s = r.structured_content
    expect(r.is_error is True and s["kind"] == "not_found", "refused", s)
    expect(s["message"].startswith("Hunk 1 of patch_b.py does not apply: its lines are not in the file."), "names the hunk", s["message"])
    expect(read(a) == b"one\nTWO\nthree\n" and read(b) == b"def f():\n    return 2\n", "nothing written", (read(a), read(b)))
    r = await client.call_tool("multiedit_patch", {"patch": diff, "root": "relative/dir"})
    expect(r.is_error is True and "`root` must be an absolute path" in text_of(r), "a relative root refused", text_of(r))


@case("symbols without an editor: the outline, a symbol edit and a rename refused as needs_editor, nothing written")
async def symbols_without_an_editor(client):
    path = write("calc.ts", "export function add(a: number, b: number) {\n  return a + b;\n}\n")
    before = read(path)
    r = await client.call_tool("multiedit_symbols", {"file_path": path})
    s = r.structured_content
    expect(r.is_error is True and s["kind"] == "needs_editor", "the outline needs an editor", s)
    expect(text_of(r).startswith(f"The outline of {path} comes from the language servers of an editor running multiedit lsp, and none was reached: "),
           "it says why", text_of(r))
    r = await client.call_tool("multiedit", {"file_path": path, "edits": [{"symbol": "add", "replace": "body", "new_string": "return 0;"}]})
    s = r.structured_content
    expect(r.is_error is True and s["kind"] == "needs_editor" and s["edit_index"] == 0, "a symbol edit needs an editor", s)
    expect(s["message"].startswith("Edit 1 names the symbol add, which is resolved by the language servers of an editor running multiedit lsp"), "the engine's words", s["message"])
    expect(s["hint"].startswith("No editor took the plan: "), "the hint says why no editor took it", s)
    r = await client.call_tool("multiedit", {"rename": {"file_path": path, "symbol": "add", "new_name": "sum"}})
    expect(r.is_error is True and r.structured_content["kind"] == "needs_editor", "a rename needs an editor", r.structured_content)
    expect(read(path) == before, "nothing written", read(path))


@case("preview: the diff, nothing written")
async def preview(client):
    path = write("preview.txt", "one\ntwo\nthree\n")
    before = read(path)
    r = await client.call_tool("multiedit_preview", {"file_path": path, "edits": [{"old_string": "two", "new_string": "2"}]})
    text = text_of(r)
    expect(not r.is_error, "not an error", text)
    expect(read(path) == before, "the file is unchanged", read(path))
    expect("-two\n+2\n" in text and text.startswith("---"), "a unified diff", text)
    expect("nothing written" in text, "says nothing was written", text)
    s = r.structured_content
    expect(s["ok"] is True and s["preview"] is True and s["checked_in"] == "disk", "preview flags", s)
    expect(s["diff"] in text and "-two\n+2\n" in s["diff"], "the diff in structuredContent", s)
    expect(s["files"][0]["replacements"] == 1, "figures", s)


@case("refusal: isError, exact text, kind, edit_index, hint; file byte for byte unchanged")
async def refusal(client):
    original = "def f():\n\treturn 1\n\ndef g():\n\treturn 2\n"
    path = write("refuse.py", original)
    r = await client.call_tool("multiedit", {"file_path": path, "edits": [
        {"old_string": "return 1", "new_string": "return 10"},
        {"old_string": "    return 2", "new_string": "    return 20"},
    ]})
    text = text_of(r)
    s = r.structured_content
    expect(r.is_error is True, "an error result", text)
    expect(read(path) == original.encode(), "the file is byte for byte unchanged (edit 0 not applied either)", read(path))
    expect(s["ok"] is False and s["kind"] == "not_found" and s["edit_index"] == 1 and s["file_path"] == path, "kind, edit_index, file", s)
    expect(s["message"] == "String to replace not found in file.\nString:     return 2", "Claude Code's exact text", s["message"])
    expect(s["hint"] and "line 5" in s["hint"] and "indentation" in s["hint"], "a hint with the line and the cause", s["hint"])
    expect(text == s["message"] + "\n" + s["hint"], "text = message + hint", text)

    r = await client.call_tool("multiedit", {"file_path": path, "edits": [{"old_string": "return", "new_string": "yield"}]})
    s = r.structured_content
    expect(r.is_error and s["kind"] == "ambiguous" and s["edit_index"] == 0, "ambiguous", s)
    expect(s["message"].startswith("Found 2 matches of the string to replace, but replace_all is false."), "exact text", s["message"])
    expect(read(path) == original.encode(), "unchanged", read(path))


@case("multi-file plan: all files or none, a file created")
async def multi_file(client):
    a = write("multi_a.txt", "x = 1\n")
    b = write("multi_b.txt", "y = 2\n")
    c = os.path.join(WORK, "sub", "multi_c.txt")
    r = await client.call_tool("multiedit", {"files": [
        {"file_path": a, "edits": [{"old_string": "x = 1", "new_string": "x = 10"}]},
        {"file_path": b, "edits": [{"old_string": "y = 2", "new_string": "y = 20"}]},
        {"file_path": c, "edits": [{"old_string": "", "new_string": "z = 3\n"}]},
    ]})
    text = text_of(r)
    expect(not r.is_error, "applied", text)
    expect((read(a), read(b), read(c)) == (b"x = 10\n", b"y = 20\n", b"z = 3\n"), "all three files", (read(a), read(b), read(c)))
    files = r.structured_content["files"]
    expect([f["file_path"] for f in files] == [a, b, c] and files[2]["created"] is True, "three files, the last created", files)

    r = await client.call_tool("multiedit", {"files": [
        {"file_path": a, "edits": [{"old_string": "x = 10", "new_string": "x = 100"}]},
        {"file_path": b, "edits": [{"old_string": "y = 3", "new_string": "y = 30"}]},
    ]})
    s = r.structured_content
    expect(r.is_error and s["kind"] == "not_found" and s["file_path"] == b, "refused in the second file", s)
    expect((read(a), read(b)) == (b"x = 10\n", b"y = 20\n"), "neither file changed", (read(a), read(b)))


@case("invalid arguments: an error result that names what to fix")
async def invalid_arguments(client):
    path = write("invalid.txt", "keep\n")
    bad = [
        ({"file_path": path, "edits": [{"old_string": "keep"}]}, "new_string"),
        ({"file_path": "relative/invalid.txt", "edits": [{"old_string": "a", "new_string": "b"}]}, "absolute"),
        ({"file_path": path, "edits": '[{"old_string": "keep", "new_string": "k"}]'}, "edits"),
        ({"file_path": path, "edits": []}, "edit"),
        ({"file_path": path, "edits": [{"old_string": "keep", "new_string": "k"}], "mode": "sometimes"}, "mode"),
        ({}, "file_path"),
    ]
    for args, names in bad:
        r = await client.call_tool("multiedit", args)
        text = text_of(r)
        s = r.structured_content
        expect(r.is_error and s["kind"] == "invalid_plan", f"invalid_plan for {args}", (r.is_error, s))
        expect(names in text, f"the text names `{names}`", text)
    r = await client.call_tool("multiedit", {"file_path": path, "edits": '[{"old_string": "keep", "new_string": "k"}]'})
    hint = r.structured_content["hint"]
    expect(hint and "send the array itself" in hint and hint in text_of(r), "a hint for edits sent as a JSON string", r)
    r = await client.call_tool("multiedit_preview", None)
    expect(r.is_error and r.structured_content["kind"] == "invalid_plan", "no arguments at all", r)
    expect(read(path) == b"keep\n", "unchanged", read(path))


@case("multiedit_read on disk: numbered lines, a part of the file, the hash; a path outside refused")
async def read_on_disk(client):
    path = write("read.txt", "one\ntwo\nthree\n")
    r = await client.call_tool("multiedit_read", {"file_path": path})
    text = text_of(r)
    expect(not r.is_error, "not an error", text)
    import hashlib
    sha = hashlib.sha256(b"one\ntwo\nthree\n").hexdigest()
    expect(text == f"{path} (from disk (no editor holds it); 3 lines; sha256 {sha})\n     1\tone\n     2\ttwo\n     3\tthree\n",
           "the header, then the lines as cat -n numbers them", text)
    s = r.structured_content
    expect(s["files"] == [{"file_path": path, "source": "disk", "differs_from_disk": False, "sha256": sha,
                           "total_lines": 3, "first_line": 1, "last_line": 3}], "structured: per file", s)
    r = await client.call_tool("multiedit_read", {"file_path": path, "offset": 2, "limit": 1})
    expect(text_of(r).endswith(f"lines 2-2 of 3; read on with offset 3; sha256 {sha})\n     2\ttwo\n"), "a part: from offset, limit lines", text_of(r))
    outside = os.path.join(os.path.dirname(WORK.rstrip("/")), "elsewhere.txt")
    r = await client.call_tool("multiedit_read", {"file_path": outside})
    expect(r.is_error and text_of(r).startswith(f"Cannot read {outside}: it lies outside the folders this MCP server may read ("),
           "a file outside the folder it was started in is refused", text_of(r))
    r = await client.call_tool("multiedit_read", {"file_path": os.path.join(WORK, "nope.txt")})
    expect(r.is_error and text_of(r) == f"File does not exist: {os.path.join(WORK, 'nope.txt')}. Nothing was read.", "a missing file", text_of(r))


@case("multiedit_write on disk: create, replace with the right hash; a stale hash, a missing hash, a path outside refused")
async def write_on_disk(client):
    import hashlib
    path = os.path.join(WORK, "sub", "written.txt")
    r = await client.call_tool("multiedit_write", {"file_path": path, "content": "one\ntwo\n"})
    expect(not r.is_error and read(path) == b"one\ntwo\n", "created, with its folder", text_of(r))
    expect(text_of(r).startswith(f"Applied 1 edit to {path}:\n1. Created the file\n\nWritten to disk: "), "the text says so", text_of(r))
    expect(r.structured_content["files"][0]["created"] is True and r.structured_content["applied_in"] == "disk", "structured", r.structured_content)
    sha = hashlib.sha256(b"one\ntwo\n").hexdigest()
    now = hashlib.sha256(b"one\nTWO\nthree\n").hexdigest()
    expect(r.structured_content["files"][0]["sha256"] == sha and text_of(r).endswith(f"\nNew sha256: {sha}"),
           "the result gives the new text's sha256", (text_of(r), r.structured_content))
    r = await client.call_tool("multiedit_write", {"file_path": path, "content": "one\nTWO\nthree\n", "sha256": sha})
    expect(not r.is_error and read(path) == b"one\nTWO\nthree\n", "replaced with the hash the last result gave", text_of(r))
    expect(f"1. Applied the new text (3 lines; changed: lines 2-3)" in text_of(r), "which lines changed", text_of(r))
    expect(r.structured_content["files"][0]["sha256"] == now and f"\nNew sha256: {now}" in text_of(r), "and the next one", text_of(r))
    # A plan's result gives it too; the write that follows needs no read.
    r = await client.call_tool("multiedit", {"file_path": path, "edits": [{"old_string": "three", "new_string": "3"}]})
    after_plan = hashlib.sha256(b"one\nTWO\n3\n").hexdigest()
    expect(not r.is_error and r.structured_content["files"][0]["sha256"] == after_plan and text_of(r).endswith(f"\nNew sha256: {after_plan}"),
           "a plan's result gives the new sha256", (text_of(r), r.structured_content))
    r = await client.call_tool("multiedit_write", {"file_path": path, "content": "one\nTWO\nthree\n", "sha256": after_plan})
    expect(not r.is_error and read(path) == b"one\nTWO\nthree\n", "written with the plan's new sha256", text_of(r))
    # Refused: what changed and to read it, never the hash to send (an agent re-sending it unread would
    # overwrite what it never saw).
    reread = ("Read it with multiedit_read (which shows the editor's unsaved changes too), then make your change to the text it "
              "shows and write that, with the sha256 it shows.")
    for args, kind, message in [
        ({"content": "x\n", "sha256": sha}, "stale",
         f"{path} changed since you read it (or you read another text): the sha256 you gave is not of its text, which now has 3 lines. "
         f"Nothing was written.\n{reread}"),
        ({"content": "x\n"}, "stale",
         f"{path} exists (3 lines): to replace it, give the sha256 of its text as you read it with multiedit_read. Nothing was written.\n{reread}"),
    ]:
        r = await client.call_tool("multiedit_write", {"file_path": path, **args})
        expect(r.is_error and r.structured_content["kind"] == kind and text_of(r) == message, f"refused: {args}", text_of(r))
        expect(now not in text_of(r) and now not in json.dumps(r.structured_content), "the file's hash is not given", r)
    expect(read(path) == b"one\nTWO\nthree\n", "refusals wrote nothing", read(path))
    outside = os.path.join(os.path.dirname(WORK.rstrip("/")), "planted.txt")
    r = await client.call_tool("multiedit_write", {"file_path": outside, "content": "x"})
    expect(r.is_error and r.structured_content["kind"] == "outside_workspace" and text_of(r).startswith(f"Cannot edit {outside}: it lies outside the folders this MCP server may edit ("),
           "a file outside the folder it was started in is refused", text_of(r))
    expect(not os.path.exists(outside), "nothing planted", outside)
    # A CRLF file stays CRLF when the new text comes as lines.
    crlf = write("crlf.txt", "a\r\nb\r\n")
    r = await client.call_tool("multiedit_write", {"file_path": crlf, "content": "a\nB\n", "sha256": hashlib.sha256(b"a\r\nb\r\n").hexdigest()})
    expect(not r.is_error and read(crlf) == b"a\r\nB\r\n", "the file's line breaks kept", (text_of(r), read(crlf)))


@case("unknown tool: a JSON-RPC error")
async def unknown_tool(client):
    try:
        r = await client.call_tool("multiedit_nope", {"file_path": "/x", "edits": []})
    except MCPError as e:
        expect(e.code == -32602, "invalid params (-32602), as the SDK answers", (e.code, e.message))
        return
    raise AssertionError(f"expected a JSON-RPC error, got a result: {r}")


CASES = [tools_list, apply_on_disk, patch_on_disk, symbols_without_an_editor, preview, refusal, multi_file, invalid_arguments, read_on_disk, write_on_disk, unknown_tool]


async def timed_first_answer(connect):
    """Seconds from spawning the server to the first tool answer (a preview of a one-edit plan)."""
    path = write("first.txt", "a\n")
    t0 = time.perf_counter()
    async with connect() as call:
        r = await call("multiedit_preview", {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]})
        elapsed = time.perf_counter() - t0
    assert not r.is_error, r
    return elapsed


def modern():
    """The SDK's default client: probes `server/discover` (2026-07-28), falls back to `initialize`."""
    class Ctx:
        async def __aenter__(self):
            self.client = Client(SERVER)
            await self.client.__aenter__()
            return self.client.call_tool

        async def __aexit__(self, *exc):
            await self.client.__aexit__(*exc)

    return Ctx()


def legacy():
    """The `initialize` handshake, as most clients of 2025 speak it."""
    class Ctx:
        async def __aenter__(self):
            self.stdio = stdio_client(SERVER)
            read, write_ = await self.stdio.__aenter__()
            self.session = ClientSession(read, write_)
            await self.session.__aenter__()
            result = await self.session.initialize()
            info = result.server_info
            assert info.name == "multiedit" and info.version, info
            return self.session.call_tool

        async def __aexit__(self, *exc):
            await self.session.__aexit__(*exc)
            await self.stdio.__aexit__(*exc)

    return Ctx()


def stdout_is_protocol_only():
    """Raw pipes: every line the server writes on stdout is a JSON-RPC message, also around a refusal and
    a bad request; stderr may say anything."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "multiedit", "arguments": {"file_path": "/nonexistent/x", "edits": [{"old_string": "a", "new_string": "b"}]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
    ]
    payload = "".join(json.dumps(l) + "\n" for l in lines) + "this is not json\n"
    p = subprocess.run([BINARY, "mcp"], input=payload.encode(), capture_output=True, timeout=30, cwd=WORK)
    out = p.stdout.decode().splitlines()
    ids = []
    for line in out:
        msg = json.loads(line)
        assert msg.get("jsonrpc") == "2.0", line
        ids.append(msg.get("id"))
    assert 1 in ids and 2 in ids and 3 in ids, out
    print("ok    stdout carries only JSON-RPC messages", flush=True)


async def main():
    first = {}
    for name, connect in (("legacy initialize", legacy), ("server/discover probe", modern)):
        first[name] = [await timed_first_answer(connect) for _ in range(5)]
    async with Client(SERVER) as client:
        print(f"connected: protocol {client.protocol_version}, server {client.server_info.name} {client.server_info.version}", flush=True)
        for run in CASES:
            await run(client)
    async with legacy() as call:
        r = await call("multiedit_preview", {"file_path": write("legacy.txt", "a\n"), "edits": [{"old_string": "a", "new_string": "b"}]})
        expect(not r.is_error and "+b" in text_of(r), "the legacy handshake serves tools too", r)
        print("ok    legacy initialize handshake", flush=True)
    try:
        stdout_is_protocol_only()
    except Exception:
        failures.append("stdout")
        print(f"FAIL  stdout carries only JSON-RPC messages\n{traceback.format_exc()}", flush=True)
    for name, times in first.items():
        ms = sorted(t * 1000 for t in times)
        print(f"start to first tool answer ({name}), 5 runs: median {ms[2]:.1f} ms, min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms")
    if failures:
        print(f"{len(failures)} case(s) failed: {', '.join(failures)}")
        sys.exit(1)
    print("all MCP cases passed")


asyncio.run(main())
