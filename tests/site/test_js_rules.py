"""The page's playground script (``drills/site/assets/site.js``) under Node against the Python model.

The shipped ``site.js`` runs in a Node ``vm`` context whose ``document`` holds only the page's data
(``drills.site.data.playground_data``, as the build embeds it) and is still loading, so the page's
controls are never wired and only ``window.drillSite`` (``compute`` and the number formatting) is used.
Every case goes to one Node process; the expected values come from ``generator.model.roofline`` (intensity,
ridge, the bound, T_math, T_comms, the floor, attainable, and the strings ``drill roofline`` prints) and
``generator.model.units`` at test time. Chips are the catalogue's plus generated ones (random peaks and
bandwidths, some with the intensity exactly on the ridge), so the rules are checked beyond the
catalogue's few numbers. The Chromium test of the built page is in test_browser.py (slow).
"""

from __future__ import annotations

import random

import pytest

from drills.site import build, data
from generator.model import catalogue, units
from generator.model import roofline as model
from labs.measure import ops as lab_ops
from tests.js import run_node

SITE_JS = build.ASSETS / "site.js"

HARNESS = r"""
const vm = require("vm");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const el = { textContent: input.data };
const ctx = { window: {}, document: { readyState: "loading", addEventListener() {},
                                      getElementById: (id) => (id === "site-data" ? el : null) } };
vm.runInNewContext(input.script, ctx, { filename: "site.js" });
const S = ctx.window.drillSite, f = S.format;
process.stdout.write(JSON.stringify({
  compute: input.cases.map((c) => S.compute(c[0], c[1], c[2], c[3])),
  format: input.values.map((v) => [f.fixed(v, 1), f.gfmt(v, 3), f.efmt(v, 3), f.si(v, "B/s"), f.sci(v),
                                   f.seconds(v), f.intensityNumber(v)]),
}));
"""

NUMERIC = ("intensity", "ridge", "floor", "t_math", "t_comms", "attainable", "flops", "bytes", "peak", "bw")
CASES = 500  # playground cases: half on catalogue chips, half on generated ones


def reference(ceilings: model.Ceilings, display: str, op: str, n: int) -> dict:
    """What the playground must show for ``op`` at size ``n`` under ``ceilings``, from generator.model.roofline."""
    cost = lab_ops.OPS[op].cost(n, ceilings.dtype)
    est = model.estimate(ceilings, cost)
    summary = dict(line.split(": ", 1) for line in model.summary_lines(est))
    return {
        "intensity": est.intensity_flops_per_byte, "ridge": est.ridge_flops_per_byte, "floor": est.floor_s,
        "t_math": est.t_math_s, "t_comms": est.t_comms_s, "attainable": est.attainable_flops_per_s,
        "flops": cost.flops, "bytes": cost.bytes, "peak": ceilings.peak_flops_per_s,
        "bw": ceilings.hbm_bytes_per_s, "bound": est.bound,
        "text": {"intensity": summary["intensity"], "verdict": summary["verdict"],
                 "attainable": summary["attainable"], "floor": summary["floor latency"]},
        "header": f"chip: {display}   op: {cost.op} [{','.join(str(d) for d in cost.shape)}]   dtype: {cost.dtype}",
        "worked": model.worked_lines(est),
    }


def sizes(rng: random.Random) -> int:
    pick = rng.random()
    if pick < 0.1:
        return rng.choice([1, 2, 3, 8, 9, 2048, 4096, data.MAX_N])
    return int(round(2 ** rng.uniform(0, 17))) if pick < 0.55 else rng.randint(1, data.MAX_N)


def generated_chip(rng: random.Random, i: int, op: str, n: int, dtype: str) -> tuple[dict, model.Ceilings]:
    """A chip of random ceilings (the page's data entry and its Ceilings); every third one has the op's
    intensity at ``n`` exactly on its ridge (a power-of-two bandwidth keeps peak / bandwidth exact)."""
    cost = lab_ops.OPS[op].cost(n, dtype)
    compute_dtype = cost.dtype
    if i % 3 == 0 and cost.flops > 0:
        bw = 2.0 ** rng.randint(30, 45)
        peak = cost.flops / cost.bytes * bw
    else:
        bw = 10 ** rng.uniform(9, 13.5)
        peak = 10 ** rng.uniform(10, 16)
    name = f"gen{i}"
    ceilings = model.Ceilings(name, peak, bw, compute_dtype, f"generated case {i}")
    entry = {"name": ceilings.name, "dtype": compute_dtype, "peak_flops_per_s": peak, "hbm_bytes_per_s": bw,
             "source": ceilings.source}
    return ({"name": name, "display": f"Generated {i}", "kind": "generated",
             "ceilings": {d: {**entry, "dtype": d} for d in units.COMPUTE_DTYPES}}, ceilings)


@pytest.fixture(scope="module")
def results():
    """One Node run over every case: (cases, what Python expects, what the script computed)."""
    rng = random.Random(20261202)
    play = data.playground_data()
    chips = catalogue.load().chips
    cases, expected = [], []
    for i in range(CASES):
        op, n = rng.choice(data.PAGE_OPS), sizes(rng)
        if i % 2:
            chip = rng.choice(chips)
            published = [d for d in units.COMPUTE_DTYPES if d in chip.peak_flops]
            dtype = rng.choice(list(units.COMPUTE_DTYPES)) if i % 7 == 1 else rng.choice(published)
            try:
                ceilings = model.Ceilings.from_chip(chip, lab_ops.OPS[op].cost(n, dtype).dtype)
            except KeyError as exc:
                want = {"error": exc.args[0]}
            else:
                want = reference(ceilings, chip.display, op, n)
            cases.append((chip.name, op, n, dtype))
        else:
            dtype = rng.choice(list(units.COMPUTE_DTYPES))
            entry, ceilings = generated_chip(rng, i, op, n, dtype)
            play["chips"].append(entry)
            want = reference(ceilings, entry["display"], op, n)
            cases.append((entry["name"], op, n, dtype))
        expected.append(want)
    for n in (0, data.MAX_N + 1):  # outside the page's range
        cases.append(("v5e", "matmul", n, "bf16"))
        expected.append({"error": f"N must be a whole number from 1 to {data.MAX_N}"})
    values = ([k / 8 for k in range(0, 200)] + [k / 4 + 1000 for k in range(50)]
              + [rng.uniform(0, 1) * 10 ** rng.randint(-14, 17) for _ in range(400)]
              + [9.9995, 0.00099995, 999.5, 999_999.5, 1e6, 1e16, 2.5e-13, 0.0])
    out = run_node(HARNESS, {"script": SITE_JS.read_text(encoding="utf-8"), "data": build._script_json(play),
                             "cases": cases, "values": values})
    return cases, expected, out, values


def test_the_cases_cover_both_verdicts_ties_and_errors(results):
    cases, expected, _, _ = results
    graded = [e for e in expected if "error" not in e]
    assert len(graded) >= 400 and sum("error" in e for e in expected) >= 20
    assert {e["bound"] for e in graded} == {"compute", "memory"}
    assert sum(e["intensity"] == e["ridge"] for e in graded) >= 50


@pytest.mark.parametrize("key", NUMERIC)
def test_the_playgrounds_numbers_are_the_rooflines(results, key):
    """Intensity, ridge, floor and the rest: the same double as Python's, case by case (JSON may write a
    large whole double as an integer, hence ``float``)."""
    cases, expected, out, _ = results
    diffs = [(c, e[key], js.get(key)) for c, e, js in zip(cases, expected, out["compute"])
             if "error" not in e and float(js[key]) != e[key]]
    assert not diffs, diffs[:5]


def test_the_playgrounds_verdict_and_errors_are_the_rooflines(results):
    """The bound (compute when the intensity reaches the ridge, ties included) and the refusals."""
    cases, expected, out, _ = results
    for case, want, js in zip(cases, expected, out["compute"]):
        if "error" in want:
            assert js == want, case
        else:
            assert js["bound"] == want["bound"], (case, want["intensity"], want["ridge"])


def test_the_playgrounds_words_are_drill_rooflines(results):
    """The four outputs, the header and the worked arithmetic, string for string."""
    cases, expected, out, _ = results
    for case, want, js in zip(cases, expected, out["compute"]):
        if "error" not in want:
            assert (js["text"], js["header"], js["worked"]) == (want["text"], want["header"], want["worked"]), case


def test_number_formatting_is_pythons(results):
    """fixed, g and e formats (half-even ties), si, sci, seconds and intensity_number as generator.model.units."""
    _, _, out, values = results
    for v, js in zip(values, out["format"]):
        assert js == [f"{v:.1f}", f"{v:.3g}", f"{v:.3e}", units.si(v, "B/s"), units.sci(v), units.seconds(v),
                      units.intensity_number(v)], v
