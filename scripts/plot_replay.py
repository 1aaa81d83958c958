#!/usr/bin/python3
# Draws the report page of an `rlsim replay --out DIR` folder (replay_summary.json schema 2):
# the verdict against the earlier model first, then error against horizon, tables per split,
# episode figures (trajectories, residuals, orientation), coefficients, run details.
"""Usage: plot_replay.py OUT_DIR [--episodes N]

Reads OUT_DIR/replay_summary.json (schema_version 2) and the trajectory CSVs it names; writes
PNGs into OUT_DIR/plots/ and a self-contained OUT_DIR/index.html (relative links, no
JavaScript). The verdict uses the held-out episodes (else the unseen ones, else all)."""
import argparse
import collections
import csv
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_common as rc  # noqa: E402
import plot_fit  # noqa: E402
from urllib.parse import quote  # noqa: E402

H = rc.html  # HTML from a template whose {} fields are escaped (markupsafe)

TOOL = "plot_replay.py"
SCHEMA_VERSION = 2
PLOTS = "plots"  # subfolder of OUT_DIR that this script owns
QUANTITIES = rc.QUANTITIES
SPLIT_NAMES = {"heldout": "held-out", "unseen": "unseen", "train": "training", "all": "all"}
WORST_COUNT = 5         # episodes listed in the verdict
LONG_LIST_ROWS = 20     # per-episode tables longer than this fold into <details>
DEFAULT_FIGURES = 8     # episode figures: the worst five, best, median, then held-out ones
# A ratio within this of 1 is "about the same": the medians of a few dozen episodes move by
# a few percent when one episode is added or removed.
SAME_RATIO_BAND = 0.05
# Log y axis when the plotted values span more than this many decades.
LOG_AXIS_DECADES = 1.5
MODEL_COLOUR = "#1f77b4"
REFERENCE_COLOUR = "#ff7f0e"
# Shading of rows the model does not cover, one colour per regime label.
REGIME_COLOURS = ("#bbbbbb", "#e6c88a", "#b9a6d9", "#9fd3c7")
# Strip along the top of each panel for what the model does on the rows it covers, when the
# trajectory CSV says (the car: "on a surface", "in the air"; other models write "covered").
COVERED_COLOURS = ("#6b8e23", "#4682b4", "#cd853f", "#8b008b")


# ---- reading ----------------------------------------------------------------------------

class Summary:
    """replay_summary.json with its error records indexed by
    (episode or None, split, mode, quantity, horizon_s or None)."""

    def __init__(self, path):
        data = rc.read_json(path)
        version = rc.require(data, "schema_version", path)
        if version != SCHEMA_VERSION:
            raise rc.ReportError(f"{path}: schema_version {version}; this script reads "
                                 f"schema_version {SCHEMA_VERSION}")
        self.data = data
        self.model = rc.require(data, "model", path)
        self.episodes = rc.require(data, "episodes", path)
        self.horizons = list(rc.require(data, "horizons_s", path)) + [None]
        self.quantities = [q for q in rc.require(data, "quantities", path)]
        self.curve = rc.require(data, "curve", path)
        self.reference = data.get("reference") or {"kind": "none"}
        self.has_reference = self.reference.get("kind", "none") != "none"
        self.index = {}
        for i, r in enumerate(rc.require(data, "errors", path)):
            where = f"{path}: errors[{i}]"
            key = (rc.require(r, "episode", where), rc.require(r, "split", where),
                   rc.require(r, "mode", where), rc.require(r, "quantity", where),
                   rc.require(r, "horizon_s", where))
            for k in ("n", "median", "p90"):
                rc.require(r, k, where)
            self.index[key] = r
        for i, e in enumerate(self.episodes):
            for k in ("name", "output", "split"):
                rc.require(e, k, f"{path}: episodes[{i}]")
        # The stem names an episode's figure and anchor: its output file's name without the
        # extension, or the whole name where two outputs share a stem (a.csv, a.txt), made
        # unique with a number if need be.
        stems = [os.path.splitext(e["output"])[0] for e in self.episodes]
        shared = collections.Counter(stems)
        used = set()
        for e, s in zip(self.episodes, stems):
            s = s if shared[s] == 1 else e["output"]
            unique, n = s, 1
            while unique in used:
                n += 1
                unique = f"{s}-{n}"
            used.add(unique)
            e["stem"] = unique

    def stat(self, episode, split, mode, quantity, horizon, field="median"):
        """A statistic of one record, or None when absent, null or n = 0."""
        r = self.index.get((episode, split, mode, quantity, horizon))
        if not r or not r.get("n"):
            return None
        v = r.get(field)
        return v if rc.finite(v) else None

    def count(self, episode, split, mode, quantity, horizon):
        r = self.index.get((episode, split, mode, quantity, horizon))
        return r.get("n", 0) if r else 0

    def episode_value(self, e, mode, quantity, horizon):
        # The records name an episode by its output name (its name, prefixed by its folder where
        # two collide).
        return self.stat(e["output"], e["split"], mode, quantity, horizon)

    def split_episodes(self, split):
        return [e for e in self.episodes if split == "all" or e["split"] == split]

    def verdict_split(self):
        """The split the verdict is about: held-out, else unseen, else all episodes."""
        for split in ("heldout", "unseen"):
            if self.split_episodes(split):
                return split
        return "all"

    def present_splits(self):
        return [s for s in ("heldout", "unseen", "train") if self.split_episodes(s)]


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def hlabel(h, long=False):
    if h is None:
        return "the last covered row" if long else "last row"
    return f"{h:g} s"


def unit_of(summary, q):
    return (summary.data.get("units") or {}).get(q) or QUANTITIES.get(q, (q, ""))[1]


def qlabel(q):
    return QUANTITIES.get(q, (q, ""))[0]


def read_trajectory(path, summary):
    """Columns of a trajectory CSV: numbers as floats (empty = NaN), regime as text."""
    needed = ["t_s", "covered", "regime"] + [c for _, _, cols in PANELS for c in cols]
    needed += ["rec_" + c for _, _, cols in PANELS for c in cols]
    if "angle_deg" in summary.quantities:
        needed += ["pitch", "yaw", "roll", "rec_pitch", "rec_yaw", "rec_roll", "angle_err_deg"]
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise rc.ReportError(f"{path}: empty file")
            missing = [c for c in needed if c not in header]
            if missing:
                raise rc.ReportError(f"{path}: row 1: missing columns {', '.join(missing)}")
            data = {c: [] for c in header}
            for line_no, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise rc.ReportError(f"{path}: row {line_no}: {len(row)} columns, "
                                         f"expected {len(header)}")
                for column, (c, v) in enumerate(zip(header, row), start=1):
                    if c == "regime":
                        data[c].append(v)
                        continue
                    try:
                        data[c].append(float(v) if v != "" else math.nan)
                    except ValueError:
                        raise rc.ReportError(f"{path}: row {line_no}, column {column}: "
                                             f"not a number: {v!r}") from None
    except FileNotFoundError:
        raise rc.ReportError(f"{path}: no such file (named in replay_summary.json)") from None
    if not data["t_s"]:
        raise rc.ReportError(f"{path}: no data rows")
    return data


# ---- choosing ---------------------------------------------------------------------------

def worst_key(summary, e):
    """Sort key, worst first: diverged rollouts, then open-loop |dx| at the last row."""
    v = summary.episode_value(e, "open_loop", "dx", None)
    if e.get("diverged_at_s") is not None:
        return (0, 0.0)
    return (1, -v) if v is not None else (2, 0.0)


def worst_episodes(summary, count):
    scored = [e for e in summary.episodes if e.get("diverged_at_s") is not None
              or summary.episode_value(e, "open_loop", "dx", None) is not None]
    return sorted(scored, key=lambda e: worst_key(summary, e))[:count]


def select_figures(summary, count):
    """(episode, role) to draw: the worst ones, then best and median by open-loop |dx| at
    the last row, then episodes of the verdict split, then the rest in order."""
    chosen = []

    def add(e, role):
        if len(chosen) < count and all(c is not e for c, _ in chosen):
            chosen.append((e, role))

    for e in worst_episodes(summary, WORST_COUNT):
        add(e, "worst")
    ranked = sorted((e for e in summary.episodes
                     if summary.episode_value(e, "open_loop", "dx", None) is not None),
                    key=lambda e: summary.episode_value(e, "open_loop", "dx", None))
    if ranked:
        add(ranked[0], "best")
        add(ranked[len(ranked) // 2], "median")
    for e in summary.split_episodes(summary.verdict_split()):
        add(e, "")
    for e in summary.episodes:
        add(e, "")
    return chosen


def stem(e):
    return e["stem"]  # set by Summary: unique among the episodes


def image_name(e):
    return f"{PLOTS}/trajectory_{stem(e)}.png"


def anchor(e):
    """The id of an episode's figure: its stem percent-encoded (quote), so that the id and the
    fragment linking to it are the same plain ASCII text whatever the file is called."""
    return "fig-" + quote(stem(e), safe="")


# ---- figures ----------------------------------------------------------------------------

# Trajectory panels: (title, unit, predicted columns); recorded ones are rec_*.
PANELS = [("position", "uu", ("x", "y", "z")),
          ("velocity", "uu/s", ("vx", "vy", "vz")),
          ("angular velocity", "rad/s", ("wx", "wy", "wz"))]
ANGLES = ("pitch", "yaw", "roll")


def uncovered_spans(data, covered=0):
    """[(t_start, t_end, regime)] of consecutive rows with covered = `covered` (0: the rows
    the model leaves out; 1: the rows it covers, labelled by what it does there)."""
    t, cov, reg = data["t_s"], data["covered"], data["regime"]
    spans = []
    i = 0
    half = (t[1] - t[0]) / 2 if len(t) > 1 else 0.0
    while i < len(t):
        if cov[i] == covered:
            j = i
            while j + 1 < len(t) and cov[j + 1] == covered and reg[j + 1] == reg[i]:
                j += 1
            spans.append((t[i] - half, t[j] + half, reg[i] or "not covered"))
            i = j + 1
        else:
            i += 1
    return spans


def draw_episode(plt, summary, e, data, role, path):
    """Recorded solid, predicted dashed, earlier model dotted; residuals; orientation."""
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    car = "angle_deg" in summary.quantities and "rec_pitch" in data
    has_ref = all(c in data for c in ("ref_x", "ref_y", "ref_z"))
    t = np.array(data["t_s"])
    col = {c: np.array(v) for c, v in data.items() if c != "regime"}
    n_panels = len(PANELS) + 1 + (2 if car else 0)
    fig, axes = plt.subplots(n_panels, 1, figsize=(10, 1.75 * n_panels + 1.2), sharex=True)
    ax_iter = iter(axes)
    for title, unit, cols in PANELS:
        ax = next(ax_iter)
        for c, colour in zip(cols, rc.COMPONENT_COLOURS):
            ax.plot(t, col["rec_" + c], color=colour, linestyle="-", linewidth=1.3)
            ax.plot(t, col[c], color=colour, linestyle="--", linewidth=1.3)
            if title == "position" and has_ref:
                ax.plot(t, col["ref_" + c], color=colour, linestyle=":", linewidth=1.3)
        ax.set_ylabel(f"{title}\n({unit})", fontsize=9)
    if car:
        ax = next(ax_iter)
        for c, colour in zip(ANGLES, rc.COMPONENT_COLOURS):
            rec = np.degrees(np.unwrap(col["rec_" + c]))
            pred = col[c]
            ok = np.isfinite(pred)
            shown = np.full(len(pred), np.nan)
            if ok.any():
                # Predicted angles unwrapped onto the recorded branch, so a yaw wrap at ±180°
                # does not draw a vertical line.
                d = np.degrees(np.angle(np.exp(1j * (pred[ok] - col["rec_" + c][ok]))))
                shown[ok] = rec[ok] + d
            ax.plot(t, rec, color=colour, linewidth=1.3)
            ax.plot(t, shown, color=colour, linestyle="--", linewidth=1.3)
        ax.set_ylabel("pitch, yaw, roll\n(deg; red, green,\nblue)", fontsize=9)
    # Residual panel: predicted - recorded position, components and norm.
    ax = next(ax_iter)
    for c, colour in zip(("x", "y", "z"), rc.COMPONENT_COLOURS):
        ax.plot(t, col[c] - col["rec_" + c], color=colour, linewidth=1.1)
    dx = np.sqrt(sum((col[c] - col["rec_" + c]) ** 2 for c in ("x", "y", "z")))
    ax.plot(t, dx, color="black", linewidth=1.6, label="|dx|, this model")
    if has_ref:
        ref_dx = np.sqrt(sum((col["ref_" + c] - col["rec_" + c]) ** 2 for c in ("x", "y", "z")))
        ax.plot(t, ref_dx, color=REFERENCE_COLOUR, linewidth=1.6, linestyle=":",
                label="|dx|, earlier model")
    ax.axhline(0, color="#888888", linewidth=0.6)
    ax.legend(loc="upper left", fontsize=8, frameon=True, framealpha=0.8)
    ax.set_ylabel("predicted −\nrecorded\nposition (uu)", fontsize=9)
    if car:
        ax = next(ax_iter)
        ax.plot(t, col["angle_err_deg"], color="black", linewidth=1.4)
        ax.set_ylabel("orientation\nerror (deg)", fontsize=9)
        ax.set_ylim(bottom=0)
    spans = uncovered_spans(data)
    regimes = list(dict.fromkeys(r for _, _, r in spans))
    doing = [x for x in uncovered_spans(data, covered=1) if x[2] != "covered"]
    covered_regimes = list(dict.fromkeys(r for _, _, r in doing))
    for ax in axes:
        for a, b, r in spans:
            ax.axvspan(a, b, color=REGIME_COLOURS[regimes.index(r) % len(REGIME_COLOURS)],
                       alpha=0.35, linewidth=0)
        for a, b, r in doing:
            ax.axvspan(a, b, ymin=0.95, ymax=1.0, linewidth=0,
                       color=COVERED_COLOURS[covered_regimes.index(r) % len(COVERED_COLOURS)])
        if e.get("diverged_at_s") is not None:
            ax.axvline(e["diverged_at_s"], color="#d62728", linewidth=1.2)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(t[0], t[-1])
    handles = [Line2D([], [], color=c, linewidth=2) for c in rc.COMPONENT_COLOURS]
    names = ["x / pitch", "y / yaw", "z / roll"] if car else ["x", "y", "z"]
    handles += [Line2D([], [], color="black", linestyle="-"),
                Line2D([], [], color="black", linestyle="--")]
    names += ["recorded", "predicted"]
    if has_ref:
        handles.append(Line2D([], [], color="black", linestyle=":"))
        names.append("earlier model")
    for r in regimes:
        handles.append(Patch(color=REGIME_COLOURS[regimes.index(r) % len(REGIME_COLOURS)],
                             alpha=0.35))
        names.append(f"not covered: {r}")
    for r in covered_regimes:
        handles.append(Patch(color=COVERED_COLOURS[covered_regimes.index(r) % len(COVERED_COLOURS)]))
        names.append(f"covered: {r}")
    if e.get("diverged_at_s") is not None:
        handles.append(Line2D([], [], color="#d62728"))
        names.append(f"diverged at {e['diverged_at_s']:g} s")
    height = fig.get_figheight()
    # Up to 8 entries on one line; more (the car's regimes) on lines of 6.
    fig.legend(handles, names, loc="upper center",
               ncol=len(names) if len(names) <= 8 else 6, fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 1.0 - 0.28 / height),
               handlelength=1.8, columnspacing=1.2)
    last = summary.episode_value(e, "open_loop", "dx", None)
    role_text = {"worst": ", among the worst", "best": ", best", "median": ", median"}.get(role, "")
    fig.suptitle(f"{summary.model}: {e['output']} ({SPLIT_NAMES.get(e['split'], e['split'])}"
                 f"{role_text}); open-loop |dx| at the last covered row: {na(last)} uu",
                 fontsize=11, x=0.01, ha="left", y=0.995)
    fig.tight_layout()
    fig.subplots_adjust(top=1.0 - 0.62 / height)  # room for the title and the legend
    rc.save_figure(fig, path)


def curve_series(summary, split, mode, quantity):
    """(horizons, medians, p90s) of the curve within the report horizons."""
    top = max([h for h in summary.horizons if h is not None], default=0.0) + 1e-9
    pts = sorted((c["horizon_s"], c.get("median"), c.get("p90")) for c in summary.curve
                 if c.get("split") == split and c.get("mode") == mode
                 and c.get("quantity") == quantity and rc.finite(c.get("horizon_s"))
                 and c["horizon_s"] <= top and c.get("n"))
    nan = float("nan")
    return ([p[0] for p in pts], [p[1] if rc.finite(p[1]) else nan for p in pts],
            [p[2] if rc.finite(p[2]) else nan for p in pts])


def draw_horizon_curve(plt, summary, split, path):
    """Open-loop median line and median-p90 band of this model and the earlier model, with
    the windowed median, over the report horizons; one panel per quantity. Returns False
    when there is nothing to draw."""
    keys = [q for q in summary.quantities
            if curve_series(summary, split, "open_loop", q)[0]
            or curve_series(summary, split, "windowed", q)[0]]
    if not keys:
        return False
    cols = 2 if len(keys) == 4 else len(keys)
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3.1 * rows + 1.0), squeeze=False)
    ticks = [h for h in summary.horizons if h is not None]
    series = [("open_loop", MODEL_COLOUR, "this model, open loop"),
              ("reference", REFERENCE_COLOUR, "earlier model, open loop")]
    for ax, q in zip(axes.flat, keys):
        values = []
        for mode, colour, _ in series:
            h, med, p90 = curve_series(summary, split, mode, q)
            if not h:
                continue
            ax.fill_between(h, med, p90, color=colour, alpha=0.15, linewidth=0)
            ax.plot(h, med, color=colour, linewidth=1.9)
            ax.plot(h, p90, color=colour, linewidth=1.0, linestyle="--")
            values += med + p90
        h, med, _ = curve_series(summary, split, "windowed", q)
        if h:
            ax.plot(h, med, color=MODEL_COLOUR, linewidth=1.2, linestyle=":")
            values += med
        positive = [v for v in values if rc.finite(v) and v > 0]
        if positive and math.log10(max(positive) / min(positive)) > LOG_AXIS_DECADES:
            ax.set_yscale("log")
            ax.set_title(f"{qlabel(q)}\n({unit_of(summary, q)}, log scale)", fontsize=10)
        else:
            ax.set_ylim(bottom=0)
            ax.set_title(f"{qlabel(q)}\n({unit_of(summary, q)})", fontsize=10)
        ax.set_xlim(0, ticks[-1] if ticks else 1)
        ax.set_xticks([0] + ticks)
        ax.set_xticklabels(["0"] + [f"{x:g}" for x in ticks])
        ax.set_xlabel("horizon (s)", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Line2D([], [], color=MODEL_COLOUR, linewidth=2),
               Line2D([], [], color=MODEL_COLOUR, linewidth=1, linestyle="--"),
               Line2D([], [], color=MODEL_COLOUR, linewidth=1.2, linestyle=":")]
    names = ["this model: median", "p90 (band: median to p90)",
             f"restarted every {summary.data.get('window_s', '?')} s: median"]
    if summary.has_reference:
        handles += [Line2D([], [], color=REFERENCE_COLOUR, linewidth=2),
                    Patch(color=REFERENCE_COLOUR, alpha=0.25)]
        names += ["earlier model: median", "earlier model: median to p90"]
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"{summary.model}: error against horizon, open loop from the first covered "
                 f"row, {SPLIT_NAMES[split]} episodes", fontsize=11)
    fig.tight_layout(rect=(0, 0.09 if rows == 1 else 0.06, 1, 1))
    rc.save_figure(fig, path)
    return True


# ---- the page ---------------------------------------------------------------------------

def na(v):
    """A number as the tables print it (two significant digits below 0.01, where the text
    table's three decimals would print 0.000), or n/a."""
    if not rc.finite(v):
        return "n/a"
    return f"{v:.2g}" if 0 < abs(v) < 0.01 else rc.fmt(v)


def paired(summary, split, quantity, horizon, field):
    """(model, reference, n, subset) statistics over the episodes of `split` that have both
    values; the aggregates of the JSON when both cover the same episodes (subset False)."""
    import numpy as np
    members = summary.split_episodes(split)
    pairs = [(summary.episode_value(e, "open_loop", quantity, horizon),
              summary.episode_value(e, "reference", quantity, horizon)) for e in members]
    model_only = [m for m, _ in pairs if m is not None]
    ref_only = [r for _, r in pairs if r is not None]
    both = [(m, r) for m, r in pairs if m is not None and r is not None]
    if not both:
        return summary.stat(None, split, "open_loop", quantity, horizon, field), None, \
            summary.count(None, split, "open_loop", quantity, horizon), False
    if len(both) == len(model_only) == len(ref_only):
        return (summary.stat(None, split, "open_loop", quantity, horizon, field),
                summary.stat(None, split, "reference", quantity, horizon, field),
                len(both), False)
    pick = (lambda a: float(np.median(a))) if field == "median" else \
        (lambda a: float(np.percentile(a, 90)))
    return pick([m for m, _ in both]), pick([r for _, r in both]), len(both), True


def ratio_cell(model, ref, with_ref):
    if not with_ref:
        return H("<td>{}</td>", na(model))
    if model is None and ref is None:
        return H("<td>n/a</td>")
    ratio = model / ref if rc.finite(model) and rc.finite(ref) and ref > 0 else None
    cls = ""
    ratio_text = "×n/a"
    if ratio is not None:
        cls = ("good" if ratio < 1 - SAME_RATIO_BAND else
               "bad" if ratio > 1 + SAME_RATIO_BAND else "")
        ratio_text = f"×{ratio:.2f}"
    cls_attr = H(" class=\"{}\"", cls) if cls else H("")
    return H("<td{}>{} <span class=\"vs\">/ {}</span> <b>{}</b></td>", cls_attr, na(model),
             na(ref), ratio_text)


def verdict_sentence(summary, split, ratios):
    """One sentence from the |dx| median ratios per horizon."""
    if not summary.has_reference:
        return "No earlier model to compare against: the table shows this model's errors only."
    groups = {"better": [], "worse": [], "about the same": [], "n/a": []}
    for h, r in ratios:
        if r is None:
            groups["n/a"].append(h)
        elif r < 1 - SAME_RATIO_BAND:
            groups["better"].append(h)
        elif r > 1 + SAME_RATIO_BAND:
            groups["worse"].append(h)
        else:
            groups["about the same"].append(h)
    known = len(ratios) - len(groups["n/a"])
    if known == 0:
        return "No horizon has both this model's and the earlier model's error: no verdict."

    def hs(lst):
        names = [hlabel(h, long=True) for h in lst]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

    for word in ("better", "worse", "about the same"):
        if len(groups[word]) == known:
            text = (f"This model is {word} than the earlier model at every horizon"
                    if word != "about the same" else
                    "This model is about the same as the earlier model at every horizon")
            break
    else:
        parts = [f"{word} at {hs(groups[word])}" for word in ("better", "worse",
                                                              "about the same")
                 if groups[word]]
        text = "Against the earlier model, this model is " + "; ".join(parts)
    if groups["n/a"]:
        text += f" (no comparison at {hs(groups['n/a'])})"
    return text + " (median |dx|, open loop)."


def verdict_html(summary, split):
    keys = [q for q in ("dx", "domega", "angle_deg") if q in summary.quantities]
    with_ref = summary.has_reference
    members = summary.split_episodes(split)
    head1 = H("<tr><th class=\"l\" rowspan=\"2\">horizon</th><th rowspan=\"2\">episodes</th>")
    head2 = H("<tr>")
    for q in keys:
        head1 += H("<th colspan=\"2\">{} ({})</th>", qlabel(q), unit_of(summary, q))
        head2 += H("<th>median</th><th>p90</th>")
    rows = H("")
    ratios = []
    any_subset = False
    # Quantities the earlier model has no value of at all (e.g. no orientation in the
    # shipped predictions) show this model's value alone.
    q_ref = {q: with_ref and any(k[2] == "reference" and k[3] == q and k[0] is None
                                 for k in summary.index) for q in keys}
    for h in summary.horizons:
        cells = H("")
        n_shown = None
        for q in keys:
            for field in ("median", "p90"):
                m, r, n, subset = paired(summary, split, q, h, field)
                any_subset |= subset
                if q == "dx" and field == "median":
                    n_shown = n
                    ratios.append((h, m / r if rc.finite(m) and rc.finite(r) and r > 0
                                   else None))
                cells += ratio_cell(m, r, q_ref[q])
        rows += H("<tr><td class=\"l\">{}</td><td>{}</td>{}</tr>\n", hlabel(h), n_shown or 0,
                  cells)
    which = {"heldout": f"the {len(members)} held-out episodes (not used by the fit)",
             "unseen": f"the {len(members)} unseen episodes",
             "all": f"all {len(members)} episodes: none is held out, so these errors are "
                    "in-sample"}[split]
    if not members:
        which = "no episode: nothing was scored"
    sentence = verdict_sentence(summary, split, ratios)
    cell_note = (H("Each cell: this model <span class=\"vs\">/ earlier model</span> "
                   "<b>×ratio</b> (green: this model better by more than {:.0%}; red: worse). ",
                   SAME_RATIO_BAND) if with_ref else H(""))
    if any_subset:
        cell_note += ("Where the two models have values on different episodes, both "
                      "columns are over the episodes that have both. ")
    ref_label = summary.reference.get("label") or summary.reference.get("kind")
    return H("<div id=\"verdict\">\n<h2>Verdict on {}</h2>\n"
             "<p class=\"sentence\">{}</p>\n"
             "<table class=\"verdict\">\n{}</tr>\n{}</tr>\n{}</table>\n"
             "<p class=\"note\">Open-loop error from the first covered row. {}"
             "Reference: {}.</p>\n</div>\n",
             which, sentence, head1, head2, rows, cell_note,
             ref_label if with_ref else "none")


def worst_html(summary, drawn):
    worst = worst_episodes(summary, WORST_COUNT)
    if not worst:
        return H("<div id=\"worst\"><h2>Worst episodes</h2><p>n/a: no episode has a scored "
                 "row.</p></div>\n")
    with_ref = summary.has_reference
    head = H("<tr><th class=\"l\">episode</th><th class=\"l\">split</th><th>duration s</th>"
             "<th>|dx| last row, uu</th>{}<th class=\"l\">note</th><th class=\"l\">files</th>"
             "</tr>\n", H("<th>earlier model</th>") if with_ref else H(""))
    rows = H("")
    for e in worst:
        name = e["output"]
        link = H("<a href=\"#{}\">{}</a>", anchor(e), name) if stem(e) in drawn else name
        note = (f"diverged at {e['diverged_at_s']:g} s" if e.get("diverged_at_s") is not None
                else "")
        ref_cell = (H("<td>{}</td>", na(summary.episode_value(e, "reference", "dx", None)))
                    if with_ref else H(""))
        rows += H("<tr><td class=\"l name\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>"
                  "{}<td class=\"l\">{}</td>"
                  "<td class=\"l\"><a href=\"{}\">CSV</a></td></tr>\n",
                  link, SPLIT_NAMES.get(e["split"], e["split"]), na(e.get("duration_s")),
                  na(summary.episode_value(e, "open_loop", "dx", None)), ref_cell, note,
                  rc.href(e["output"]))
    return H("<div id=\"worst\">\n<h2>Worst {} episodes (open-loop |dx| at the "
             "last covered row; diverged rollouts first; all splits)</h2>\n"
             "<table>\n{}{}</table>\n</div>\n", len(worst), head, rows)


def split_table(summary, split):
    """Aggregate errors of one split: blocks per mode, quantity rows x horizon columns."""
    modes = [("open_loop", "open loop from the first covered row (one value per episode)"),
             ("windowed", f"restarted from the recording every "
                          f"{summary.data.get('window_s', '?')} s (one value per restart)")]
    if summary.has_reference:
        modes.append(("reference", f"{summary.reference.get('label') or 'earlier model'}, "
                                   "open loop"))
    head = H("<tr><th class=\"l\">quantity</th>{}</tr>\n",
             H("").join(H("<th>{}</th>", hlabel(h)) for h in summary.horizons))
    rows = H("")
    for mode, title in modes:
        rows += H("<tr><th class=\"l sub\" colspan=\"{}\">{}</th></tr>\n",
                  len(summary.horizons) + 1, title)
        for q in summary.quantities:
            if not any((None, split, mode, q, h) in summary.index for h in summary.horizons):
                continue
            cells = H("")
            for h in summary.horizons:
                if mode == "windowed" and h is None:
                    cells += H("<td class=\"note\">-</td>")
                    continue
                m = summary.stat(None, split, mode, q, h)
                p = summary.stat(None, split, mode, q, h, "p90")
                n = summary.count(None, split, mode, q, h)
                cells += (H("<td>{} / {} <span class=\"note\">({})</span></td>", na(m), na(p), n)
                          if n else H("<td>n/a <span class=\"note\">(0)</span></td>"))
            rows += H("<tr><td class=\"l\">{} ({})</td>{}</tr>\n", qlabel(q), unit_of(summary, q),
                      cells)
    return H("<table>\n{}{}</table>\n", head, rows)


def episodes_table(summary, split, drawn):
    members = summary.split_episodes(split)
    car = "angle_deg" in summary.quantities
    with_ref = summary.has_reference
    short = [f"{h:g} s" if h is not None else "last" for h in summary.horizons]
    head = H("<tr><th class=\"l\">episode (CSV)</th><th>rows scored</th><th>s</th>{}{}"
             "<th>|dω| last</th>{}<th class=\"l\">figure</th><th class=\"l\">note</th></tr>\n",
             H("").join(H("<th>|dx| {}</th>", h) for h in short),
             H("<th>earlier |dx| last</th>") if with_ref else H(""),
             H("<th>angle last</th>") if car else H(""))
    rows = H("")
    for e in members:
        note = []
        if e.get("diverged_at_s") is not None:
            note.append(f"diverged at {e['diverged_at_s']:g} s")
        for regime, count in (e.get("rows_left_out") or {}).items():
            note.append(f"{count} rows {regime}")
        fig = H("<a href=\"#{}\">figure</a>", anchor(e)) if stem(e) in drawn else H("")
        cells = H("").join(H("<td>{}</td>", na(summary.episode_value(e, "open_loop", "dx", h)))
                           for h in summary.horizons)
        if with_ref:
            cells += H("<td>{}</td>", na(summary.episode_value(e, "reference", "dx", None)))
        cells += H("<td>{}</td>", na(summary.episode_value(e, "open_loop", "domega", None)))
        if car:
            cells += H("<td>{}</td>", na(summary.episode_value(e, "open_loop", "angle_deg", None)))
        rows += H("<tr><td class=\"l name\"><a href=\"{}\">{}</a></td><td>{} / {}</td><td>{}</td>"
                  "{}<td class=\"l\">{}</td><td class=\"l note\">{}</td></tr>\n",
                  rc.href(e["output"]), e["output"], e.get("rows_scored", "n/a"),
                  e.get("rows", "n/a"), na(e.get("duration_s")), cells, fig, "; ".join(note))
    table = H("<table class=\"episodes\">\n{}{}</table>\n", head, rows)
    if len(members) > LONG_LIST_ROWS:
        return H("<details><summary>{} {} episodes, one row each (open-loop |dx| in uu, |dω| "
                 "in rad/s, angle in deg)</summary>\n{}</details>\n",
                 len(members), SPLIT_NAMES[split], table)
    return table


def left_out_html(summary):
    totals = {}
    for e in summary.episodes:
        for regime, count in (e.get("rows_left_out") or {}).items():
            n, eps = totals.get(regime, (0, 0))
            totals[regime] = (n + count, eps + 1)
    if not totals:
        return H("<p>Every row of every episode is covered by the model.</p>\n")
    rows = H("").join(H("<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>\n", r, n, eps)
                      for r, (n, eps) in sorted(totals.items(), key=lambda x: -x[1][0]))
    total = sum(n for n, _ in totals.values())
    return H("<details><summary>{} rows left out (not covered by the model), by "
             "regime</summary>\n<table>\n<tr><th class=\"l\">regime</th><th>rows</th>"
             "<th>episodes</th></tr>\n{}</table>\n</details>\n", total, rows)


def skipped_html(summary):
    skipped = summary.data.get("skipped") or []
    if not skipped:
        return H("<p id=\"skipped\">No file was skipped.</p>\n")
    rows = H("").join(H("<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td>"
                        "</tr>\n", s.get("path", "?"), s.get("reason", "")) for s in skipped)
    return H("<details id=\"skipped\"><summary>{} skipped, with the reason</summary>\n"
             "<table>\n<tr><th class=\"l\">file</th><th class=\"l\">reason</th></tr>\n{}"
             "</table>\n</details>\n", plural(len(skipped), "file"), rows)


def unreadable_html(summary):
    """The files --keep-going passed over, each with its one-line reason (shown open; the
    page's first line links here)."""
    bad = summary.data.get("unreadable") or []
    if not bad:
        return H("")
    rows = H("").join(H("<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td>"
                        "</tr>\n", s.get("path", "?"), s.get("reason", "")) for s in bad)
    return H("<div id=\"unreadable\"><p><b>{} could not be read</b> (--keep-going: left out, "
             "the rest replayed):</p>\n<table>\n<tr><th class=\"l\">file</th>"
             "<th class=\"l\">reason</th></tr>\n{}</table></div>\n",
             plural(len(bad), "file"), rows)


def notes_html(summary):
    """What the reader noted about the files: cuts at gaps of dropped frames, parts left out,
    columns not read, a missing handbrake column."""
    notes = summary.data.get("notes") or []
    if not notes:
        return H("")
    rows = H("").join(H("<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td>"
                        "</tr>\n", n.get("path", "?"), n.get("note", "")) for n in notes)
    return H("<details id=\"notes\"><summary>{} on the recordings (cuts at gaps of dropped "
             "frames, columns not read)</summary>\n<table>\n<tr><th class=\"l\">file</th>"
             "<th class=\"l\">note</th></tr>\n{}</table>\n</details>\n",
             plural(len(notes), "note"), rows)


def run_html(summary, out_dir):
    d = summary.data
    files = H(" · ").join(H("<a href=\"{}\">{}</a>", rc.href(name), name) for name in
                          ("replay_summary.json", "summary.txt")
                          if os.path.exists(os.path.join(out_dir, name)))
    rows = [("model", summary.model),
            ("tool", d.get("tool", "rlsim replay")),
            ("git revision", H("<code>{}</code>", d.get("git_revision", "unknown"))),
            ("coefficients", d.get("coefficients_source", "n/a")),
            ("earlier model", summary.reference.get("label")
             or summary.reference.get("kind", "none")),
            ("report horizons", ", ".join(hlabel(h, long=True) for h in summary.horizons)),
            ("restart window", f"{d.get('window_s', 'n/a')} s"),
            ("files", files or "n/a")]
    opts = d.get("options") or {}
    opt_rows = H("").join(H("<tr><td>{}</td><td>{}</td></tr>\n", k, rc.json_cell(v))
                          for k, v in opts.items())
    paths = H("").join(H("<li><code>{}</code></li>\n", e.get("path", e["name"]))
                       for e in summary.episodes)
    options = (H("<details><summary>options ({})</summary>\n<table class=\"kv\">\n{}</table>\n"
                 "</details>\n", len(opts), opt_rows) if opts else H(""))
    return (rc.kv_table(rows) + options
            + H("<details><summary>recordings ({} paths)</summary>\n<ul class=\"paths\">\n{}"
                "</ul>\n</details>\n", len(summary.episodes), paths))


def build(out_dir, figure_count, shown_dir=None):
    plt = rc.import_pyplot(TOOL)
    summary_path = os.path.join(out_dir, "replay_summary.json")
    summary = Summary(summary_path)
    model = summary.model

    plots_dir = os.path.join(out_dir, PLOTS)
    os.makedirs(plots_dir, exist_ok=True)
    for stale in glob.glob(os.path.join(plots_dir, "*.png")):
        os.unlink(stale)  # this folder is ours: a re-run must not leave old figures behind

    figures = []
    for e, role in select_figures(summary, figure_count):
        data = read_trajectory(os.path.join(out_dir, e["output"]), summary)
        draw_episode(plt, summary, e, data, role, os.path.join(out_dir, image_name(e)))
        figures.append((e, role))
    drawn = {stem(e) for e, _ in figures}

    split = summary.verdict_split()
    curve_image = f"{PLOTS}/error_vs_horizon.png"
    has_curve = draw_horizon_curve(plt, summary, split, os.path.join(out_dir, curve_image))

    coeffs = summary.data.get("coefficients")
    coeff_entries = plot_fit.coefficient_entries(coeffs, summary_path) if coeffs else []
    coeff_image = f"{PLOTS}/coefficients.png"
    draw_coeffs = coeff_entries and (plot_fit.has_std_errors(coeff_entries)
                                     or plot_fit.differs_from_defaults(coeff_entries))
    if draw_coeffs:
        plot_fit.draw_coefficients(plt, coeff_entries, f"{model}: coefficients used",
                                   os.path.join(out_dir, coeff_image), value_label="used")
    body = page_body(summary, out_dir, split, figures, drawn, has_curve, curve_image,
                     coeff_entries, coeff_image if draw_coeffs else None)
    rc.write_atomic(os.path.join(out_dir, "index.html"), rc.page(f"rlsim replay: {model}", body))
    print(f"{TOOL}: wrote {os.path.join(shown_dir or out_dir, 'index.html')} "
          f"({len(figures)} episode figures)")


def page_body(summary, out_dir, split, figures, drawn, has_curve, curve_image, coeff_entries,
              coeff_image):
    """The page's HTML (a Markup): every text in it escaped by markupsafe (rc.html)."""
    model = summary.model
    counts = ", ".join(f"{len(summary.split_episodes(s))} {SPLIT_NAMES[s]}"
                       for s in summary.present_splits())
    n_skipped = len(summary.data.get("skipped") or [])
    skipped_link = (H("<a href=\"#skipped\">{}</a>", plural(n_skipped, "file") + " skipped")
                    if n_skipped else "no file skipped")
    n_bad = len(summary.data.get("unreadable") or [])
    if n_bad:
        skipped_link = H("{} · <a href=\"#unreadable\">{}</a>", skipped_link,
                         plural(n_bad, "file") + " unreadable")
    body = [H("<h1>Replay of model {}</h1>", model),
            H("<p class=\"lead\">Coefficients: {} · {} scored{} · {}<br>"
              "<a href=\"#horizon\">error vs horizon</a> · <a href=\"#tables\">tables by "
              "split</a> · <a href=\"#episodes\">episode figures</a> · <a href=\"#coefficients\">"
              "coefficients</a> · <a href=\"#run\">run details and files</a></p>",
              summary.data.get("coefficients_source", "n/a"),
              plural(len(summary.episodes), "episode"), f" ({counts})" if counts else "",
              skipped_link),
            verdict_html(summary, split),
            worst_html(summary, drawn)]
    body.append(H("<h2 id=\"horizon\">Error against horizon</h2>"))
    if has_curve:
        body += [H("<p class=\"note\">{} episodes, up to the longest report horizon; a horizon "
                   "counts only the episodes that last that long.</p>",
                   SPLIT_NAMES[split].capitalize()),
                 H("<img src=\"{}\" alt=\"error against horizon\">", rc.href(curve_image))]
    else:
        body.append(H("<p>n/a: no curve data.</p>"))
    body.append(H("<h2 id=\"tables\">Errors by split</h2>"))
    body.append(H("<p class=\"note\">Median / p90 (number of values). Training episodes are "
                  "in-sample: the coefficients were fitted on them.</p>"))
    for s in summary.present_splits():
        members = summary.split_episodes(s)
        body += [H("<h3 id=\"split-{}\">{} episodes ({})</h3>", s,
                   SPLIT_NAMES[s].capitalize(), len(members)),
                 split_table(summary, s), episodes_table(summary, s, drawn)]
    body += [H("<h3>Rows left out and files skipped</h3>"), left_out_html(summary),
             unreadable_html(summary), skipped_html(summary), notes_html(summary)]
    body.append(H("<h2 id=\"episodes\">Episode figures</h2>"))
    body.append(H("<p class=\"note\">Recorded solid, predicted dashed, earlier model dotted; "
                  "colours are components (x red, y green, z blue). The residual panel is "
                  "predicted − recorded position and its norm |dx| (black). Shaded: rows the "
                  "model does not cover.</p>"))
    for e, role in figures:
        role_text = {"worst": " (among the worst)", "best": " (best)",
                     "median": " (median)"}.get(role, "")
        body += [H("<h3 id=\"{}\">{} · {}{}</h3>", anchor(e), e["output"],
                   SPLIT_NAMES.get(e["split"], e["split"]), role_text),
                 H("<img src=\"{}\" alt=\"{}: recorded vs predicted\">", rc.href(image_name(e)),
                   e["output"])]
    body.append(H("<h2 id=\"coefficients\">Coefficients used</h2>"))
    if coeff_entries:
        body.append(plot_fit.coefficients_table_html(coeff_entries, value_label="used"))
        if coeff_image:
            body.append(H("<img src=\"{}\" alt=\"coefficients\">", rc.href(coeff_image)))
    else:
        body.append(H("<p>n/a</p>"))
    body += [H("<h2 id=\"run\">Run details and files</h2>"), run_html(summary, out_dir)]
    return H("\n").join(body)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="folder written by rlsim replay --out")
    parser.add_argument("--shown-as", metavar="DIR", default=None,
                        help="the folder's final name, for messages (rlsim draws the page in a "
                             "staged folder that then replaces DIR)")
    parser.add_argument("--episodes", type=int, default=DEFAULT_FIGURES, metavar="N",
                        help=f"episode figures to draw (default {DEFAULT_FIGURES}: the worst "
                             f"{WORST_COUNT}, best and median by open-loop |dx| at the last "
                             "row, then held-out ones)")
    args = parser.parse_args()
    if args.episodes < 0:
        parser.error("--episodes must be 0 or more")
    rc.run_main(TOOL, lambda: build(args.out_dir, args.episodes, args.shown_as))


if __name__ == "__main__":
    main()
