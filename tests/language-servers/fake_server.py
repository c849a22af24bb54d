#!/usr/bin/env python3
"""A language server that misbehaves on purpose, for tests/language_servers.rs: LSP over stdio with
Content-Length framing, and one way to fail, chosen by FAKE_LSP_MODE:

  ok             answers initialize, documentSymbol (one function, `add`, spanning the whole text), rename
                 (the document's first three characters, and the first character of FAKE_LSP_ALSO, a
                 file:// URI, when set: a rename that reaches another file) and shutdown
  exit-at-start  writes a line to stderr and exits before reading anything
  no-initialize  reads everything and answers nothing
  crash-on-symbols  answers initialize, then exits when asked for symbols (after a line on stderr)
  hang-on-symbols   answers initialize, never answers documentSymbol

Each start appends its pid to FAKE_LSP_MARKER (when set), so a test can count the processes started.
"""
import json
import os
import sys

mode = os.environ.get("FAKE_LSP_MODE", "ok")
marker = os.environ.get("FAKE_LSP_MARKER")
if marker:
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\n")

if mode == "exit-at-start":
    sys.stderr.write("fake server: cannot start here\n")
    sys.exit(3)

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def read():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


def send(message):
    body = json.dumps(message).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()


texts = {}
while True:
    m = read()
    if m is None:
        break
    method, id_ = m.get("method"), m.get("id")
    if mode == "no-initialize":
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {"capabilities": {"textDocumentSync": 1, "documentSymbolProvider": True, "renameProvider": True}}})
    elif method == "textDocument/didOpen":
        doc = m["params"]["textDocument"]
        texts[doc["uri"]] = doc["text"]
    elif method == "textDocument/documentSymbol":
        if mode == "crash-on-symbols":
            sys.stderr.write("fake server: segmentation fault in documentSymbol\n")
            sys.stderr.flush()
            os._exit(139)
        if mode == "hang-on-symbols":
            continue
        lines = texts.get(m["params"]["textDocument"]["uri"], "").split("\n")
        end = {"line": len(lines) - 1, "character": len(lines[-1])}
        whole = {"start": {"line": 0, "character": 0}, "end": end}
        send({"jsonrpc": "2.0", "id": id_, "result": [{"name": "add", "kind": 12, "range": whole, "selectionRange": whole}]})
    elif method == "textDocument/rename":
        p = m["params"]
        edit = lambda n: [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": n}}, "newText": p["newName"]}]
        changes = {p["textDocument"]["uri"]: edit(3)}
        if os.environ.get("FAKE_LSP_ALSO"):
            changes[os.environ["FAKE_LSP_ALSO"]] = edit(1)
        send({"jsonrpc": "2.0", "id": id_, "result": {"changes": changes}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": id_, "result": None})
    elif method == "exit":
        break
    elif id_ is not None:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "not here"}})
