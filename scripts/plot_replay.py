#!/usr/bin/python3
# Plots an `rlsim replay --out DIR` folder (recorded solid vs predicted dashed per episode,
# error against horizon, comparison with the shipped predictions) and writes DIR/index.html.
"""Usage: plot_replay.py OUT_DIR [--episodes N]

Reads OUT_DIR/replay_summary.json and the trajectory CSVs it names; writes PNGs into
OUT_DIR/plots/ and a self-contained OUT_DIR/index.html (relative links, no JavaScript)."""
import argparse
import csv
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_common as rc  # noqa: E402
import plot_fit  # noqa: E402

TOOL = "plot_replay.py"
PLOTS = "plots"  # subfolder of OUT_DIR that this script owns
FIGSIZE = (10, 7)  # inches; 1000 x 700 px at rc.FIG_DPI

# Panels of an episode figure: (title, unit, predicted columns); recorded ones are rec_*.
PANELS = [("position", "uu", ("x", "y", "z")),
          ("velocity", "uu/s", ("vx", "vy", "vz")),
          ("angular velocity", "rad/s", ("wx", "wy", "wz"))]
QUANTITIES = rc.QUANTITIES


def read_trajectory(path):
    """Columns of a trajectory CSV as lists of floats, checked for the expected header."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise rc.ReportError(f"{path}: empty file")
            needed = ["t_s"] + [c for _, _, cols in PANELS for c in cols]
            needed += ["rec_" + c for _, _, cols in PANELS for c in cols]
            missing = [c for c in needed if c not in header]
            if missing:
                raise rc.ReportError(f"{path}: row 1: missing columns {', '.join(missing)}")
            data = {c: [] for c in header}
            for line_no, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise rc.ReportError(f"{path}: row {line_no}: {len(row)} columns, "
                                         f"expected {len(header)}")
                for c, v in zip(header, row):
                    try:
                        data[c].append(float(v))
                    except ValueError:
                        column = header.index(c) + 1
                        raise rc.ReportError(f"{path}: row {line_no}, column {column}: "
                                             f"not a number: {v!r}") from None
    except FileNotFoundError:
        raise rc.ReportError(f"{path}: no such file (named in replay_summary.json)") from None
    if not data["t_s"]:
        raise rc.ReportError(f"{path}: no data rows")
    return data


def last_error(episode, key="dx"):
    """Open-loop error at the last row, or None."""
    sample = (episode.get("open_loop") or {}).get("last")
    return sample.get(key) if isinstance(sample, dict) else None


def select_episodes(episodes, count):
    """Indices to draw with their roles: best, median and worst by open-loop |dx| at the
    last row, then the first episodes, up to `count`; all of them if there are no more."""
    if count <= 0:
        return []
    if len(episodes) <= count:
        return [(i, "") for i in range(len(episodes))]
    ranked = sorted((i for i, e in enumerate(episodes) if rc.finite(last_error(e))),
                    key=lambda i: last_error(episodes[i]))
    chosen = []
    if ranked:
        for i, role in ((ranked[0], "best"), (ranked[len(ranked) // 2], "median"),
                        (ranked[-1], "worst")):
            if i not in [c for c, _ in chosen]:
                chosen.append((i, role))
    chosen = chosen[:count]
    for i in range(len(episodes)):
        if len(chosen) >= count:
            break
        if i not in [c for c, _ in chosen]:
            chosen.append((i, "first"))
    return chosen


def image_name(output_name):
    stem = os.path.splitext(output_name)[0]
    return f"{PLOTS}/trajectory_{stem}.png"


def draw_episode(plt, summary, episode, data, role, path):
    """Three panels, one colour per component, recorded solid and predicted dashed."""
    from matplotlib.lines import Line2D
    fig, axes = plt.subplots(3, 1, figsize=FIGSIZE, sharex=True)
    t = data["t_s"]
    for ax, (title, unit, cols) in zip(axes, PANELS):
        for c, colour in zip(cols, rc.COMPONENT_COLOURS):
            ax.plot(t, data["rec_" + c], color=colour, linestyle="-", linewidth=1.4)
            ax.plot(t, data[c], color=colour, linestyle="--", linewidth=1.4)
        ax.set_ylabel(f"{title}\n({unit})")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(t[0], t[-1])
    handles = [Line2D([], [], color=c, linewidth=2) for c in rc.COMPONENT_COLOURS]
    handles += [Line2D([], [], color="black", linestyle="-"),
                Line2D([], [], color="black", linestyle="--")]
    axes[0].legend(handles, ["x", "y", "z", "recorded", "predicted"], loc="lower right",
                   ncol=5, fontsize=9, frameon=False, bbox_to_anchor=(1.0, 1.0),
                   borderaxespad=0.1)
    errors = [f"|dx| {rc.fmt(last_error(episode, 'dx'))} uu",
              f"|dv| {rc.fmt(last_error(episode, 'dv'))} uu/s",
              f"|dω| {rc.fmt(last_error(episode, 'domega'))} rad/s"]
    if rc.finite(last_error(episode, "angle_deg")):
        errors.append(f"angle {rc.fmt(last_error(episode, 'angle_deg'))}°")
    role_text = f" ({role} of the run)" if role in ("best", "median", "worst") else ""
    fig.suptitle(f"{summary['model']}: {episode['name']}{role_text}\n"
                 f"open loop from row 0; error at last row: {', '.join(errors)}",
                 fontsize=11, x=0.01, ha="left")
    fig.tight_layout()
    rc.save_figure(fig, path)


def quantity_keys(summary):
    curve = summary.get("windowed_curve") or {}
    return [k for k in QUANTITIES if k in curve]


def draw_horizon_curve(plt, summary, path):
    """Median and p90 of windowed-restart errors against horizon, one panel per quantity."""
    curve = summary["windowed_curve"]
    h = curve.get("horizon_s") or []
    keys = quantity_keys(summary)
    reported = [float(x[:-1]) for x in summary.get("horizons", []) if x.endswith("s")]
    cols = 2 if len(keys) == 4 else len(keys)  # a 2x2 grid, or one row (no orientation)
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3.0 * rows + 0.8), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        label, unit = QUANTITIES[key]
        med = [v if rc.finite(v) else float("nan") for v in curve[key]["median"]]
        p90 = [v if rc.finite(v) else float("nan") for v in curve[key]["p90"]]
        ax.fill_between(h, med, p90, color="#1f77b4", alpha=0.15, linewidth=0)
        ax.plot(h, med, color="#1f77b4", linewidth=1.8, label="median")
        ax.plot(h, p90, color="#1f77b4", linewidth=1.2, linestyle="--", label="p90")
        for r in reported:
            ax.axvline(r, color="#999999", linestyle=":", linewidth=1)
        ax.set_title(f"{label} ({unit})", fontsize=10)
        ax.set_xlabel("horizon (s)")
        ax.set_xlim(0, h[-1] if h else 1)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    fig.suptitle(f"{summary['model']}: error against horizon, restarting from the recorded "
                 f"state every {summary.get('window_s', '?')} s (all episodes; dotted: "
                 "reported horizons)", fontsize=11)
    fig.tight_layout()
    rc.save_figure(fig, path)


def baseline_data(summary):
    """(keys, horizon labels) of the baseline comparison, or None when there is none."""
    agg = summary.get("aggregate") or {}
    if not agg.get("episodes_with_baseline") or "baseline" not in agg:
        return None
    keys = [k for k in QUANTITIES if k in agg["baseline"]]
    return keys, summary.get("horizons", [])


def draw_baseline(plt, summary, path):
    """Grouped bars: median open-loop error of this model vs the shipped prediction files."""
    agg = summary["aggregate"]
    keys, labels = baseline_data(summary)
    panels = [(k, [agg["open_loop_on_baseline_episodes"][k][lb]["median"] for lb in labels],
               [agg["baseline"][k][lb]["median"] for lb in labels]) for k in keys]
    rc.draw_paired_bars(plt, panels, labels, ("this model", "shipped prediction"),
                        f"{summary['model']}: median open-loop error against the shipped "
                        f"prediction_*.csv ({agg['episodes_with_baseline']} episodes; ×: ratio)",
                        path)


# ---- the page ---------------------------------------------------------------------------

def stats_table(block, keys, labels, what):
    """Quantity rows x horizon columns of 'median / p90 (n)' from an aggregate block."""
    head = "<tr><th class=\"l\">quantity</th>" + "".join(
        f"<th>{rc.esc(lb)}</th>" for lb in labels) + "</tr>\n"
    rows = ""
    for key in keys:
        if key not in block:
            continue
        label, unit = QUANTITIES[key]
        cells = ""
        for lb in labels:
            s = block[key].get(lb)
            if not s or not s.get("n"):
                cells += "<td>-</td>"
            else:
                cells += (f"<td>{rc.fmt(s['median'])} / {rc.fmt(s['p90'])}"
                          f" <span class=\"note\">({s['n']})</span></td>")
        rows += f"<tr><td class=\"l\">{rc.esc(label)} ({rc.esc(unit)})</td>{cells}</tr>\n"
    return (f"<h3>{what}</h3>\n<p class=\"note\">median / p90 (number of samples)</p>\n"
            f"<table>\n{head}{rows}</table>\n")


def baseline_table(agg, keys, labels):
    head = ("<tr><th class=\"l\">quantity</th>" + "".join(
        f"<th colspan=\"3\">{rc.esc(lb)}</th>" for lb in labels) + "</tr>\n<tr><th></th>"
        + "<th>model</th><th>shipped</th><th>ratio</th>" * len(labels) + "</tr>\n")
    rows = ""
    for key in keys:
        label, unit = QUANTITIES[key]
        cells = ""
        for lb in labels:
            m = agg["open_loop_on_baseline_episodes"][key][lb]["median"]
            b = agg["baseline"][key][lb]["median"]
            r = agg["ratio_to_baseline_median"][key][lb]
            ratio = "<td>-</td>"
            if rc.finite(r) and r > 0:
                ratio = f"<td class=\"{'good' if r < 1 else 'bad'}\">{r:.2f}</td>"
            cells += f"<td>{rc.fmt(m)}</td><td>{rc.fmt(b)}</td>{ratio}"
        rows += f"<tr><td class=\"l\">{rc.esc(label)} ({rc.esc(unit)})</td>{cells}</tr>\n"
    return f"<table>\n{head}{rows}</table>\n"


def fit_roles(coeffs):
    """Recording path -> "train" / "held out" from a coefficients provenance (rlfit fit)."""
    prov = (coeffs or {}).get("provenance") or {}
    roles = {}
    for key, role in (("train_episodes", "train"), ("heldout_episodes", "held out")):
        for path in prov.get(key) or []:
            roles[os.path.realpath(path)] = role
    return roles


def episodes_table(episodes, drawn, roles):
    has_angle = any(rc.finite(last_error(e, "angle_deg")) for e in episodes)
    head = ("<tr><th class=\"l\">episode (predicted trajectory CSV)</th><th>rows</th>"
            "<th>duration s</th><th>|dx| uu</th><th>|dv| uu/s</th><th>|dω| rad/s</th>"
            + ("<th>angle deg</th>" if has_angle else "")
            + ("<th class=\"l\">in the fit</th>" if roles else "")
            + "<th class=\"l\">figure</th><th class=\"l\">recording</th></tr>\n")
    rows = ""
    for i, e in enumerate(episodes):
        out = e.get("output", e["name"])
        fig = ""
        if i in drawn:
            role = drawn[i] if drawn[i] in ("best", "median", "worst") else "figure"
            fig = f"<a href=\"#ep{i}\">{rc.esc(role)}</a>"
        rows += (f"<tr><td class=\"l\"><a href=\"{rc.href(out)}\">{rc.esc(out)}</a></td>"
                 f"<td>{e.get('rows', '-')}</td><td>{rc.fmt(e.get('duration_s'))}</td>"
                 f"<td>{rc.fmt(last_error(e, 'dx'))}</td><td>{rc.fmt(last_error(e, 'dv'))}</td>"
                 f"<td>{rc.fmt(last_error(e, 'domega'))}</td>"
                 + (f"<td>{rc.fmt(last_error(e, 'angle_deg'))}</td>" if has_angle else "")
                 + (f"<td class=\"l\">{roles.get(os.path.realpath(e.get('path', '')), '-')}"
                    "</td>" if roles else "")
                 + f"<td class=\"l\">{fig}</td>"
                 f"<td class=\"l note\">{rc.esc(e.get('path', ''))}</td></tr>\n")
    note = "Open-loop error at the last row, predicted from row 0 only."
    if roles:
        note += (" The coefficients were fitted on the episodes marked train: their errors "
                 "are in-sample.")
    return f"<p class=\"note\">{note}</p>\n<table>\n{head}{rows}</table>\n"


def build(out_dir, episode_count):
    plt = rc.import_pyplot(TOOL)
    summary_path = os.path.join(out_dir, "replay_summary.json")
    summary = rc.read_json(summary_path)
    model = rc.require(summary, "model", summary_path)
    episodes = rc.require(summary, "episodes", summary_path)
    labels = rc.require(summary, "horizons", summary_path)
    agg = rc.require(summary, "aggregate", summary_path)
    rc.require(summary, "windowed_curve", summary_path)

    plots_dir = os.path.join(out_dir, PLOTS)
    os.makedirs(plots_dir, exist_ok=True)
    for stale in glob.glob(os.path.join(plots_dir, "*.png")):
        os.unlink(stale)  # this folder is ours: a re-run must not leave old figures behind

    chosen = select_episodes(episodes, episode_count)
    drawn = {}
    figures = []
    for i, role in chosen:
        e = episodes[i]
        out = e.get("output", e["name"])
        data = read_trajectory(os.path.join(out_dir, out))
        image = image_name(out)
        draw_episode(plt, summary, e, data, role, os.path.join(out_dir, image))
        drawn[i] = role
        figures.append((i, e, role, image))

    curve_image = f"{PLOTS}/error_vs_horizon.png"
    has_curve = bool(summary["windowed_curve"].get("horizon_s")) and quantity_keys(summary)
    if has_curve:
        draw_horizon_curve(plt, summary, os.path.join(out_dir, curve_image))
    base = baseline_data(summary)
    base_image = f"{PLOTS}/against_shipped_predictions.png"
    if base:
        draw_baseline(plt, summary, os.path.join(out_dir, base_image))

    coeffs = summary.get("coefficients")
    coeff_entries = plot_fit.coefficient_entries(coeffs, summary_path) if coeffs else []
    coeff_image = f"{PLOTS}/coefficients.png"
    draw_coeffs = coeff_entries and (plot_fit.has_std_errors(coeff_entries)
                                     or plot_fit.differs_from_defaults(coeff_entries))
    if draw_coeffs:
        plot_fit.draw_coefficients(plt, coeff_entries, f"{model}: coefficients used",
                                   os.path.join(out_dir, coeff_image), value_label="used")

    # The page.
    opts = summary.get("options") or {}
    keys = [k for k in QUANTITIES if k in (agg.get("open_loop") or {})]
    run_rows = [("model", rc.esc(model)),
                ("episodes", str(len(episodes))),
                ("coefficients", rc.esc(summary.get("coefficients_path", "-"))),
                ("git revision", f"<code>{rc.esc(summary.get('git_revision', 'unknown'))}</code>")]
    run_rows += [(f"option {k}", rc.json_cell(v) if v != [] or k != "paths"
                  else "<i>(none: the model's default recordings under data_root)</i>")
                 for k, v in opts.items()]
    if coeffs and coeffs.get("integration"):
        run_rows.append(("integration", rc.json_cell(coeffs["integration"])))
    body = [f"<h1>Replay of model {rc.esc(model)}: {len(episodes)} episodes</h1>",
            "<p class=\"lead\">Written by <code>rlsim replay</code>; drawn by "
            "<code>scripts/plot_replay.py</code>. Files: "
            + "".join(f"<a href=\"{name}\">{name}</a> · " for name in
                      ("summary.txt", "replay_summary.json")
                      if os.path.exists(os.path.join(out_dir, name)))
            + "<a href=\"#episodes\">trajectory CSVs</a></p>",
            "<h2>Run</h2>", rc.kv_table(run_rows)]
    if coeffs and coeffs.get("provenance"):
        body += ["<h3>Where the coefficients came from</h3>",
                 rc.kv_table([(k, rc.json_cell(v)) for k, v in coeffs["provenance"].items()])]
    body += ["<h2>Aggregate errors</h2>",
             stats_table(agg.get("open_loop", {}), keys, labels,
                         "Open loop from row 0 (one sample per episode)"),
             stats_table(agg.get("windowed", {}), keys, [lb for lb in labels if lb != "last"],
                         f"Windowed: restart from the recorded state every "
                         f"{summary.get('window_s', '?')} s")]
    if base:
        body += [f"<h3>Against the shipped prediction_*.csv ({agg['episodes_with_baseline']} "
                 "episodes; medians of open-loop error; ratio below 1: this model is "
                 "better)</h3>", baseline_table(agg, base[0], base[1])]
    summary_txt = os.path.join(out_dir, "summary.txt")
    if os.path.exists(summary_txt):
        with open(summary_txt, encoding="utf-8") as f:
            body += ["<details><summary>summary.txt as printed</summary>",
                     f"<pre>{rc.esc(f.read())}</pre></details>"]
    if has_curve:
        body += ["<h2>Error against horizon</h2>",
                 "<p class=\"note\">Every restart of every episode; the longest horizons rest "
                 "on the few episodes that last that long.</p>",
                 f"<img src=\"{rc.href(curve_image)}\" alt=\"error against horizon\">"]
    if base:
        body += ["<h2>Against the shipped predictions</h2>",
                 f"<img src=\"{rc.href(base_image)}\" alt=\"model vs shipped predictions\">"]
    body += ["<h2 id=\"episodes\">Episodes</h2>",
             episodes_table(episodes, drawn, fit_roles(coeffs))]
    for i, e, role, image in figures:
        role_text = f" ({role} |dx| at the last row)" if role in ("best", "median", "worst") else ""
        body += [f"<h3 id=\"ep{i}\">{rc.esc(e['name'])}{rc.esc(role_text)}</h3>",
                 f"<img src=\"{rc.href(image)}\" alt=\"{rc.esc(e['name'])}: recorded vs "
                 "predicted\">"]
    if coeff_entries:
        body += ["<h2>Coefficients used</h2>",
                 plot_fit.coefficients_table_html(coeff_entries, value_label="used")]
        if draw_coeffs:
            body.append(f"<img src=\"{rc.href(coeff_image)}\" alt=\"coefficients\">")
    rc.write_atomic(os.path.join(out_dir, "index.html"),
                    rc.page(f"rlsim replay: {model}", "\n".join(body)))
    print(f"{TOOL}: wrote {os.path.join(out_dir, 'index.html')} "
          f"({len(figures)} episode figures)")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="folder written by rlsim replay --out")
    parser.add_argument("--episodes", type=int, default=6, metavar="N",
                        help="episode figures to draw (default 6: best, median and worst by "
                             "open-loop |dx| at the last row, then the first ones)")
    args = parser.parse_args()
    if args.episodes < 0:
        parser.error("--episodes must be 0 or more")
    rc.run_main(TOOL, lambda: build(args.out_dir, args.episodes))


if __name__ == "__main__":
    main()
