"""Drives `seamark mcp` with the official MCP Python SDK, as a person's own
client would: over stdio (the SDK starts the server) or streamable HTTP (a
server already listening). It opens the weather lookup form, observes it,
types a city and submits it with act, reads the page, lists the tabs, and calls
open with an argument of the wrong type. It prints one JSON object: what
each call answered, and every warning the SDK logged.

Usage:
    mcp_client.py stdio SEAMARK_BINARY LOOKUP_URL [SEAMARK_ARGS...]
    mcp_client.py http MCP_URL LOOKUP_URL
"""

import asyncio
import json
import logging
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

WARNINGS = []


class Keep(logging.Handler):
    """Keeps what the SDK warns about (a failed session termination, say)."""

    def emit(self, record):
        WARNINGS.append(record.getMessage())


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def id_of(listing, name):
    """The mark id of the element named `name` in an element list."""
    for line in listing.splitlines():
        found = re.match(r"\[(\d+)\].*\"" + re.escape(name) + "\"", line)
        if found:
            return int(found.group(1))
    raise SystemExit(f"no element {name!r} in:\n{listing}")


async def session_calls(session, lookup_url):
    calls = {}
    await session.initialize()
    tools = await session.list_tools()
    calls["tools"] = sorted(t.name for t in tools.tools)

    async def call(name, tool, args):
        result = await session.call_tool(tool, args)
        calls[name] = {"text": text_of(result), "is_error": bool(result.is_error)}
        return calls[name]["text"]

    await call("open", "open", {"url": lookup_url})
    listing = await call("observe", "observe", {"image": False})
    city = id_of(listing, "City")
    submit = id_of(listing, "Look up")
    await call("act", "act", {"commands": f"TYPE:{city}:Lisbon\nCLICK:{submit}"})
    await call("read", "read", {})
    await call("tabs", "tabs", {})
    try:
        await call("wrong_type", "open", {"url": 42})
    except Exception as e:  # an error answered as a JSON-RPC error
        calls["wrong_type"] = {"text": str(e), "is_error": True, "raised": True}
    return calls


async def main():
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("mcp").addHandler(Keep(level=logging.WARNING))
    logging.getLogger("mcp").setLevel(logging.WARNING)
    mode = sys.argv[1]
    if mode == "stdio":
        binary, lookup_url, extra = sys.argv[2], sys.argv[3], sys.argv[4:]
        params = StdioServerParameters(command=binary, args=["mcp", *extra])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                calls = await session_calls(session, lookup_url)
    else:
        mcp_url, lookup_url = sys.argv[2], sys.argv[3]
        async with streamable_http_client(mcp_url) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                calls = await session_calls(session, lookup_url)
    calls["warnings"] = WARNINGS
    print(json.dumps(calls))


asyncio.run(main())
