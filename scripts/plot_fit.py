#!/usr/bin/python3
# Plots a coefficients JSON written by `rlfit fit`: each coefficient with its standard error
# beside its default, one small panel each, and an index.html in the output folder.
"""Usage: plot_fit.py COEFFS_JSON OUT_DIR

Writes OUT_DIR/coefficients.png, OUT_DIR/coefficients.json (a copy, so the page links to
it) and OUT_DIR/index.html. std_errors and defaults are optional in the JSON."""
import argparse
import json
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_common as rc  # noqa: E402

H = rc.html  # HTML from a template whose {} fields are escaped (markupsafe)

TOOL = "plot_fit.py"
PANEL_COLUMNS = 4


def coefficient_entries(coeffs, where):
    """The coefficients of a coeffs JSON object (src/io/coeff_file.cc) as a list of dicts."""
    values = rc.require(coeffs, "coefficients", where)
    if not isinstance(values, dict) or not values:
        raise rc.ReportError(f"{where}: \"coefficients\" must be a non-empty object")
    errors = coeffs.get("std_errors") or {}
    defaults = coeffs.get("defaults") or {}
    units = coeffs.get("units") or {}
    entries = []
    for name, value in values.items():
        if not rc.finite(value):
            raise rc.ReportError(f"{where}: coefficient \"{name}\" is not a finite number")
        se = errors.get(name)
        entries.append({"name": name, "value": float(value),
                        "std_error": float(se) if rc.finite(se) else None,
                        "default": float(defaults[name]) if rc.finite(defaults.get(name)) else None,
                        "unit": units.get(name, "")})
    return entries


def has_std_errors(entries):
    return any(e["std_error"] is not None for e in entries)


def differs_from_defaults(entries):
    return any(e["default"] is not None and e["value"] != e["default"] for e in entries)


def pretty_unit(unit):
    """Units for figure titles: uu/s^2 -> uu/s²."""
    return unit.replace("^2", "\u00b2").replace("^3", "\u00b3").replace("^-1", "\u207b\u00b9")


def change_text(e):
    """'+3.2%, 1.4σ' style description of value against default."""
    if e["default"] is None:
        return ""
    diff = e["value"] - e["default"]
    parts = []
    if e["default"] != 0:
        parts.append(f"{100.0 * diff / abs(e['default']):+.3g}%")
    else:
        parts.append(f"{diff:+.3g}")
    if e["std_error"]:
        z = diff / e["std_error"]
        parts.append(f"{z:+.0f}σ" if abs(z) >= 10 else f"{z:+.2g}σ")
    return ", ".join(parts)


def draw_coefficients(plt, entries, title, path, value_label="fitted"):
    """One small panel per coefficient: value ± std error (dot, bar) and default (square)."""
    n = len(entries)
    cols = min(PANEL_COLUMNS, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10, 2.3 * rows + 0.9), squeeze=False)
    for ax, e in zip(axes.flat, entries):
        lo = hi = e["value"]
        se = e["std_error"]
        if se is not None:
            ax.errorbar([0], [e["value"]], yerr=[se], fmt="o", color="#1f77b4", capsize=6,
                        markersize=7, elinewidth=1.5)
            lo, hi = e["value"] - se, e["value"] + se
        else:
            ax.plot([0], [e["value"]], "o", color="#1f77b4", markersize=7)
        if e["default"] is not None:
            ax.axhline(e["default"], color="#888888", linestyle=":", linewidth=1)
            ax.plot([1], [e["default"]], "s", color="#888888", markerfacecolor="white",
                    markersize=7, markeredgewidth=1.5)
            lo, hi = min(lo, e["default"]), max(hi, e["default"])
        span = hi - lo
        pad = 0.2 * span if span > 0 else 0.05 * max(abs(hi), 1e-9)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xlim(-0.6, 1.6)
        ax.set_xticks([0, 1])
        ax.set_xticklabels([value_label, "default"])
        unit = f" [{pretty_unit(e['unit'])}]" if e["unit"] else ""
        ax.set_title(f"{e['name']}{unit}", fontsize=10)
        change = change_text(e)
        if change:
            ax.set_xlabel(f"{change} vs default", fontsize=8, color="#555555")
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    note = "bars: ±1 standard error" if has_std_errors(entries) else "no standard errors in file"
    fig.suptitle(f"{title}\n({note}; hollow square and dotted line: default)", fontsize=11)
    fig.tight_layout()
    rc.save_figure(fig, path)


def coefficients_table_html(entries, value_label="fitted"):
    with_se = has_std_errors(entries)
    head = H("<tr><th class=\"l\">coefficient</th><th>{}</th>{}"
             "<th>default</th><th>change</th><th class=\"l\">unit</th></tr>\n",
             value_label, H("<th>std error</th>") if with_se else H(""))
    body = H("")
    for e in entries:
        se = H("<td>{}</td>", rc.fmt_coeff(e["std_error"])) if with_se else H("")
        body += H("<tr><td class=\"l\"><code>{}</code></td><td>{}</td>{}<td>{}</td><td>{}</td>"
                  "<td class=\"l\">{}</td></tr>\n", e["name"], rc.fmt_coeff(e["value"]), se,
                  rc.fmt_coeff(e["default"]), change_text(e) or "-", e["unit"])
    return H("<table>\n{}{}</table>\n", head, body)


def horizon_order(label):
    """Sort key of horizon labels: "0.5s" < "1s" < "10s" < "last"."""
    return (1, 0.0) if label == "last" else (0, float(label.rstrip("s")))


def heldout_aggregates(report):
    """(before, after) aggregate blocks of the held-out replays in a fit report, or None."""
    before = (report.get("heldout_before") or {}).get("aggregate")
    after = (report.get("heldout_after") or {}).get("aggregate")
    if isinstance(before, dict) and isinstance(after, dict) and \
            isinstance(before.get("open_loop"), dict) and isinstance(after.get("open_loop"), dict):
        return before, after
    return None


def heldout_table_html(before, after, block, caption):
    """Quantity x horizon table of held-out medians, starting -> fitted, with the ratio."""
    keys = [k for k in rc.QUANTITIES if k in after.get(block, {}) and k in before.get(block, {})]
    if not keys:
        return H("")
    labels = sorted(after[block][keys[0]], key=horizon_order)
    counts = [(after[block][keys[0]].get(lb) or {}).get("n", 0) for lb in labels]
    head = H("<tr><th class=\"l\">quantity</th>{}</tr>\n", H("").join(
        H("<th>{} <span class=\"note\">(n={})</span></th>", lb, n)
        for lb, n in zip(labels, counts)))
    rows = H("")
    for k in keys:
        label, unit = rc.QUANTITIES[k]
        cells = H("")
        for lb in labels:
            b = (before[block][k].get(lb) or {}).get("median")
            a = (after[block][k].get(lb) or {}).get("median")
            n = (after[block][k].get(lb) or {}).get("n", 0)
            if not n or not rc.finite(a) or not rc.finite(b):
                cells += H("<td>-</td>")
                continue
            cls = "good" if a < b else "bad" if a > b else ""
            ratio = f" (×{a / b:.2f})" if b > 0 else ""
            cells += H("<td class=\"{}\">{} → {}{}</td>", cls, rc.fmt(b), rc.fmt(a), ratio)
        rows += H("<tr><td class=\"l\">{} ({})</td>{}</tr>\n", label, unit, cells)
    return H("<h3>{}</h3>\n<table>\n{}{}</table>\n", caption, head, rows)


def draw_heldout(plt, before, after, model, path):
    """Bars of held-out median errors after vs before the fit (windowed if present)."""
    block = "windowed" if after.get("windowed") and before.get("windowed") else "open_loop"
    keys = [k for k in rc.QUANTITIES if k in after[block] and k in before[block]]
    labels = sorted(after[block][keys[0]], key=horizon_order)
    panels = [(k, [after[block][k][lb]["median"] for lb in labels],
               [before[block][k][lb]["median"] for lb in labels]) for k in keys]
    what = "windowed restarts" if block == "windowed" else "open loop from row 0"
    rc.draw_paired_bars(plt, panels, labels, ("fitted", "starting coefficients"),
                        f"{model}: median error on held-out episodes, {what} (×: ratio)", path)


def report_rows(report):
    """Key/value rows of the rest of a fit report; large objects fold into <details>."""
    rows = []
    for k, v in report.items():
        if k in ("heldout_before", "heldout_after"):
            continue
        text = json.dumps(v, indent=1, sort_keys=True)
        if isinstance(v, (dict, list)) and len(text) > 300:
            rows.append((k, H("<details><summary>{} characters of JSON</summary>"
                              "<pre>{}</pre></details>", len(text), text)))
        else:
            rows.append((k, rc.json_cell(v)))
    return rows


def build(coeffs_path, out_dir, shown_dir=None):
    plt = rc.import_pyplot(TOOL)
    coeffs = rc.read_json(coeffs_path)
    model = rc.require(coeffs, "model", coeffs_path)
    entries = coefficient_entries(coeffs, coeffs_path)
    os.makedirs(out_dir, exist_ok=True)

    copy_name = "coefficients.json"
    copy_path = os.path.join(out_dir, copy_name)
    if not (os.path.exists(copy_path) and os.path.samefile(coeffs_path, copy_path)):
        shutil.copyfile(coeffs_path, copy_path)
    image = "coefficients.png"
    draw_coefficients(plt, entries, f"{model}: coefficients", os.path.join(out_dir, image))

    prov = coeffs.get("provenance") or {}
    run_rows = [("model", model),
                ("coefficients file", H("<a href=\"{}\">{}</a> <span class=\"note\">(copy of "
                                        "{})</span>", rc.href(copy_name), copy_name,
                                        os.path.abspath(coeffs_path))),
                ("schema version", rc.json_cell(coeffs.get("schema_version")))]
    if "integration" in coeffs:
        run_rows.append(("integration", rc.json_cell(coeffs["integration"])))
    body = [H("<h1>Coefficients of model {}</h1>", model),
            H("<p class=\"lead\">Drawn by <code>scripts/plot_fit.py</code> from a coefficients "
              "JSON written by <code>rlfit fit</code>.</p>"),
            H("<h2>Run</h2>"), rc.kv_table(run_rows)]
    unreadable = prov.get("unreadable") or []
    if unreadable:
        rows = H("").join(H("<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td>"
                            "</tr>\n", u.get("path", "?"), u.get("reason", ""))
                          for u in unreadable)
        body += [H("<p id=\"unreadable\"><b>{} recording file{} could not be read</b> "
                   "(--keep-going: left out of the fit):</p>", len(unreadable),
                   "" if len(unreadable) == 1 else "s"),
                 H("<table>\n<tr><th class=\"l\">file</th><th class=\"l\">reason</th></tr>\n"
                   "{}</table>", rows)]
    if prov:
        body += [H("<h3>Provenance</h3>"),
                 rc.kv_table([(k, rc.json_cell(v)) for k, v in prov.items()])]
    body += [H("<h2>Coefficients</h2>")]
    if not has_std_errors(entries):
        body.append(H("<p class=\"note\">The file carries no standard errors.</p>"))
    elif isinstance((coeffs.get("fit_report") or {}).get("std_errors"), str):
        body.append(H("<p class=\"note\">Standard errors: {}.</p>",
                      coeffs["fit_report"]["std_errors"]))
    body += [coefficients_table_html(entries),
             H("<img src=\"{}\" alt=\"coefficients against defaults\">", rc.href(image))]
    report = coeffs.get("fit_report") or {}
    held = heldout_aggregates(report)
    if held:
        before, after = held
        heldout_image = "heldout.png"
        draw_heldout(plt, before, after, model, os.path.join(out_dir, heldout_image))
        body += [H("<h2>Held-out episodes: starting → fitted coefficients</h2>"),
                 H("<p class=\"note\">Medians of prediction error on the episodes the fit did "
                   "not see (green: the fit helped).</p>"),
                 heldout_table_html(before, after, "open_loop", "Open loop from row 0"),
                 heldout_table_html(before, after, "windowed", "Windowed restarts"),
                 H("<img src=\"{}\" alt=\"held-out errors\">", rc.href(heldout_image))]
    rows = report_rows(report)
    if rows:
        body += [H("<h2>Fit report</h2>"), rc.kv_table(rows)]
    rc.write_atomic(os.path.join(out_dir, "index.html"),
                    rc.page(f"rlfit coefficients: {model}", H("\n").join(body)))
    print(f"{TOOL}: wrote {os.path.join(shown_dir or out_dir, 'index.html')}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("coeffs_json", help="coefficients JSON written by rlfit fit")
    parser.add_argument("out_dir", help="folder for coefficients.png and index.html")
    parser.add_argument("--shown-as", metavar="DIR", default=None,
                        help="the folder's final name, for messages (rlfit draws the page in a "
                             "staged folder that then replaces DIR)")
    args = parser.parse_args()
    rc.run_main(TOOL, lambda: build(args.coeffs_json, args.out_dir, args.shown_as))


if __name__ == "__main__":
    main()
