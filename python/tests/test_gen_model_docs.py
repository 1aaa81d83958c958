"""Tests of scripts/gen_model_docs.py (ctest `python`): the committed docs match results/, a moved
coefficient makes --check fail until the docs are rewritten, a broken marker or a source-less
speed figure is an error, the guard's baselines reach the speed tables, and the decision records'
index is checked both ways. Standard library
only; each test copies the few files it needs into tmp_path (~0.1 s in all).

Run: /usr/bin/python3 -m pytest -q python/tests/test_gen_model_docs.py
"""
import json
import os
import shutil
import sys

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import gen_model_docs as gen  # noqa: E402


def copy_tree(tmp_path):
    """The files the generator reads and writes, copied under tmp_path."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(os.path.join(SRC, "README.md"), root / "README.md")
    shutil.copytree(os.path.join(SRC, "docs", "models"), root / "docs" / "models")
    shutil.copytree(os.path.join(SRC, "docs", "decisions"), root / "docs" / "decisions")
    shutil.copytree(os.path.join(SRC, "results"), root / "results")
    (root / "bench").mkdir()
    for name in ("speed_figures.json", "perf_baseline.json", "README.md"):
        shutil.copy(os.path.join(SRC, "bench", name), root / "bench")
    return root


def test_committed_docs_match_results():
    """The checkout's model pages and README tables are what the generator writes."""
    assert gen.main(["--check", "--root", SRC]) == 0


def test_a_moved_coefficient_makes_check_fail_until_rewritten(tmp_path, capsys):
    root = copy_tree(tmp_path)
    path = root / "results" / "ball" / "coeffs.json"
    coeffs = json.loads(path.read_text())
    coeffs["coefficients"]["Y"] = 1.2345678
    coeffs["std_errors"]["Y"] = 0.0012
    path.write_text(json.dumps(coeffs))
    assert gen.main(["--check", "--root", str(root)]) == 1
    assert "stale: docs/models/ball.md" in capsys.readouterr().err
    assert gen.main(["--root", str(root)]) == 0
    assert "| `Y` | 1.2346 | 0.0012 |" in (root / "docs" / "models" / "ball.md").read_text()
    assert gen.main(["--check", "--root", str(root)]) == 0


def test_a_moved_heldout_figure_reaches_the_readme(tmp_path):
    root = copy_tree(tmp_path)
    path = root / "results" / "aerial" / "coeffs.json"
    coeffs = json.loads(path.read_text())
    coeffs["fit_report"]["heldout_after"]["aggregate"]["open_loop"]["dx"]["1s"]["median"] = 7.5
    path.write_text(json.dumps(coeffs))
    assert gen.main(["--check", "--root", str(root)]) == 1
    assert gen.main(["--root", str(root)]) == 0
    readme = (root / "README.md").read_text()
    assert "| [aerial](docs/models/aerial.md) |" in readme
    row = next(l for l in readme.splitlines() if l.startswith("| [aerial]"))
    assert "| 7.50 (" in row


def test_hand_text_outside_the_markers_is_kept(tmp_path):
    root = copy_tree(tmp_path)
    page = root / "docs" / "models" / "wall.md"
    page.write_text(page.read_text().replace("## Constants (not fitted)",
                                             "## Constants (not fitted)\n\nA hand note."))
    assert gen.main(["--check", "--root", str(root)]) == 0  # outside the markers: not stale
    assert gen.main(["--root", str(root)]) == 0
    assert "A hand note." in page.read_text()


def test_a_missing_marker_is_an_error(tmp_path, capsys):
    root = copy_tree(tmp_path)
    page = root / "docs" / "models" / "jump.md"
    page.write_text(page.read_text().replace("<!-- END GENERATED: figures -->", ""))
    assert gen.main(["--check", "--root", str(root)]) == 2
    assert "jump.md: markers of the generated part 'figures' not found" in capsys.readouterr().err


def test_a_model_without_a_page_is_an_error(tmp_path, capsys):
    root = copy_tree(tmp_path)
    shutil.copytree(root / "results" / "wall", root / "results" / "hovercar")
    assert gen.main(["--check", "--root", str(root)]) == 2
    assert "hovercar.md: missing" in capsys.readouterr().err


def test_a_speed_figure_needs_its_source(tmp_path, capsys):
    root = copy_tree(tmp_path)
    path = root / "bench" / "speed_figures.json"
    spec = json.loads(path.read_text())
    spec["rows"][0]["Lobot"].pop("source")
    path.write_text(json.dumps(spec))
    assert gen.main(["--check", "--root", str(root)]) == 2
    assert "a figure without a source" in capsys.readouterr().err


def test_a_guard_baseline_reaches_both_tables(tmp_path, capsys):
    """A figure scripts/perf_guard.py --write records reaches the README's speed table and
    bench/README.md's guard table; a speed cell naming a workload the baseline lacks is an
    error."""
    root = copy_tree(tmp_path)
    path = root / "bench" / "perf_baseline.json"
    baseline = json.loads(path.read_text())
    baseline["workloads"]["ball_step"]["instructions"] = 123.4
    path.write_text(json.dumps(baseline))
    assert gen.main(["--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "stale: README.md" in err and "stale: bench/README.md" in err
    assert gen.main(["--root", str(root)]) == 0
    row = next(l for l in (root / "README.md").read_text().splitlines()
               if l.startswith("| ball step with collision"))
    assert "| 123.4 [" in row
    assert "| `ball_step` | 123.4 per step |" in (root / "bench" / "README.md").read_text()
    del baseline["workloads"]["ball_step"]
    path.write_text(json.dumps(baseline))
    assert gen.main(["--check", "--root", str(root)]) == 2
    assert "names guard workload 'ball_step'" in capsys.readouterr().err


def test_the_decisions_index_is_checked_both_ways(tmp_path, capsys):
    root = copy_tree(tmp_path)
    folder = root / "docs" / "decisions"
    (folder / "9999-an-unlisted-record.md").write_text("# 9999: an unlisted record\n")
    assert gen.main(["--check", "--root", str(root)]) == 1
    assert "record 9999-an-unlisted-record.md is not listed" in capsys.readouterr().err
    (folder / "9999-an-unlisted-record.md").unlink()
    listed = sorted(p for p in os.listdir(folder) if p[:4].isdigit())[0]
    (folder / listed).unlink()
    assert gen.main(["--check", "--root", str(root)]) == 1
    assert f"lists {listed}, which does not exist" in capsys.readouterr().err


def test_value_and_standard_error_formatting():
    assert gen.fmt_value_se(1.960357660740405, 0.00020506702862164132) == ("1.96036", "0.00021")
    assert gen.fmt_value_se(93.1504, 0.0) == ("93.1504", "held")
    assert gen.fmt_value_se(0.5, None) == ("0.5", "n/a (not determined)")
    assert gen.fmt_value_se(1411.348440617462, 33.2) == ("1411", "33")
    assert gen.fmt_sig(0.0241) == "0.0241" and gen.fmt_sig(141.67) == "142"
    assert gen.fmt_sig(1.5e-05) == "1.5e-05" and gen.fmt_sig(None) == "n/a"
