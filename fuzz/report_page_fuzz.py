#!/usr/bin/python3
# Fuzz target of the replay report page (scripts/plot_replay.py, the HTML of plot_fit.py's
# coefficient table) for the texts users choose: recording file names, episode names, paths,
# the coefficients' source and the reference's label, checked by Python's HTML parser.
"""Usage: report_page_fuzz.py [--seconds S | --runs N] [--seed K] [--corpus DIR]
                           [--artifacts DIR]

The page is Python, so the target is too (a libFuzzer binary would exercise C++ that writes
no HTML): a mutation fuzzer, seeded, that starts from the names in the corpus folder (one name
a file; the made-up replay summary of tests/fixtures/replay_v2 holds the rest of the page),
mutates them with the characters that matter in HTML (< > & " ' = / backquote, spaces, line
breaks, unicode, %, #, character references, comment and script markers), builds the page
body exactly as plot_replay.build does (page_body, figures chosen but not drawn) and parses
it. Each page must:
  - hold only the page's own elements and attributes (no attribute a name could inject, such
    as onmouseover, no <script>), every element closed in order;
  - show every episode name, output file name, path and label as text, unchanged;
  - link each episode's CSV by a relative href that decodes to its output file name, and each
    #fragment to exactly one element with that id.
A failing name is written to ARTIFACTS/crash-N.txt with what failed; exit status 1.
Prints `report_page_fuzz: N executions, R exec/s` (scripts/fuzz.sh reads it)."""
import argparse
import copy
import html.parser
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from urllib.parse import unquote, urlparse

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "scripts"))
import plot_replay  # noqa: E402
import report_common as rc  # noqa: E402

ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "br", "a",
            "div", "table", "tr", "th", "td", "span", "b", "i", "code", "pre", "details",
            "summary", "ul", "li", "img"}
VOID = {"meta", "br", "img"}
ATTRIBUTES = {"lang", "charset", "href", "id", "class", "src", "alt", "colspan", "rowspan"}
# Pieces a mutation inserts: HTML's special characters and sequences, and text a file system
# allows in a name.
PIECES = ["<", ">", "&", "\"", "'", "=", "/", "`", " ", "\t", "\n", "\r", "%", "#", "?", ";",
          "\\", "é", "\u2028", "\u00a0", "\U0001f600", "&amp;", "&lt;", "&#39;", "&quot", "%22",
          "<!--", "-->", "<script>", "</script>", "\" onmouseover=\"alert(1)\" y=\"",
          "' onerror='x", "javascript:", "</td>", "</table>", "<img src=x>", "{}", "{0}",
          "%(x)s", ".csv", ".."]


class PageParser(html.parser.HTMLParser):
    """Collects what the checks need and the first structural problem."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.fragments, self.hrefs = [], [], [], []
        self.text = []
        self.problem = None

    def fail(self, what):
        if self.problem is None:
            self.problem = what

    def handle_starttag(self, tag, attrs):
        if tag not in ELEMENTS:
            self.fail(f"unexpected element <{tag}>")
        for name, value in attrs:
            if name not in ATTRIBUTES:
                self.fail(f"unexpected attribute {name}={value!r} on <{tag}>")
            if name == "id":
                self.ids.append(value)
            if name == "href" and value is not None:
                self.hrefs.append(value)
                if value.startswith("#"):
                    self.fragments.append(value[1:])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.fail(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.fail(f"a comment in the page: {data!r}")

    def handle_decl(self, decl):
        if decl.lower() != "doctype html":
            self.fail(f"unexpected declaration {decl!r}")

    def unknown_decl(self, data):
        self.fail(f"unexpected declaration {data!r}")

    def handle_pi(self, data):
        self.fail(f"unexpected processing instruction {data!r}")


def make_template(work):
    """The made-up replay summary of the car fixture (reference, orientation, skipped files)."""
    out = os.path.join(work, "fixture")
    subprocess.run([sys.executable, os.path.join(SRC, "tests/fixtures/replay_v2/make_fixture.py"),
                    out, "--kind", "car"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "replay_summary.json"), encoding="utf-8") as f:
        return json.load(f)


def mutate(rng, name):
    """A name with one to four edits: insert, replace or delete a piece."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(name))
        op = rng.random()
        if op < 0.6 or not name:
            name = name[:at] + rng.choice(PIECES) + name[at:]
        elif op < 0.8:
            name = name[:at] + rng.choice(PIECES) + name[at + 1:]
        else:
            name = name[:at] + name[at + rng.randint(1, 3):]
    return name[:200]


def file_name(name):
    """What a file system allows as a name: no '/', no NUL, not empty, '.' or '..'."""
    name = name.replace("/", "_").replace("\0", "_")
    return name if name not in ("", ".", "..") else name + "_x"


def page_for(template, names, work):
    """The page body and the summary after renaming the episodes to `names` (file names)."""
    data = copy.deepcopy(template)
    renamed = {}
    outputs = set()
    for e, name in zip(data["episodes"], names):
        name = file_name(name)
        while name in outputs:  # rlsim names the outputs uniquely (OutputNames)
            name = "x" + name
        outputs.add(name)
        renamed[e["name"]] = name
        e["name"] = e["output"] = name
        e["path"] = "/data/" + name
    for r in data["errors"]:
        if r.get("episode") is not None:
            r["episode"] = renamed[r["episode"]]
    for s, name in zip(data.get("skipped") or [], names[::-1]):
        s["path"] = "/data/" + file_name(name)
        s["reason"] = "no row covers <" + name + ">"
    data["coefficients_source"] = names[0] + " (--coeffs)"
    data["reference"]["label"] = names[-1]
    data["options"]["paths"] = names[:3]
    path = os.path.join(work, "replay_summary.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    summary = plot_replay.Summary(path)
    figures = plot_replay.select_figures(summary, plot_replay.DEFAULT_FIGURES)
    drawn = {e["name"] for e, _ in figures}
    coeffs = plot_replay.plot_fit.coefficient_entries(data["coefficients"], path)
    body = plot_replay.page_body(summary, work, summary.verdict_split(), figures, drawn, True,
                                 "plots/error_vs_horizon.png", coeffs, "plots/coefficients.png")
    return rc.page(f"rlsim replay: {summary.model}", body), summary, figures


def check(page, summary, figures):
    """The first broken rule of the page, or None."""
    p = PageParser()
    p.feed(page)
    p.close()
    if p.problem:
        return p.problem
    if p.stack:
        return f"elements left open: {p.stack}"
    text = "".join(p.text)
    for e in summary.episodes:
        for key in ("name", "output", "path"):
            if e[key] not in text:
                return f"episode {key} {e[key]!r} is not on the page as text"
    for want in (summary.data["coefficients_source"], summary.reference["label"]):
        if want not in text:
            return f"{want!r} is not on the page as text"
    files = {unquote(urlparse(h).path) for h in p.hrefs if not h.startswith("#")}
    for e in summary.episodes:
        if e["output"] not in files:
            return f"no link decodes to the output file {e['output']!r}"
    for h in p.hrefs:
        u = urlparse(h)
        if u.scheme or u.netloc or h.startswith("/"):
            return f"a link leaves the folder: {h!r}"
    if len(set(p.ids)) != len(p.ids):
        return "an id is used twice"
    missing = [f for f in p.fragments if f not in p.ids]
    if missing:
        return f"#{missing[0]} links to no element"
    for e, _ in figures:
        if plot_replay.anchor(e) not in p.ids:
            return f"the figure of {e['name']!r} has no anchor"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", default=os.path.join(HERE, "corpus", "report_page_fuzz"))
    parser.add_argument("--artifacts", default=None)
    args = parser.parse_args()
    if args.seconds is None and args.runs is None:
        args.runs = 200
    seeds = []
    if os.path.isdir(args.corpus):
        for entry in sorted(os.listdir(args.corpus)):
            with open(os.path.join(args.corpus, entry), encoding="utf-8") as f:
                seeds.append(f.read().rstrip("\n"))
    seeds = seeds or ["episode_000001.csv"]
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as work:
        template = make_template(work)
        count = len(template["episodes"])
        start = time.monotonic()
        runs = 0
        while True:
            if args.runs is not None and runs >= args.runs:
                break
            if args.seconds is not None and time.monotonic() - start >= args.seconds:
                break
            # The corpus as it is first, then mutations of it.
            names = [seeds[(runs + i) % len(seeds)] for i in range(count)]
            if runs >= len(seeds):
                names = [mutate(rng, n) if rng.random() < 0.7 else n for n in names]
            page, summary, figures = page_for(template, names, work)
            problem = check(page, summary, figures)
            runs += 1
            if problem:
                where = args.artifacts or work
                os.makedirs(where, exist_ok=True)
                crash = os.path.join(where, f"crash-{runs}.txt")
                with open(crash, "w", encoding="utf-8") as f:
                    json.dump({"problem": problem, "names": names}, f, ensure_ascii=True)
                    f.write("\n")
                print(f"report_page_fuzz: FUZZ_CHECK failed after {runs} executions: {problem}"
                      f" (names in {crash})", file=sys.stderr)
                return 1
        elapsed = max(time.monotonic() - start, 1e-9)
    print(f"report_page_fuzz: {runs} executions, {runs / elapsed:.0f} exec/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
