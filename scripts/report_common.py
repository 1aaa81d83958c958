#!/usr/bin/python3
# Shared pieces of rlfit's report pages: matplotlib import with a clear error, atomic file
# writes, number formatting and the HTML skeleton (inline CSS, relative links, no JavaScript).
# Every text reaches a page through markupsafe (Jinja2's escaping): html() fills a template's
# {} fields escaped, and the page is a Jinja2 template with autoescape, so a file or episode
# name is text whatever characters it holds; only Markup (html() results) is inserted as is.
import json
import math
import os
import sys
import tempfile
from urllib.parse import quote

try:
    import jinja2
    from markupsafe import Markup, escape
except ImportError:
    print(f"{os.path.basename(sys.argv[0])}: error: Jinja2 is not installed for {sys.executable} "
          "(Debian: apt-get install python3-jinja2)", file=sys.stderr)
    sys.exit(2)

# Component colours of every figure, as in the seed notes: x red, y green, z blue.
COMPONENT_COLOURS = ("#d62728", "#2ca02c", "#1f77b4")
FIG_DPI = 100  # with 10-inch-wide figures: 1000 px, readable without zooming
# Error quantities of the replay JSON (src/replay/metrics.cc keys): key -> (label, unit).
QUANTITIES = {"dx": ("position error |dx|", "uu"),
              "dv": ("velocity error |dv|", "uu/s"),
              "domega": ("angular velocity error |dω|", "rad/s"),
              "angle_deg": ("orientation error", "deg")}


class ReportError(Exception):
    """Bad input to a report script: printed as one line, exit status 2."""


def run_main(tool, body):
    """Runs body(); a ReportError or a missing file becomes one line on stderr."""
    try:
        body()
    except (ReportError, OSError, ValueError, KeyError) as e:
        msg = str(e) if isinstance(e, ReportError) else f"{type(e).__name__}: {e}"
        print(f"{tool}: error: {msg}", file=sys.stderr)
        sys.exit(2)


def import_pyplot(tool):
    """Returns matplotlib.pyplot on the Agg backend, or exits with a one-line hint."""
    try:
        import matplotlib
    except ImportError:
        print(f"{tool}: error: matplotlib is not installed for {sys.executable} "
              "(Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        sys.exit(2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e})") from None


def require(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise ReportError(f"{where}: missing key \"{key}\"")
    return obj[key]


def _replace_atomic(path, write):
    """Calls write(tmp) on a temporary file beside path, then renames it onto path, so a
    reader never sees half a file; on any failure the temporary file is removed."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".tmp.")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path, text):
    """Writes text through a temporary file and a rename, so a reader never sees half a page."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
    _replace_atomic(path, write)


def save_figure(fig, path):
    """Saves a figure as PNG through a temporary name, then closes it."""
    import matplotlib.pyplot as plt
    try:
        _replace_atomic(path, lambda tmp: fig.savefig(tmp, dpi=FIG_DPI, format="png"))
    finally:
        plt.close(fig)


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def fmt(v):
    """Numbers as the text table prints them (src/replay/replay.cc Fmt); '-' if absent."""
    if not finite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}"


def fmt_coeff(v):
    """Coefficient values: six significant digits."""
    return f"{v:.6g}" if finite(v) else "-"


def html(template, *args, **kwargs):
    """HTML (a Markup) from `template` (trusted HTML with str.format fields): every argument
    that is not Markup itself is escaped, quotes included, so it can stand in text or in a
    quoted attribute."""
    return Markup(template).format(*args, **kwargs)


def esc(s):
    return escape(str(s))


def href(name):
    """A relative link to a file in the same folder (or below it): percent-encoded."""
    return Markup(escape(quote(name, safe="/")))


CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 1.5em auto;
       max-width: 1180px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.8em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
p.lead { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f2f2f2; }
td.l, th.l { text-align: left; }
td.name { overflow-wrap: anywhere; }  /* a long "folder__episode.csv" wraps, not the page */
table.kv td:first-child { text-align: left; font-weight: bold; background: #fafafa;
                          white-space: nowrap; }
table.kv td { text-align: left; }
td.good { background: #e3f4e3; }
td.bad { background: #fbe3e3; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; margin: 0.3em 0 1em 0; }
code, pre { font-family: "DejaVu Sans Mono", monospace; font-size: 0.85em; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; border: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
ul.files { columns: 3; }
ul.paths { font-size: 0.85em; columns: 2; }
summary { cursor: pointer; margin: 0.4em 0; }
th.sub { background: #fafafa; font-weight: normal; font-style: italic; }
#verdict { border: 2px solid #1f77b4; border-radius: 4px; padding: 0 0.8em 0.2em 0.8em;
           margin-top: 0.6em; }
#verdict h2, #worst h2 { margin-top: 0.5em; border-bottom: none; }
#worst h2 { font-size: 1.05em; }
p.sentence { font-size: 1.1em; font-weight: bold; margin: 0.2em 0; }
#verdict table, #worst table { margin: 0.3em 0 0.3em 0; }
table.verdict { font-size: 0.85em; }
table.verdict td { white-space: nowrap; }
table.episodes th { white-space: nowrap; }
#verdict p.note { margin: 0.2em 0 0.4em 0; }
span.vs { color: #666; }
"""


PAGE = jinja2.Environment(autoescape=True, keep_trailing_newline=True).from_string(
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>{{ title }}</title>\n<style>{{ css }}</style>\n</head>\n<body>\n"
    "{{ body }}\n</body>\n</html>\n")


def page(title, body_html):
    """The whole page: `body_html` is Markup (html()); anything else would be escaped."""
    return PAGE.render(title=title, css=Markup(CSS), body=body_html)


def kv_table(rows):
    """rows: (label, value) pairs; a value is text (escaped) or Markup (html())."""
    cells = Markup("").join(html("<tr><td>{}</td><td>{}</td></tr>\n", k, v) for k, v in rows)
    return html("<table class=\"kv\">\n{}</table>\n", cells)


def json_cell(v):
    """A JSON value as table-cell HTML: scalars plain, lists joined, objects as code."""
    if isinstance(v, str):
        return esc(v)
    if finite(v) or isinstance(v, bool) or v is None:
        return esc(json.dumps(v))
    if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
        return esc(", ".join(str(x) for x in v)) if v else html("<i>(none)</i>")
    return html("<code>{}</code>", json.dumps(v, sort_keys=True))


def draw_paired_bars(plt, panels, labels, names, title, path):
    """Grouped bars, one panel per quantity: `panels` is [(key, values, reference_values)]
    over the horizon `labels`; `names` = (values name, reference name). Each pair is
    annotated with values/reference; a log scale is used when the bars span > 30x."""
    import numpy as np
    fig, axes = plt.subplots(1, len(panels), figsize=(10, 4.6), squeeze=False)
    x = np.arange(len(labels))
    width = 0.38
    for ax, (key, mine, ref) in zip(axes[0], panels):
        mine = [v if finite(v) else 0.0 for v in mine]
        ref = [v if finite(v) else 0.0 for v in ref]
        ax.bar(x - width / 2, mine, width, color="#1f77b4", label=names[0])
        ax.bar(x + width / 2, ref, width, color="#aaaaaa", label=names[1])
        positive = [v for v in mine + ref if v > 0]
        if positive and max(positive) / min(positive) > 30:
            ax.set_yscale("log")
        for xi, m, r in zip(x, mine, ref):
            if r > 0:
                ax.annotate(f"×{m / r:.2g}", (xi, max(m, r)), textcoords="offset points",
                            xytext=(0, 3), ha="center", fontsize=8, color="#333333")
        ax.margins(y=0.15)
        ax.set_xticks(x)
        ax.set_xticklabels(labels)
        ax.set_xlabel("horizon")
        label, unit = QUANTITIES.get(key, (key, ""))
        ax.set_title(f"{label}\n({unit})", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    handles, names_shown = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names_shown, loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))  # room for the legend under the panels
    save_figure(fig, path)
