#!/usr/bin/env python3
"""Differential renderer harness for mcp-preamble's markdown section.

Reads a JSON list of markdown documents on stdin and prints, for each, what
every engine makes of it, read the way a browser reads HTML:

    {"engine": {"headings": [[level, text], ...], "live": [...], "hrefs": [...],
                "top": [text of each top-level paragraph, ...],
                "links": [[text, href], ...], "images": [src, ...],
                "shape": ["<p>", "</p>", "code:TEXT", "h3:TEXT", ...]}}

"shape" is the block structure and the code spans, in order: each block
tag opened and closed, each code span's exact text, each heading's text
(blanks joined); inline markup other than code is left out.

Engines: cmark-gfm (GitHub, with its autolink, table, strikethrough and
tasklist extensions, footnotes on), C cmark (cmark-gfm with no extension:
plain CommonMark), markdown-it-py (CommonMark with tables and strikethrough),
mistune (with its common plugins) and commonmark.py (an older CommonMark
spec, 0.29). Raw HTML is passed through by every
engine (the "unsafe" settings), so any tag the markdown did not make is
reported under "live": a start tag outside what markdown generates, a
comment, a declaration or a processing instruction. `hr` counts as live too:
a rule splits the section.

`--check` prints the engine versions and exits; a missing package exits 3.
"""
import json
import sys
from html.parser import HTMLParser

try:
    import cmarkgfm
    from cmarkgfm.cmark import Options
    import commonmark
    import mistune
    from markdown_it import MarkdownIt
except ImportError as e:  # pragma: no cover
    print(f"render.py: missing package: {e.name}", file=sys.stderr)
    sys.exit(3)

# Tags markdown itself generates in these engines.
GENERATED = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "pre", "code", "em", "strong", "a", "img", "table", "thead", "tbody", "tr",
    "th", "td", "del", "s", "br", "input", "sup", "section", "dl", "dt", "dd",
}
CONTAINERS = {"blockquote", "li", "table", "pre", "ul", "ol", "dl", "section", "div"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
BLOCKS = CONTAINERS | {"p", "thead", "tbody", "tr", "th", "td", "hr", "dt", "dd"}


class Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.headings = []
        self.live = []
        self.hrefs = []
        self.current = None
        # Paragraphs at the top level of the page, outside any container.
        self.top = []
        self.depth = 0
        self.para = None
        # Each link's text and target.
        self.links = []
        self.link = None
        # Each image's source: an image loads when the page is viewed.
        self.images = []
        # Block tags, code spans and headings, in order.
        self.shape = []
        self.code = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in CONTAINERS:
            self.depth += 1
        if tag in BLOCKS:
            self.shape.append(f"<{tag}>")
        if tag == "code":
            self.code = ""
        if tag == "p" and self.depth == 0:
            self.para = ""
        if tag in HEADINGS:
            self.current = [int(tag[1]), ""]
        elif tag == "hr":
            self.live.append("<hr>")
        elif tag == "div" and "footnotes" in (attrs.get("class") or ""):
            pass
        elif tag not in GENERATED:
            self.live.append(f"<{tag}>")
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
            self.link = [attrs["href"], ""]
        if tag == "img" and attrs.get("src"):
            self.hrefs.append(attrs["src"])
            self.images.append(attrs["src"])
        if tag == "img" and any(k.startswith("on") for k in attrs):
            self.live.append("<img on…>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in CONTAINERS:
            self.depth = max(0, self.depth - 1)
        if tag in BLOCKS:
            self.shape.append(f"</{tag}>")
        if tag == "code" and self.code is not None:
            self.shape.append("code:" + self.code)
            self.code = None
        if tag == "a" and self.link is not None:
            self.links.append([" ".join(self.link[1].split()), self.link[0]])
            self.link = None
        if tag == "p" and self.para is not None:
            self.top.append(" ".join(self.para.split()))
            self.para = None
        if tag in HEADINGS and self.current is not None:
            text = " ".join(self.current[1].split())
            self.headings.append([self.current[0], text])
            self.shape.append(f"{tag}:{text}")
            self.current = None

    def handle_data(self, data):
        if self.code is not None:
            self.code += data
        if self.current is not None:
            self.current[1] += data
        if self.para is not None:
            self.para += data
        if self.link is not None:
            self.link[1] += data

    def handle_comment(self, data):
        self.live.append("<!--")

    def handle_decl(self, decl):
        self.live.append("<!decl")

    def unknown_decl(self, data):
        self.live.append("<![")

    def handle_pi(self, data):
        self.live.append("<?")


def read(html):
    r = Reader()
    r.feed(html)
    r.close()
    return {"headings": r.headings, "live": r.live, "hrefs": r.hrefs, "top": r.top,
            "links": r.links, "images": r.images, "shape": r.shape}


UNSAFE = Options.CMARK_OPT_UNSAFE
MD_IT = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
MISTUNE = mistune.create_markdown(
    escape=False,
    plugins=["strikethrough", "footnotes", "table", "url", "task_lists", "def_list"],
)

ENGINES = {
    "cmark-gfm": lambda t: cmarkgfm.github_flavored_markdown_to_html(
        t, options=UNSAFE | Options.CMARK_OPT_FOOTNOTES
    ),
    "cmark": lambda t: cmarkgfm.markdown_to_html(t, options=UNSAFE),
    "markdown-it": MD_IT.render,
    "mistune": MISTUNE,
    "commonmark.py": commonmark.commonmark,
}


def main():
    if "--check" in sys.argv:
        import importlib.metadata as m

        for p in ("cmarkgfm", "mistune", "markdown-it-py", "commonmark"):
            print(p, m.version(p))
        return
    docs = json.load(sys.stdin)
    out = [{name: read(render(doc)) for name, render in ENGINES.items()} for doc in docs]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
