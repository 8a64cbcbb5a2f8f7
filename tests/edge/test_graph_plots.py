"""The run's own Figures 4, 6 and 7: their numbers from a run file, and `kopa edge graph stats --plots DIR` writing
them as SVG files that hold those numbers (read back from the files) and are byte-identical for the same graph."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from edge.graph.plots import FIGURE_FILES
from edge.graph.posterior import EdgePosterior
from edge.graph.stats import edge_evidence, figures, moving_average, round_points
from edge.graph.store import GraphStore, TrialRecord
from tests.edge.test_graph_cli import ENV

SVG = "{http://www.w3.org/2000/svg}"
DC = "{http://purl.org/dc/elements/1.1/}"
LOC, FUEL, TOLL = "list_rest_area_locations", "get_rest_area_fuel_prices", "list_tollbooths"
BRANDS, FOODS = "get_rest_area_brands", "get_rest_area_best_foods"
KEPT, PRUNED, UNTRIED = (LOC, FUEL), (LOC, TOLL), (BRANDS, FOODS)


def _trial(round_no, m, hop, edge, outcome):
    source, target = (None, edge[0]) if hop == 0 else edge
    return TrialRecord(round_no, m, hop, source, target, {}, outcome)


def _commit(store, round_no, paths, trials, pruned=()):
    post = store.posteriors()
    for t in trials:
        if t.hop:
            post[(t.source, t.target)] = post[(t.source, t.target)].updated(t.outcome)
    store.commit_round(round_no, paths=paths, trials=trials, posteriors=post, pruned=pruned)


@pytest.fixture
def run(tmp_path):
    """Two rounds over three edges of the ex platform: one kept (2 of 2 successes, and a replay miss that is no
    evidence), one pruned after two structural failures, one never tried."""
    path = tmp_path / "graph-small.duckdb"
    store = GraphStore.create(path, meta={"upstream": "sandbox", "seed": 0, "settings": {"tau_prune": 0.5}})
    store.add_edges([(*KEPT, 0.9, False, 0.9, [], EdgePosterior.from_feasibility(0.9, kappa=2.0)),
                     (*PRUNED, 0.8, False, 0.8, [], EdgePosterior.from_feasibility(0.8, kappa=2.0)),
                     (*UNTRIED, 0.5, False, 0.4, [], EdgePosterior.from_feasibility(0.4, kappa=2.0))])
    _commit(store, 0, 3, [_trial(0, 0, 0, KEPT, "semantic_success"), _trial(0, 0, 1, KEPT, "semantic_success"),
                          _trial(0, 1, 0, PRUNED, "generic_success"), _trial(0, 1, 1, PRUNED, "missing_field"),
                          _trial(0, 2, 0, UNTRIED, "timeout")])
    _commit(store, 1, 3, [_trial(1, 0, 0, PRUNED, "semantic_success"), _trial(1, 0, 1, PRUNED, "schema_mismatch"),
                          _trial(1, 1, 0, KEPT, "semantic_success"), _trial(1, 1, 1, KEPT, "generic_success"),
                          _trial(1, 2, 0, KEPT, "semantic_success"), _trial(1, 2, 1, KEPT, "replay_miss")],
            pruned=[PRUNED])
    store.close()
    return path


def test_the_figures_numbers_from_a_run_file(run):
    store = GraphStore.open(run, read_only=True)
    try:
        points = round_points(store)
        data = figures(store)
        evidence = {e.key: e for e in edge_evidence(store)}
    finally:
        store.close()
    # Figure 6: a path passes only when every call succeeded, so one path per round passes
    assert [(p.paths, p.calls, p.successes, p.passed, p.pruned, p.live) for p in points] == [(3, 5, 3, 1, 0, 3),
                                                                                             (3, 6, 4, 1, 1, 2)]
    f6 = data["figure_6"]
    assert f6["pass_rate"] == [1 / 3, 1 / 3] and f6["step_success"] == [3 / 5, 4 / 6] and f6["window"] == 1
    assert f6["rise"]["step_success"] == pytest.approx(4 / 6 - 3 / 5) and f6["paper_rise"]["pass_rate"] == 0.31
    assert moving_average([None, 0.5, 1.0, 0.0], 2) == [None, 0.5, 0.75, 0.5]
    # the replay miss is no evidence: the kept edge has 2 trials, both successes
    assert (evidence[KEPT].trials, evidence[KEPT].successes) == (2, 2)
    assert (evidence[PRUNED].trials, evidence[PRUNED].successes, evidence[PRUNED].pruned_round) == (2, 0, 1)
    assert evidence[UNTRIED].trials == 0
    # Figure 4: pooled in-loop success per set (no edge has 10 trials), and the zero-success share
    f4 = data["figure_4"]
    assert {s: f4["success"][s]["tested"]["rate"] for s in f4["success"]} == {"skeleton": 0.5, "refined": 1.0,
                                                                              "pruned": 0.0}
    assert f4["success"]["skeleton"]["tested"] == {"edges": 2, "executions": 4, "successes": 2, "rate": 0.5}
    assert f4["success"]["refined"]["high_evidence"]["rate"] is None and f4["success"]["pruned"]["paper"] == 0.148
    assert f4["zero_success"]["pruned"] == {"tested": 1, "zero": 1, "share": 1.0, "paper": 0.705}
    assert f4["zero_success"]["skeleton"]["share"] == 0.5
    # Figure 7: the probed edges only; the pruned one fell below τ and below the diagonal
    f7 = data["figure_7"]
    assert (f7["probed"], f7["pruned_untried"], f7["tau"]) == (2, 0, 0.5)
    assert f7["kept"]["edges"] == 1 and f7["kept"]["mean_posterior"] == pytest.approx(4.1 / 5.3)
    assert f7["pruned"] == {"edges": 1, "mean_prior": 0.8, "mean_posterior": pytest.approx(2.6 / 6.5),
                            "below_tau": 1, "below_diagonal": 1}


def _svg(path):
    root = ET.parse(path).getroot()
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("figure-")}
    return json.loads(root.find(f".//{DC}description").text), texts, groups


def test_stats_writes_the_plots_with_the_runs_numbers(run, tmp_path):
    out = CliRunner().invoke(app, ["edge", "graph", "stats", str(run), "--heldout", "0", "--json",
                                   "--plots", str(tmp_path / "plots")], env=ENV)
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    assert json.loads((tmp_path / "plots" / "stats.json").read_text(encoding="utf-8")) == printed
    assert printed["admitted"] == 3 and printed["pruned"] == 1 and printed["figure_6"]["round"] == [0, 1]
    for key, name in FIGURE_FILES.items():  # each file carries its figure's data, the same as the JSON beside it
        assert _svg(tmp_path / "plots" / name)[0] == printed[key]

    _, texts, groups = _svg(tmp_path / "plots" / "figure-4.svg")
    assert ["50.0", "100.0", "0.0"] == texts[texts.index("edge execution success (%)") + 1:][:3]  # tₑ ≥ 1 bars
    assert {"(1/2)", "(0/1)", "(1/1)"} <= set(texts)  # zero-success edges of the skeleton, G*, pruned
    assert {"figure-4a-tested-refined", "figure-4b-zero-success-pruned"} <= set(groups)
    assert "figure-4a-heldout-skeleton" not in groups  # no held-out bars when none were measured

    _, texts, groups = _svg(tmp_path / "plots" / "figure-6.svg")
    assert {"trajectory pass rate (+0.0 pp; paper +31 pp)", "step success rate (+6.7 pp; paper +28 pp)"} <= set(texts)
    assert {"33.3", "66.7"} <= set(texts)  # the last smoothed values
    for key in ("pass_rate", "step_success", "pass_rate-ma", "step_success-ma"):  # one vertex per round
        d = groups[f"figure-6-{key}"].find(f".//{SVG}path").get("d")
        assert len(re.findall(r"[ML]", d)) == 2

    _, texts, groups = _svg(tmp_path / "plots" / "figure-7.svg")
    assert len(list(groups["figure-7-kept"].iter(f"{SVG}use"))) == 1  # one marker per probed edge
    assert len(list(groups["figure-7-pruned"].iter(f"{SVG}use"))) == 1
    assert {"kept (1)", "pruned (1)", "τ = 0.5"} <= set(texts)


def test_the_same_graph_gives_the_same_bytes(run, tmp_path):
    for folder in ("a", "b"):
        out = CliRunner().invoke(app, ["edge", "graph", "stats", str(run), "--heldout", "0",
                                       "--plots", str(tmp_path / folder)], env=ENV)
        assert out.exit_code == 0, out.output
        assert "Figure 7: 2 probed edges, 1 kept, 1 pruned" in out.stdout.replace("\n", " ")
    for name in [*FIGURE_FILES.values(), "stats.json"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    text = (tmp_path / "a" / "figure-6.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in text and "Matplotlib" not in text
