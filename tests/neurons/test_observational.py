"""Observational P/R/F1 on hand-built cases (answers computed by hand), and on the released file."""

from __future__ import annotations

import json
import shutil

import pytest

from interp_harness.evaluator.neurons import released
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.function_store import datasets
from interp_harness.function_store.token_activations import neuron_release as data


def _obs(unit: str, rows: list[tuple[bool, bool]], group: str = "0") -> list[O.Observation]:
    return [O.Observation(unit, claimed, fires, group) for claimed, fires in rows]


def test_single_neuron_by_hand():
    # 5 items: claimed&fires ×2, claimed&silent ×1, unclaimed&fires ×2 ... and one unclaimed silent
    # P = 2/3, R = 2/4 = 1/2, F1 = 2·(2/3)(1/2)/(2/3 + 1/2) = (2/3)/(7/6) = 4/7
    rows = [(True, True), (True, True), (True, False), (False, True), (False, True), (False, False)]
    v = O.prf(O.counts(_obs("a", rows)))
    assert v.precision == pytest.approx(2 / 3)
    assert v.recall == pytest.approx(1 / 2)
    assert v.f1 == pytest.approx(4 / 7)


def test_micro_macro_and_groups_by_hand():
    a = _obs("a", [(True, True), (True, False), (False, True)], group="0")  # P 1/2, R 1/2, F1 1/2
    b = _obs("b", [(True, True), (True, True), (True, True), (True, False)], group="1")
    # b: P 3/4, R 3/3 = 1, F1 = 2·0.75/1.75 = 6/7
    rep = O.evaluate(a + b, n_boot=0)
    # micro: TP 4, claimed 6, fired 5 → P 2/3, R 4/5, F1 = 2·(2/3)(4/5)/(2/3+4/5) = (16/15)/(22/15)
    assert rep.overall.micro.precision == pytest.approx(2 / 3)
    assert rep.overall.micro.recall == pytest.approx(4 / 5)
    assert rep.overall.micro.f1 == pytest.approx(16 / 22)
    assert rep.overall.macro.precision == pytest.approx((1 / 2 + 3 / 4) / 2)
    assert rep.overall.macro.recall == pytest.approx((1 / 2 + 1) / 2)
    assert rep.overall.macro.f1 == pytest.approx((1 / 2 + 6 / 7) / 2)
    assert rep.per_group["1"].micro.f1 == pytest.approx(6 / 7)
    assert list(rep.per_group) == ["0", "1"]


def test_undefined_ratios_are_left_out_of_macro_and_f1_zero_when_no_overlap():
    silent = _obs("s", [(True, False), (True, False)])  # P 0, R undefined (never fires)
    disjoint = _obs("d", [(True, False), (False, True)])  # P 0, R 0 → F1 0
    rep = O.evaluate(silent + disjoint, n_boot=0)
    assert rep.per_neuron["s"].recall is None and rep.per_neuron["s"].f1 is None
    assert rep.per_neuron["d"].f1 == 0.0
    assert rep.overall.macro_n == {"precision": 2, "recall": 1, "f1": 1}
    assert rep.overall.macro.precision == 0.0


def test_bootstrap_interval_contains_point_and_is_seeded():
    obs = []
    for i in range(20):  # neurons with differing precision: the interval has width
        obs += _obs(f"n{i}", [(True, j < i % 5 + 1) for j in range(5)] + [(False, True)])
    r1, r2 = O.evaluate(obs, n_boot=300, seed=3), O.evaluate(obs, n_boot=300, seed=3)
    ci = r1.overall.micro_ci["precision"]
    assert ci.low < r1.overall.micro.precision < ci.high
    assert r1.overall.micro_ci == r2.overall.micro_ci
    one = O.evaluate(_obs("x", [(True, True), (False, True)]), n_boot=50)
    assert (
        one.overall.micro_ci["f1"].low == one.overall.micro_ci["f1"].high
    )  # one neuron: no spread


def test_release_parsed_and_mismatches_kept():
    recs = data.load()
    items = [it for r in recs for it in r.items]
    assert len(recs) == 255 and len(items) == 9592
    assert sum(it.mismatched for it in items) == 36
    assert all(isinstance(t, str) for it in items for t in it.tokens)
    first = recs[0].items[0]
    assert isinstance(first.activations[0], float)


def test_release_reproduces_the_spec_numbers():
    # values recomputed from the shipped file (micro P/R/F1 over its 255 neurons)
    rep = O.evaluate(released.observations(data.load(), "labels"), n_boot=0)
    assert round(rep.overall.micro.precision, 3) == 0.639
    assert round(rep.overall.micro.recall, 3) == 0.484
    assert round(rep.overall.micro.f1, 3) == 0.551
    assert round(rep.overall.macro.f1, 3) == 0.522
    assert round(rep.overall.median_f1, 3) == 0.556
    act = O.evaluate(released.observations(data.load(), "activations"), n_boot=0)
    # 12 items disagree between labels and the max-activation rule: the numbers move < 0.002
    assert abs(act.overall.micro.f1 - rep.overall.micro.f1) < 0.002


def test_tampered_file_fails_the_checksum(tmp_path, monkeypatch):
    src = datasets.data_path(data.FILE)
    dst = tmp_path / data.FILE
    dst.parent.mkdir(parents=True)
    shutil.copy(src, dst)
    recs = json.loads(dst.read_text())
    recs[0]["gpt4_explanation"] = "something else"
    dst.write_text(json.dumps(recs))
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with pytest.raises(datasets.DataUnavailable, match="checksum mismatch"):
        data.load()
    assert data.load(verify=False)[0].explanation == "something else"


def test_cli_prints_paper_and_measured_numbers():
    from typer.testing import CliRunner

    from interp_harness.harness.cli import app

    res = CliRunner().invoke(app, ["neurons", "observational", "--boot", "20"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "paper (300 expl.)" in res.output and "0.56" in res.output
    assert "0.552" in res.output  # micro F1 from the shipped activations
    assert "36 with token/activation count" in res.output
