"""One tool call to `multiedit mcp` through the official MCP Python SDK, as an assistant outside the
editor makes it. Used by the editor tests (Neovim, real VS Code) to reach an open editor the way an
agent does.

  python call.py BINARY TOOL PLAN_JSON [THEN_TOOL THEN_JSON]

With THEN_TOOL: when the first answer says its diagnostics delta is still settling (`deferred`), the
session goes on as an agent's does, calling THEN_TOOL every 0.25 s (at most 40 times) until an answer
carries that delta (`earlier_diagnostics`); the last of those answers is printed as `then`.

MCP_CLIENT_NAME and MCP_CLIENT_TITLE, when set, are the clientInfo it sends (as an agent names itself).

Prints one JSON object: {"is_error", "text", "structured", "ms"} (`ms`: the first call's time in the
session, without starting Python, the SDK or the server). The server inherits this process's
environment (XDG_RUNTIME_DIR included), so it finds the editors a test started. It is started in the
folder of the plan's (first) file (a patch's `root`; for a new file in a new folder, the nearest folder
that exists), as an agent starts it in its project: `multiedit mcp` edits only inside
the folder it was started in.
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main():
    binary, tool, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if "patch" in plan:
        folder = plan.get("root") or os.getcwd()
    else:
        first = plan.get("file_path") or (plan["files"][0]["file_path"] if "files" in plan else plan["rename"]["file_path"])
        folder = os.path.dirname(first)
        # A file a write creates may be in a folder it makes: the nearest folder that exists.
        while not os.path.isdir(folder):
            folder = os.path.dirname(folder)
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ), cwd=folder)
    async with stdio_client(server) as (read, write):
        name = os.environ.get("MCP_CLIENT_NAME")
        info = types.Implementation(name=name, version="1", title=os.environ.get("MCP_CLIENT_TITLE")) if name else None
        async with ClientSession(read, write, client_info=info) as session:
            await session.initialize()
            started = time.perf_counter()
            r = await session.call_tool(tool, plan)
            out = answer(r)
            out["ms"] = (time.perf_counter() - started) * 1000
            if len(sys.argv) > 5 and ((r.structured_content or {}).get("diagnostics") or {}).get("deferred"):
                for _ in range(40):
                    await asyncio.sleep(0.25)
                    then = await session.call_tool(sys.argv[4], json.loads(sys.argv[5]))
                    out["then"] = answer(then)
                    if (then.structured_content or {}).get("earlier_diagnostics"):
                        break
    print(json.dumps(out))


def answer(r):
    text = "".join(c.text for c in r.content if c.type == "text")
    return {"is_error": bool(r.is_error), "text": text, "structured": r.structured_content}


asyncio.run(main())
