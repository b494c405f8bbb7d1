#!/usr/bin/env python3
"""The markdown differential: web_fetch against markdownify and html2text on
the saved pages of tests/fixtures/web/, served by a local HTTP server.

  differential.py BINARY [--report FILE]

For each page, web_fetch (the `web-fetch` link to BINARY, full profile,
loopback allowed by IKIGAI_TOOLS_FETCH_ALLOW) fetches it from the local
server, every page of its answer followed by `next_offset`, and the two
Python converters convert the same bytes, decoded as the page declares.

What must hold (a failure each): every heading, list item, table cell, code
block line and link of the page's main content is in web_fetch's markdown;
the Latin-1 and Shift-JIS pages come back decoded; the JavaScript-only page
is said to be one, never an empty success. Everything else is a difference,
listed (lines only one side has, how each element is written) and never a
failure: conversion styles differ, and the list is for the closing note.

Ends with the plain `N passed, N failed` line; exits 1 on a failure.
"""

import argparse
import difflib
import functools
import html.parser
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse

import html2text
import markdownify

HERE = os.path.dirname(os.path.abspath(__file__))
PAGES = os.path.join(HERE, "..", "fixtures", "web")

# Each saved page, the charset it declares (in its <meta>; the server sends
# no charset) and what its decoded text must hold.
CHARSETS = {"latin1.html": "iso-8859-1", "shift_jis.html": "shift_jis"}
DECODED = {
    "latin1.html": ["Crème brûlée à la façon de Noël", "Besançon", "150 °C"],
    "shift_jis.html": ["東京の天気予報：週末は晴れ", "気象庁", "横浜"],
}
JS_ONLY = "spa.html"

# Elements outside the main content: a converter that extracts the main
# content may drop them, so nothing is required of them.
CHROME = {"nav", "header", "footer", "aside", "script", "style", "noscript", "form", "head"}


def squash(text):
    return re.sub(r"\s+", " ", text).strip()


class Elements(html.parser.HTMLParser):
    """The headings, list items, table cells, code blocks and links of a
    page's main content (what a markdown converter must keep)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.found = {"heading": [], "list item": [], "table cell": [], "code line": [], "link": []}
        self.open = []  # [kind, text parts, href, depth in the stack]

    def chrome(self):
        return any(tag in CHROME for tag in self.stack)

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if self.chrome():
            return
        attrs = dict(attrs)
        kind = None
        if re.fullmatch(r"h[1-6]", tag):
            kind = "heading"
        elif tag == "li":
            kind = "list item"
        elif tag in ("td", "th"):
            kind = "table cell"
        elif tag == "pre":
            kind = "code line"
        elif tag == "a" and attrs.get("href"):
            kind = "link"
        if kind:
            self.open.append([kind, [], attrs.get("href"), len(self.stack)])

    def handle_endtag(self, tag):
        if tag not in self.stack:
            return
        while self.stack:
            top = self.stack.pop()
            closes = {"h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading",
                      "h5": "heading", "h6": "heading", "li": "list item", "td": "table cell",
                      "th": "table cell", "pre": "code line", "a": "link"}.get(top)
            if closes and self.open and self.open[-1][0] == closes:
                kind, parts, href, _ = self.open.pop()
                text = "".join(parts)
                if kind == "code line":
                    self.found[kind] += [line.strip() for line in text.splitlines() if line.strip()]
                elif kind == "link":
                    self.found[kind].append((squash(text), href))
                else:
                    # A list item's own text: up to a nested list.
                    self.found[kind].append(squash(text))
            if top == tag:
                break

    def handle_data(self, data):
        for entry in self.open:
            # A list item holding a nested list keeps its own first line.
            inner = self.stack[entry[3]:]
            if entry[0] == "list item" and ("ul" in inner or "ol" in inner):
                continue
            entry[1].append(data)


def elements(text):
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser.found


def plain(markdown):
    """Markdown as plain text for a containment check: links, emphasis,
    code spans and table pipes taken off, spaces squashed."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return squash(re.sub(r"[*_`|\\]", "", text))


def present(kind, item, markdown, page_url):
    """Whether `item` of `kind` is in `markdown`, in a markdown form."""
    if kind == "link":
        text, href = item
        targets = {href, urllib.parse.urljoin(page_url, href)}
        return any(f"]({t}" in markdown or f"<{t}>" in markdown for t in targets) and (
            not text or squash(text) in plain(markdown))
    if kind == "code line":
        return item in markdown
    return plain(item) in plain(markdown)


def heading_style(item, markdown):
    """The line that writes heading `item`: an ATX one (`#`) if any."""
    lines = [line.strip() for line in markdown.splitlines() if plain(item) in plain(line)]
    atx = [line for line in lines if line.startswith("#")]
    return (atx or lines or ["(missing)"])[0][:60]


def serve(directory):
    handler = functools.partial(QuietHandler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    # The page's charset only in its <meta>: what the tool must find itself.
    extensions_map = {".html": "text/html"}

    def log_message(self, *args):
        pass


def web_fetch(link, url):
    """web_fetch's whole markdown, every page of it, and its first answer."""
    env = dict(os.environ, IKIGAI_TOOLS_PROFILE="full", IKIGAI_TOOLS_FETCH_ALLOW="127.0.0.1")
    parts, first, offset = [], None, None
    for _ in range(1000):
        args = {"url": url}
        if offset is not None:
            args["offset"] = offset
        done = subprocess.run([link], input=json.dumps(args).encode(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, timeout=60)
        answer = json.loads(done.stdout or b"{}")
        first = first or answer
        if "error" in answer:
            return None, answer
        parts.append(answer.get("output", ""))
        offset = answer.get("next_offset")
        if offset is None:
            break
    return "\n".join(parts), first


def line_set(markdown):
    return {squash(line) for line in markdown.splitlines() if squash(line)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--report", help="also write the differences to FILE (Markdown)")
    options = parser.parse_args()

    bin_dir = tempfile.mkdtemp(prefix="ikigai-web-diff")
    link = os.path.join(bin_dir, "web-fetch")
    os.symlink(os.path.abspath(options.binary), link)
    server = serve(PAGES)
    base = f"http://127.0.0.1:{server.server_address[1]}/"

    passed, failed, report = 0, 0, []

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}")

    for page in sorted(os.listdir(PAGES)):
        if not page.endswith(".html"):
            continue
        url = base + page
        raw = open(os.path.join(PAGES, page), "rb").read()
        text = raw.decode(CHARSETS.get(page, "utf-8"))
        ours, answer = web_fetch(link, url)
        theirs = markdownify.markdownify(text, heading_style="ATX", strip=["script", "style"])
        h2t = html2text.HTML2Text(baseurl=url, bodywidth=0).handle(text)
        report.append(f"### {page}")
        summary = {k: answer.get(k) for k in ("url", "title", "content_type", "total_lines",
                                              "error_code") if k in answer}
        report.append(f"- web_fetch answered: `{json.dumps(summary, ensure_ascii=False)}`")

        if page == JS_ONLY:
            # Said outside `output`: the page's own <noscript> text does not count.
            fields = {k: v for k, v in answer.items() if k != "output"}
            said = re.search(r"javascript", json.dumps(fields), re.I)
            check(bool(said),
                  f"{page}: the JavaScript-only page is said to be one, not an empty success: {answer}")
            report.append(f"- markdownify: {len(squash(theirs))} characters of text "
                          f"({squash(theirs)[:80]!r}); html2text: {len(squash(h2t))}")
            continue
        if ours is None:
            check(False, f"{page}: web_fetch answered an error: {answer}")
            continue

        missing = []
        for kind, items in elements(text).items():
            for item in items:
                ok = present(kind, item, ours, url)
                check(ok, f"{page}: {kind} {item!r} is in web_fetch's markdown")
                if not ok:
                    missing.append(f"{kind} {item!r}")
        for needle in DECODED.get(page, []):
            check(needle in ours, f"{page}: decoded text {needle!r} is in web_fetch's markdown")

        for name, other in (("markdownify", theirs), ("html2text", h2t)):
            only_ours = sorted(line_set(ours) - line_set(other))
            only_theirs = sorted(line_set(other) - line_set(ours))
            ratio = difflib.SequenceMatcher(None, squash(ours), squash(other)).ratio()
            report.append(f"- against {name}: similarity {ratio:.2f}; {len(only_ours)} lines "
                          f"only in web_fetch, {len(only_theirs)} only in {name}")
            for line in only_ours[:8]:
                report.append(f"  - web_fetch only: `{line[:100]}`")
            for line in only_theirs[:8]:
                report.append(f"  - {name} only: `{line[:100]}`")
        for h in elements(text)["heading"][:2]:
            report.append(f"- heading {h!r}: web_fetch `{heading_style(h, ours)}`, "
                          f"markdownify `{heading_style(h, theirs)}`")
        if missing:
            report.append(f"- MISSING from web_fetch: {', '.join(missing)}")

    server.shutdown()
    print("## The markdown differential: web_fetch against markdownify "
          f"{markdownify_version()} and html2text {'.'.join(map(str, html2text.__version__))}")
    print()
    print("\n".join(report))
    if options.report:
        with open(options.report, "w", encoding="utf-8") as out:
            out.write("\n".join(report) + "\n")
    print()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def markdownify_version():
    try:
        from importlib.metadata import version
        return version("markdownify")
    except Exception:  # noqa: BLE001 - the version is only printed
        return "?"


if __name__ == "__main__":
    sys.exit(main())
