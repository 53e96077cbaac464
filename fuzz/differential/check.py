#!/usr/bin/env python3
"""The differential oracle of the `section` fuzz target: every markdown
section that `examples/sections.rs` printed (one per corpus input) is read
by cmark-gfm, C cmark, markdown-it, mistune and commonmark.py through the harness of
tests/renderers/render.py, and each engine must see

- exactly one heading of level 1-2, `MCP server instructions`;
- exactly one level-3 heading per included server, in section order, whose
  text is the server's shown name (whitespace-normalized);
- no live tag (raw HTML, comments, declarations, `<hr>`);
- no image, and no link to a `javascript:`, `vbscript:`, `data:` or `file:`
  target (read as a browser reads it);
- the host's text appended after the section as a top-level paragraph.

Reads the JSON list on stdin; prints one line per failing input and engine
and a summary; exits 1 when anything failed.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "renderers"))
import render  # noqa: E402  (the harness: engines and the HTML reader)

HOST = "Host text after the section."


def norm(s):
    return " ".join(s.split())


def unsafe(href):
    url = href.lstrip("".join(chr(c) for c in range(33)))
    url = "".join(c for c in url if c not in "\t\n\r").lower()
    return url.startswith(("javascript:", "vbscript:", "data:", "file:"))


def problems(item):
    out = []
    for engine, to_html in render.ENGINES.items():
        r = render.read(to_html(item["doc"]))
        heads = [(lvl, norm(t)) for lvl, t in r["headings"] if lvl <= 3]
        want = [(2, "MCP server instructions")] + [(3, norm(n)) for n in item["names"]]
        if heads != want:
            out.append(f"{engine}: headings {heads!r}, want {want!r}")
        if r["live"]:
            out.append(f"{engine}: live {r['live'][:5]!r}")
        if r["images"]:
            out.append(f"{engine}: images {r['images'][:5]!r}")
        bad = [h for h in r["hrefs"] if unsafe(h)]
        if bad:
            out.append(f"{engine}: unsafe targets {bad[:5]!r}")
        if not any(norm(p) == HOST for p in r["top"]):
            out.append(f"{engine}: the host's text is not a paragraph of its own")
    return out


def main():
    items = json.load(sys.stdin)
    failed = 0
    for item in items:
        found = problems(item)
        if found:
            failed += 1
            for p in found:
                print(f"{item['input']}: {p}")
    print(f"differential: {len(items)} sections, {len(render.ENGINES)} engines, {failed} failing")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
