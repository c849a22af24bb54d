"""One tool call to `multiedit mcp` through the official MCP Python SDK, as an assistant outside the
editor makes it. Used by the editor tests (Neovim, real VS Code) to reach an open editor the way an
agent does.

  python call.py BINARY TOOL PLAN_JSON

MCP_CLIENT_NAME and MCP_CLIENT_TITLE, when set, are the clientInfo it sends (as an agent names itself).

Prints one JSON object: {"is_error", "text", "structured"}. The server inherits this process's
environment (XDG_RUNTIME_DIR included), so it finds the editors a test started. It is started in the
folder of the plan's (first) file (a patch's `root`; for a new file in a new folder, the nearest folder
that exists), as an agent starts it in its project: `multiedit mcp` edits only inside
the folder it was started in.
"""

import asyncio
import json
import os
import sys

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
            r = await session.call_tool(tool, plan)
    text = "".join(c.text for c in r.content if c.type == "text")
    print(json.dumps({"is_error": bool(r.is_error), "text": text, "structured": r.structured_content}))


asyncio.run(main())
