#!/usr/bin/env python3
"""Writes the generated parts of the docs from the committed results, so that no figure in them is
copied by hand: per model, docs/models/<model>.md's coefficients (values, standard errors, seed
values, units) and held-out figures from results/<model>/coeffs.json and baseline.json; the
README's accuracy table (held-out figures of every model) and its speed table against the peers
(from bench/speed_figures.json; a cell naming a "guard" workload takes its instructions from
bench/perf_baseline.json, which scripts/perf_guard.py --write writes), and bench/README.md's
table of the guard's baselines. Each part sits between
    <!-- BEGIN GENERATED: NAME (scripts/gen_model_docs.py) -->
    <!-- END GENERATED: NAME -->
and only that part is rewritten; the text around it is written by hand. Also checks that
docs/decisions/README.md lists every decision record and names no missing one.

Usage: scripts/gen_model_docs.py [--root DIR] [--check]
  --check  writes nothing; exits 1 naming every stale part (and index error), 0 when the docs
           match results/ (CI: python/tests/test_gen_model_docs.py, run by ctest `python`).
Standard library only; reads a few small JSON files (well under a second).
"""
import argparse
import json
import math
import os
import re
import sys

# Order of the models in the README and docs/models (any other model in results/ follows,
# alphabetically).
MODEL_ORDER = ["aerial", "ground", "jump", "wall", "powerslide", "ball", "car"]
# Row labels of the tables (pipes escaped for markdown tables).
QUANTITIES = [("dx", "\\|dx\\| uu"), ("dv", "\\|dv\\| uu/s"), ("domega", "\\|dω\\| rad/s"),
              ("angle_deg", "angle deg")]
README_HORIZONS = ["0.5s", "1s", "2s", "5s", "last"]
BEGIN = "<!-- BEGIN GENERATED: {name} (scripts/gen_model_docs.py) -->"
END = "<!-- END GENERATED: {name} -->"


class DocsError(Exception):
    """A docs file or a results file that cannot be used (missing marker, missing key)."""


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise DocsError(f"{path}: {e}") from e


def models_of(root):
    """The models with committed results (results/<model>/coeffs.json), in MODEL_ORDER."""
    results = os.path.join(root, "results")
    found = sorted(m for m in os.listdir(results)
                   if os.path.isfile(os.path.join(results, m, "coeffs.json")))
    return [m for m in MODEL_ORDER if m in found] + [m for m in found if m not in MODEL_ORDER]


def fmt_sig(v, digits=3):
    """A figure with `digits` significant digits, without exponent from 0.001 up; n/a for None."""
    if v is None:
        return "n/a"
    if isinstance(v, float) and not math.isfinite(v):
        raise DocsError(f"non-finite figure {v}")
    a = abs(v)
    if a == 0:
        return "0"
    if a < 0.001:
        return f"{v:.{digits - 2}e}" if digits > 2 else f"{v:.0e}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(a))))
    return f"{v:.{decimals}f}"


def fmt_value_se(value, se):
    """(value, standard error) as text: the error to 2 significant digits and the value to the
    same decimal place; "held" for an error of 0 (held constant by the fit), "n/a" for null."""
    if se is None:
        return f"{value:.6g}", "n/a (not determined)"
    if se == 0:
        return f"{value:.6g}", "held"
    decimals = min(12, max(0, 1 - int(math.floor(math.log10(se)))))
    return f"{value:.{decimals}f}", f"{se:.{decimals}f}"


def horizon_label(h):
    """'0.5s' -> '0.5 s', 'last' -> 'last row'."""
    return "last row" if h == "last" else h[:-1] + " s"


def figure_cell(stats, with_max=True):
    """median (p90), max of one aggregate figure; n/a where no episode reaches the horizon."""
    if stats is None or not stats.get("n") or stats.get("median") is None:
        return "n/a"
    cell = f"{fmt_sig(stats['median'])} ({fmt_sig(stats['p90'])})"
    if with_max and stats.get("max") is not None:
        cell += f", {fmt_sig(stats['max'])}"
    return cell


def heldout_table(aggregate, mode):
    """Markdown table of one mode (open_loop / windowed) of a fit report's held-out aggregate."""
    block = aggregate.get(mode)
    if not block:
        return []
    horizons = list(next(iter(block.values())).keys())
    lines = ["| quantity | " + " | ".join(horizon_label(h) for h in horizons) + " |",
             "|---|" + "---|" * len(horizons)]
    for key, label in QUANTITIES:
        if key not in block:
            continue
        lines.append(f"| {label} | " + " | ".join(figure_cell(block[key].get(h)) for h in horizons)
                     + " |")
    n = [str(block["dx"][h].get("n", 0)) for h in horizons]
    lines.append("| n | " + " | ".join(n) + " |")
    return lines


def baseline_table(metrics, mode):
    """Markdown table of baseline.json's guarded metrics of one mode: median (p90)."""
    table = {}
    for name, value in metrics.items():
        m = re.fullmatch(r"(open_loop|windowed)\.(\w+)\.([0-9.]+s|last)\.(median|p90)", name)
        if not m:
            raise DocsError(f"baseline metric {name!r} not understood")
        if m.group(1) != mode:
            continue
        table.setdefault(m.group(2), {}).setdefault(m.group(3), {})[m.group(4)] = value
    if not table:
        return []
    horizons = sorted({h for q in table.values() for h in q},
                      key=lambda h: math.inf if h == "last" else float(h[:-1]))
    lines = ["| quantity | " + " | ".join(horizon_label(h) for h in horizons) + " |",
             "|---|" + "---|" * len(horizons)]
    for key, label in QUANTITIES:
        if key not in table:
            continue
        cells = []
        for h in horizons:
            f = table[key].get(h)
            cells.append("n/a" if not f or f.get("median") is None
                         else f"{fmt_sig(f['median'])} ({fmt_sig(f['p90'])})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def held_out(prov):
    """Whether the committed fit held episodes out (its fit report then has heldout_after)."""
    return len(prov.get("heldout_episodes", [])) > 0


def model_parts(root, model):
    """The generated parts of docs/models/<model>.md: {"coefficients": text, "figures": text}."""
    coeffs = load_json(os.path.join(root, "results", model, "coeffs.json"))
    baseline = load_json(os.path.join(root, "results", model, "baseline.json"))
    try:
        values = coeffs["coefficients"]
        errors = coeffs["std_errors"]
        defaults = coeffs["defaults"]
        units = coeffs["units"]
        report = coeffs["fit_report"]
        prov = coeffs["provenance"]
        # A fit that held no episode out (rlfit baseline splits by recording file: the car's
        # default data is 2 files, none of them the 4th) has no heldout_after.
        heldout = report["heldout_after"]["aggregate"] if held_out(prov) else None
        metrics = baseline["metrics"]
    except KeyError as e:
        raise DocsError(f"results/{model}: missing key {e}") from e
    train = len(prov.get("train_episodes", []))
    held = len(prov.get("heldout_episodes", []))
    data = ", ".join(f"`{d}`" for d in baseline.get("data", []))
    held_names = [n for n in values if errors.get(n) == 0]
    coef = [f"From `results/{model}/coeffs.json` (fit at git revision {prov.get('git_revision', '?')}"
            f" on {train} training episodes of {data}, {held} held out; cost "
            f"{fmt_sig(report['cost_initial'], 4)} -> {fmt_sig(report['cost_final'], 4)} in "
            f"{report.get('iterations', '?')} iterations). Standard errors: "
            f"{report.get('std_errors', 'see the fit report')}.", "",
            "| coefficient | value | std error | seed | unit |", "|---|---|---|---|---|"]
    for name in values:
        v, se = fmt_value_se(values[name], errors.get(name))
        coef.append(f"| `{name}` | {v} | {se} | {defaults[name]:.6g} | {units[name]} |")
    if held_names:
        coef += ["", "\"held\": held constant by the fit at that value (" +
                 ", ".join(f"`{n}`" for n in held_names) + ")."]
    if heldout is None:
        figs = ["Held out: none (`rlfit baseline` holds out every 4th recording file; the "
                "committed fit's default data has fewer): no held-out figures.", ""]
    else:
        figs = [f"Held out: the {held} episodes the committed fit did not see "
                f"(`results/{model}/coeffs.json`, `fit_report.heldout_after`); per-episode "
                "errors, median (p90), max over episodes.", "",
                "Open loop from the first covered row:", ""]
        figs += heldout_table(heldout, "open_loop")
        windowed = heldout_table(heldout, "windowed")
        if windowed:
            figs += ["", "Windowed (restarted from the recorded state every 0.5 s), over "
                     "restarts:", ""]
            figs += windowed
        figs += [""]
    figs += [f"Regression baseline: all {baseline.get('episodes', '?')} episodes of the default "
             f"data ({data}), `results/{model}/baseline.json`, median (p90); `rlfit check` fails "
             "when one of these is worse by more than 2%. Open loop:", ""]
    figs += baseline_table(metrics, "open_loop")
    windowed = baseline_table(metrics, "windowed")
    if windowed:
        figs += ["", "Windowed:", ""] + windowed
    return {"coefficients": "\n".join(coef), "figures": "\n".join(figs)}


def readme_accuracy(root, models):
    lines = ["| model | default data | held-out episodes | " +
             " | ".join("\\|dx\\| " + horizon_label(h) for h in README_HORIZONS) +
             " | \\|dω\\| 1 s rad/s |",
             "|---|---|---|" + "---|" * (len(README_HORIZONS) + 1)]
    for model in models:
        coeffs = load_json(os.path.join(root, "results", model, "coeffs.json"))
        baseline = load_json(os.path.join(root, "results", model, "baseline.json"))
        try:
            held = len(coeffs["provenance"]["heldout_episodes"])
            agg = (coeffs["fit_report"]["heldout_after"]["aggregate"]["open_loop"] if held
                   else {})
        except KeyError as e:
            raise DocsError(f"results/{model}/coeffs.json: missing key {e}") from e
        data = ", ".join(f"`{d}`" for d in baseline.get("data", []))
        dx = agg.get("dx", {})
        cells = []
        for h in README_HORIZONS:
            cells.append("" if h not in dx else figure_cell(dx[h], with_max=False))
        dw = agg.get("domega", {}).get("1s")
        lines.append(f"| [{model}](docs/models/{model}.md) | {data} | {held} | " +
                     " | ".join(cells) + f" | {figure_cell(dw, with_max=False) if dw else ''} |")
    lines += ["", "Open-loop \\|dx\\| in uu from the first covered row, median (p90) over the held-out "
              "episodes of the committed fit (`results/MODEL/coeffs.json`, `fit_report."
              "heldout_after`: the episodes `rlfit baseline` held out); n/a where no held-out "
              "episode reaches the horizon or holds a covered row."]
    return "\n".join(lines)


# The guard's workloads whose reference runs the same work the slow way (bench/perf_guard.cc):
# the table of bench/README.md shows the fast path's share of its reference.
GUARD_REFERENCES = {"arena_query": "arena_query_bvh", "ball_step": "ball_step_template",
                    "ball_prediction_6s": "ball_prediction_6s_steps",
                    "aerial_step": "aerial_step_template"}


def guard_baseline(root):
    """bench/perf_baseline.json (scripts/perf_guard.py --write), or None where it is absent."""
    path = os.path.join(root, "bench", "perf_baseline.json")
    if not os.path.isfile(path):
        return None
    baseline = load_json(path)
    for key in ("margin", "build", "written", "workloads"):
        if key not in baseline:
            raise DocsError(f"{path}: missing key '{key}'")
    return baseline


def guard_source(baseline):
    w = baseline["written"]
    return (f"bench/perf_baseline.json: perf_guard under callgrind, (I(2N) - I(N)) / N, "
            f"{baseline['build']}, {w.get('git_revision', '?')}, {w.get('date', '?')}")


def instructions(x):
    return f"{x:,.1f}" if x < 10000 else f"{x / 1000:,.1f}k"


def bench_guard(root):
    """bench/README.md's table of the guard's baselines."""
    baseline = guard_baseline(root)
    if baseline is None:
        raise DocsError(f"{os.path.join(root, 'bench', 'perf_baseline.json')}: missing "
                        "(scripts/perf_guard.py --write)")
    entries = baseline["workloads"]
    lines = ["| workload | instructions per operation | of its reference | what one operation is |",
             "|---|---|---|---|"]
    for name, e in entries.items():
        ref = GUARD_REFERENCES.get(name)
        share = ""
        if ref in entries:
            share = f"{e['instructions'] / entries[ref]['instructions']:.2f}x `{ref}`"
        lines.append(f"| `{name}` | {instructions(e['instructions'])} per {e['unit']} | {share} | "
                     f"{e['what']} |")
    lines += ["", f"Margin {baseline['margin']:.0%}. Source: {guard_source(baseline)}."]
    return "\n".join(lines)


def readme_speed(root):
    path = os.path.join(root, "bench", "speed_figures.json")
    spec = load_json(path)
    baseline = guard_baseline(root)
    try:
        peers = spec["columns"]
        rows = spec["rows"]
    except KeyError as e:
        raise DocsError(f"{path}: missing key {e}") from e
    sources = []

    def cell(entry):
        if entry is not None and entry.get("guard"):
            # The guard's baseline figure (written by scripts/perf_guard.py --write).
            name = entry["guard"]
            if baseline is None or name not in baseline["workloads"]:
                raise DocsError(f"{path}: names guard workload '{name}', which "
                                "bench/perf_baseline.json does not hold")
            entry = {"value": instructions(baseline["workloads"][name]["instructions"]),
                     "source": guard_source(baseline)}
        if entry is None or entry.get("value") in (None, ""):
            return "not measured"
        src = entry.get("source")
        if not src:
            raise DocsError(f"{path}: a figure without a source: {entry}")
        if src not in sources:
            sources.append(src)
        return f"{entry['value']} [{sources.index(src) + 1}]"

    lines = ["| work | unit | " + " | ".join(peers) + " |", "|---|---|" + "---|" * len(peers)]
    for row in rows:
        lines.append(f"| {row['work']} | {row['unit']} | " +
                     " | ".join(cell(row.get(p)) for p in peers) + " |")
    lines += [""] + [f"- [{i + 1}] {s}" for i, s in enumerate(sources)]
    if spec.get("note"):
        lines += ["", spec["note"]]
    return "\n".join(lines)


def replace_part(text, name, body, path):
    begin, end = BEGIN.format(name=name), END.format(name=name)
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < 0 or j < i:
        raise DocsError(f"{path}: markers of the generated part '{name}' not found "
                        f"({begin} ... {end})")
    return text[:i + len(begin)] + "\n" + body + "\n" + text[j:]


def check_decisions_index(root):
    """Errors of docs/decisions/README.md: a record not listed, or a listed one missing."""
    folder = os.path.join(root, "docs", "decisions")
    index_path = os.path.join(folder, "README.md")
    if not os.path.isfile(index_path):
        return [f"{index_path}: missing"]
    with open(index_path, encoding="utf-8") as f:
        index = f.read()
    records = sorted(f for f in os.listdir(folder) if re.fullmatch(r"\d{4}-[a-z0-9-]+\.md", f))
    linked = set(re.findall(r"\]\((\d{4}-[a-z0-9-]+\.md)\)", index))
    errors = [f"{index_path}: record {r} is not listed" for r in records if r not in linked]
    errors += [f"{index_path}: lists {r}, which does not exist" for r in sorted(linked)
               if r not in records]
    numbers = [r[:4] for r in records]
    errors += [f"{folder}: number {n} used twice" for n in sorted(set(numbers))
               if numbers.count(n) > 1]
    return errors


def planned(root):
    """{path: new text} for every file with generated parts."""
    out = {}
    models = models_of(root)
    for model in models:
        path = os.path.join(root, "docs", "models", f"{model}.md")
        if not os.path.isfile(path):
            raise DocsError(f"{path}: missing (results/{model} has a committed fit)")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, body in model_parts(root, model).items():
            text = replace_part(text, name, body, path)
        out[path] = text
    path = os.path.join(root, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = replace_part(text, "accuracy", readme_accuracy(root, models), path)
    text = replace_part(text, "speed", readme_speed(root), path)
    out[path] = text
    path = os.path.join(root, "bench", "README.md")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out[path] = replace_part(text, "guard", bench_guard(root), path)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="checkout root (default: this script's parent folder)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when a generated part is stale")
    args = ap.parse_args(argv)
    root = os.path.normpath(args.root)
    try:
        plan = planned(root)
    except DocsError as e:
        print(f"gen_model_docs: error: {e}", file=sys.stderr)
        return 2
    errors = check_decisions_index(root)
    stale = []
    for path, text in plan.items():
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                continue
        stale.append(path)
        if not args.check:
            tmp = f"{path}.tmp.{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
    for e in errors:
        print(f"gen_model_docs: {e}", file=sys.stderr)
    if args.check:
        for path in stale:
            print(f"gen_model_docs: stale: {os.path.relpath(path, root)} (run "
                  "scripts/gen_model_docs.py)", file=sys.stderr)
        return 1 if stale or errors else 0
    for path in stale:
        print(f"wrote {os.path.relpath(path, root)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
