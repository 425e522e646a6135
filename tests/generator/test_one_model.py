"""Every number from one formula. Replace the model (``costs`` / ``roofline``) with a
perturbed one and every family's answer and every named mistake's value follows it: nothing is
computed a second time by hand.

Two perturbations, each with a result known in closed form:
- every roofline time x1.25 (``roofline.estimate`` wrapped): each time an op or step family gives,
  key and mistakes alike, is x1.25 (intensities and verdicts do not move);
- a multiply-add counted as 3 FLOPs (``costs.FLOPS_PER_MAC``): a matmul's intensity is x1.5 and its
  B* x2/3, each mistake too, except counting multiply-adds (which does not see the FLOP count).

Beyond one chip, the same for the models there (``generator.model.collectives``) and the roofline's rules
they share: pod totals x1.25 and another GB/GiB constant (pod), a collective's time from its two terms
x1.25 (collective), the no-overlap sum x1.25 and the verdict flipped (sharded_matmul), and the ridge
formula inverted (ridge: every value inverts and every comparison flips).
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from generator.model import catalogue, collectives, costs, roofline, units
from generator.problems import generate
from generator.problems.families import mistakes, ops, pod

SCALE = 1.25


def _values(p) -> list[tuple[str, float]]:
    return [(w.misconception.id, float(w.value)) for w, _ in mistakes.distances(p)]


def _sample(families, count=2, seeds=(0, 1)):
    reg = generate.registry()
    out = []
    for seed in seeds:
        out += [p for p in reg.generate(families=families, count=count, seed=seed) if not p.answer.is_choice]
    return out


def _resolve(p):
    reg = generate.registry()
    ops._CACHE.clear()  # the op families memoise estimates: drop the ones from the real model
    return reg.solve(reg.skill(p.skill), dict(p.params))


@pytest.fixture
def slow_roofline(monkeypatch):
    real = roofline.estimate

    def estimate(target, cost):
        est = real(target, cost)
        return dataclasses.replace(est, t_math_s=est.t_math_s * SCALE, t_comms_s=est.t_comms_s * SCALE)

    monkeypatch.setattr(roofline, "estimate", estimate)
    ops._CACHE.clear()
    yield
    ops._CACHE.clear()


def test_every_time_follows_the_roofline(slow_roofline):
    problems = [p for p in _sample(["floor", "transformer_step", "host_link"], count=2)
                if p.answer.unit == "s"]
    assert {p.family for p in problems} == {"floor", "transformer_step", "host_link"}
    checked = 0
    for p in problems:
        # ``p`` was drawn under the fixture too: rebuild the real one by undoing the scale
        with pytest.MonkeyPatch.context() as m:
            m.setattr(roofline, "estimate", _unscaled)
            ops._CACHE.clear()
            base = _resolve(p)
            base_values = _values(base)
        ops._CACHE.clear()
        now = _resolve(p)
        assert float(now.answer.value) == pytest.approx(SCALE * float(base.answer.value), rel=1e-9), p.id
        values = _values(now)
        assert [i for i, _ in values] == [i for i, _ in base_values], p.id
        for (mid, v), (_, v0) in zip(values, base_values):
            assert v == pytest.approx(SCALE * v0, rel=1e-9), (p.id, mid, v, v0)
            checked += 1
    assert checked > 50


def _unscaled(target, cost):
    ceil = target if isinstance(target, roofline.Ceilings) else roofline.Ceilings.from_chip(target, cost.dtype)
    return roofline.Estimate(ceil, cost, cost.flops / ceil.peak_flops_per_s, cost.bytes / ceil.hbm_bytes_per_s)


def test_sharded_matmul_times_follow_the_roofline(monkeypatch):
    problems = _sample(["sharded_matmul"], count=2)
    assert problems
    before = {p.id: (float(p.answer.value), dict(_values(p))) for p in problems}
    real = roofline.estimate
    monkeypatch.setattr(roofline, "estimate", lambda t, c: dataclasses.replace(real(t, c), t_math_s=real(t, c).t_math_s * SCALE))
    for p in problems:
        now = _resolve(p)
        key0, wrong0 = before[p.id]
        assert float(now.answer.value) > key0, p.id  # T_math + T_comms with T_math x1.25
        for mid, v in _values(now):
            if mid != "max-not-sum":  # the max may stay on the collective
                assert v > wrong0[mid], (p.id, mid)


def test_flop_counts_follow_costs(monkeypatch):
    problems = [p for p in _sample(["intensity", "critical_batch"], count=2)
                if p.params.get("op") in ("matmul", "dot") and p.params.get("form", "approx") == "approx"]
    assert {p.family for p in problems} == {"intensity", "critical_batch"}
    before = {p.id: (float(p.answer.value), _values(p)) for p in problems}
    monkeypatch.setattr(costs, "FLOPS_PER_MAC", 3)
    checked = 0
    for p in problems:
        now = _resolve(p)
        factor = 1.5 if p.family == "intensity" else 2 / 3
        key0, values0 = before[p.id]
        assert float(now.answer.value) == pytest.approx(factor * key0, rel=1e-9), p.id
        values = _values(now)
        assert [i for i, _ in values] == [i for i, _ in values0], p.id
        for (mid, v), (_, v0) in zip(values, values0):
            # multiply-adds do not see the FLOP count, nor does the chip's ridge (peak / bandwidth) taken for it
            want = v0 if mid in ("macs-not-flops", "ridge-as-intensity") else factor * v0
            assert v == pytest.approx(want, rel=1e-9), (p.id, mid)
            checked += 1
    assert checked > 20


# --- beyond one chip: the collectives model and the roofline rules it shares ----------------------

def _drawn(family, keep=lambda skill: True, seeds=(0, 1, 2)):
    """One problem per skill of ``family`` (and seed) that ``keep`` accepts, drawn under the real model."""
    reg = generate.registry()
    return [reg.draw(s.id, random.Random(seed)) for s in reg.skills([family]) if keep(s) for seed in seeds]


def _follows(problems, perturb, want_key, want_value):
    """Under ``perturb`` (a context callback on a MonkeyPatch), each problem's key is ``want_key(p, key0)``
    and each named mistake's value ``want_value(id, value0)``; returns how many values were checked."""
    before = {p.id: (float(p.answer.value), _values(p)) for p in problems}
    checked = 0
    with pytest.MonkeyPatch.context() as m:
        perturb(m)
        for p in problems:
            now = _resolve(p)
            key0, values0 = before[p.id]
            assert float(now.answer.value) == pytest.approx(want_key(p, key0), rel=1e-9), p.id
            values = _values(now)
            assert [i for i, _ in values] == [i for i, _ in values0], p.id
            for (mid, v), (_, v0) in zip(values, values0):
                assert v == pytest.approx(want_value(mid, v0), rel=1e-9), (p.id, mid, v, v0)
                checked += 1
    return checked


def test_pod_totals_and_the_wrong_dtype_peak_follow_the_pod_model():
    problems = _drawn("pod", lambda s: s.variant in ("flops", "hbm"), seeds=(0,))
    assert {p.params["variant"] for p in problems} == {"flops", "hbm"}
    real = collectives.pod_totals

    def scaled(*args, **kwargs):
        t = real(*args, **kwargs)
        return dataclasses.replace(t, peak_flops_per_s=SCALE * t.peak_flops_per_s, hbm_bytes=SCALE * t.hbm_bytes)

    checked = _follows(problems, lambda m: m.setattr(collectives, "pod_totals", scaled),
                       lambda p, key0: SCALE * key0, lambda mid, v0: SCALE * v0)
    ids = {mid for p in problems for mid, _ in _values(p)}
    assert {"wrong-dtype-peak", "gb-gib"} <= ids and checked > 10


def test_the_pod_gib_slips_use_the_one_gb_gib_constant(monkeypatch):
    reg = generate.registry()
    spec, cat = reg.specs["pod"], catalogue.load()
    spec = dataclasses.replace(spec, tolerance=0.0)
    problems = _drawn("pod", lambda s: s.variant == "hbm", seeds=(0,))
    assert problems
    monkeypatch.setattr(units, "GIB_PER_GB", 1.5)
    for p in problems:
        wrong = pod.misconceptions(spec, cat, p.params)
        key = float(p.answer.value)
        assert wrong["gb-gib"] == pytest.approx(1.5 * key) and wrong["gb-gib/"] == pytest.approx(key / 1.5), p.id


def test_collective_times_and_their_mistakes_follow_the_collective_model():
    problems = _drawn("collective", lambda s: s.variant != "bound")
    assert problems
    real = collectives.collective_seconds

    def slow(t_bandwidth_s, t_latency_s, overlap=True):
        return SCALE * real(t_bandwidth_s, t_latency_s, overlap)

    checked = _follows(problems, lambda m: m.setattr(collectives, "collective_seconds", slow),
                       lambda p, key0: SCALE * key0, lambda mid, v0: SCALE * v0)
    ids = {mid for p in problems for mid, _ in _values(p)}
    assert {"sum-not-max", "forgot-latency", "elements-not-bytes", "wrong-hops"} <= ids and checked > 50


def test_sharded_matmul_sums_follow_the_roofline_upper_bound():
    problems = _drawn("sharded_matmul", lambda s: s.variant != "split_bound")
    assert problems
    real = roofline.upper_seconds
    checked = _follows(problems, lambda m: m.setattr(roofline, "upper_seconds", lambda a, b: SCALE * real(a, b)),
                       lambda p, key0: SCALE * key0,
                       # assuming overlap is the floor, which the no-overlap sum does not reach
                       lambda mid, v0: v0 if mid == "max-not-sum" else SCALE * v0)
    ids = {mid for p in problems for mid, _ in _values(p)}
    assert {"max-not-sum", "wrong-hops", "one-way-vs-bidirectional"} <= ids and checked > 30


def test_sharded_matmul_verdicts_follow_the_roofline_verdict():
    problems = _drawn("sharded_matmul", lambda s: s.variant == "split_bound")
    assert problems
    before = {p.id: p.answer.choice for p in problems}
    assert set(before.values()) <= {"compute", "comms"}
    real = roofline.bound_of
    flipped = {"compute": "memory", "memory": "compute"}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(roofline, "bound_of", lambda i, r: flipped[real(i, r)])
        for p in problems:
            assert _resolve(p).answer.choice == {"compute": "comms", "comms": "compute"}[before[p.id]], p.id


def test_ridges_follow_the_one_ridge_formula():
    """The ridge inverted (bytes/s over FLOP/s): every ridge value and named mistake inverts, every
    compare's winner flips, and the catalogue's and the draw filter's ridge follow too."""
    values = _drawn("ridge", lambda s: not s.variant.startswith("compare-"), seeds=(0,))
    compares = _drawn("ridge", lambda s: s.variant.startswith("compare-"), seeds=(0, 1))
    assert values and compares
    winners = {p.id: (p.answer.choice, set(p.answer.choices)) for p in compares}
    chip = catalogue.load().get("v5e")
    matmul = costs.matmul(512, 4096, 4096)
    ridge0, ratio0 = chip.ridge_flops_per_byte("bf16"), ops.ridge_ratio(chip, matmul)

    def inverted(m):
        m.setattr(roofline, "ridge_flops_per_byte", lambda peak, bw: bw / peak)

    checked = _follows(values, inverted, lambda p, key0: 1 / key0, lambda mid, v0: 1 / v0)
    assert checked > 10
    with pytest.MonkeyPatch.context() as m:
        inverted(m)
        for p in compares:
            choice, both = winners[p.id]
            assert _resolve(p).answer.choice == (both - {choice}).pop(), p.id
        assert chip.ridge_flops_per_byte("bf16") == pytest.approx(1 / ridge0)
        assert ops.ridge_ratio(chip, matmul) == pytest.approx(ratio0 * ridge0 ** 2)


# --- the collectives lab predicts through the same model -----------------------------------------

@pytest.fixture(scope="module")
def coll_plan(tmp_path_factory):
    """The collectives lab's plan on 16 v5e chips (one ring), every row with a datasheet prediction."""
    from labs.collectives import lab
    from tests.labs.collectives_synthetic import NOW, FakeDevice

    plan = lab.make_plan(lab.Options(out_dir=tmp_path_factory.mktemp("coll"), trace=False, sizes=(64e3, 16e6)),
                         FakeDevice(chip=catalogue.load().get("v5e")), NOW)
    measured = {r.id: 1e-4 * (1 + k) for k, r in enumerate(plan.rows)}
    return plan, measured


def _coll_predictions(plan, measured):
    from labs.collectives import lab

    cal = lab.fit_calibration(plan, measured, local_matmul_s=2e-4)
    return ({r.id: lab.datasheet_prediction(plan, r) for r in plan.rows},
            {r.id: lab.calibrated_prediction(plan, r, cal) for r in plan.rows}, cal)


def test_the_collectives_labs_matmul_flops_follow_costs(coll_plan):
    """A multiply-add counted as 3 FLOPs: the sharded matmul's datasheet compute time is x1.5, the
    fitted FLOP/s x1.5 too, and the calibrated compute time (the fit given back) does not move."""
    plan, measured = coll_plan
    sheet0, cal0, fit0 = _coll_predictions(plan, measured)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(costs, "FLOPS_PER_MAC", 3)
        sheet, cal, fit = _coll_predictions(plan, measured)
    mm = plan.matmul.id
    assert sheet[mm]["t_math_s"] == pytest.approx(1.5 * sheet0[mm]["t_math_s"], rel=1e-12)
    t_comms = sheet0[mm]["seconds"] - sheet0[mm]["t_math_s"]
    assert sheet[mm]["seconds"] == pytest.approx(1.5 * sheet0[mm]["t_math_s"] + t_comms, rel=1e-12)
    assert fit["flops_per_s"] == pytest.approx(1.5 * fit0["flops_per_s"], rel=1e-12)
    assert cal[mm]["t_math_s"] == pytest.approx(cal0[mm]["t_math_s"], rel=1e-12)
    assert all(sheet[r.id] == sheet0[r.id] for r in plan.rows if r.id != mm)  # the collectives count no FLOPs


def test_the_collectives_labs_times_follow_the_collective_model(coll_plan):
    """A collective's time x1.25 from its two terms: every datasheet collective row is x1.25 (the
    sharded matmul's AllReduce term too). The fit inverts the same scaled model (α and 1/W each
    x1/1.25), so it still gives its two rows back and every calibrated row stays where it was."""
    from labs.collectives import lab

    plan, measured = coll_plan
    sheet0, cal0, _ = _coll_predictions(plan, measured)
    real = collectives.collective_seconds
    with pytest.MonkeyPatch.context() as m:
        m.setattr(collectives, "collective_seconds", lambda b, lat, overlap=True: SCALE * real(b, lat, overlap))
        sheet, cal, fit = _coll_predictions(plan, measured)
    mm = plan.matmul.id
    for r in plan.rows:
        if r.id == mm:
            t_comms0 = sheet0[mm]["seconds"] - sheet0[mm]["t_math_s"]
            assert sheet[mm]["seconds"] == pytest.approx(sheet0[mm]["t_math_s"] + SCALE * t_comms0, rel=1e-12)
        else:
            assert sheet[r.id]["seconds"] == pytest.approx(SCALE * sheet0[r.id]["seconds"], rel=1e-12), r.id
        assert cal[r.id]["seconds"] == pytest.approx(cal0[r.id]["seconds"], rel=1e-9), r.id
    assert fit["exact_on_fit"]
    for row_id in fit["fitted_on"]:
        assert cal[row_id]["seconds"] == pytest.approx(measured[row_id], rel=1e-9)


def test_the_collectives_labs_sharded_matmul_follows_the_no_overlap_rule(coll_plan):
    plan, measured = coll_plan
    sheet0, cal0, _ = _coll_predictions(plan, measured)
    real = roofline.upper_seconds
    with pytest.MonkeyPatch.context() as m:
        m.setattr(roofline, "upper_seconds", lambda a, b: SCALE * real(a, b))
        sheet, cal, _ = _coll_predictions(plan, measured)
    mm = plan.matmul.id
    assert sheet[mm]["seconds"] == pytest.approx(SCALE * sheet0[mm]["seconds"], rel=1e-12)
    assert cal[mm]["seconds"] == pytest.approx(SCALE * cal0[mm]["seconds"], rel=1e-12)


def test_the_collectives_labs_compute_time_follows_the_roofline(coll_plan, slow_roofline):
    plan, measured = coll_plan
    with pytest.MonkeyPatch.context() as m:
        m.setattr(roofline, "estimate", _unscaled)
        sheet0, cal0, _ = _coll_predictions(plan, measured)
    sheet, cal, _ = _coll_predictions(plan, measured)
    mm = plan.matmul.id
    assert sheet[mm]["t_math_s"] == pytest.approx(SCALE * sheet0[mm]["t_math_s"], rel=1e-12)
    assert cal[mm]["t_math_s"] == pytest.approx(SCALE * cal0[mm]["t_math_s"], rel=1e-12)


def test_the_labs_copy_probes_count_their_bytes_through_costs(monkeypatch):
    """The hierarchy's and the calibration's copy bandwidths are ``costs.in_place_pass_bytes`` over the
    measured time: counting each pass's bytes twice doubles both (the probes' timing faked at 1 s a call)."""
    from types import SimpleNamespace

    from generator.model import costs
    from labs.measure import calibrate, hierarchy, calls as measure
    from tests.labs import synthetic

    timing = SimpleNamespace(spread=0.0)
    fake = SimpleNamespace(measured_s=1.0, wall=timing, device=None, measured_from="wall")
    monkeypatch.setattr(measure, "measure_call", lambda *args, **kwargs: fake)
    device = synthetic.device("cpu", "cpu", memory_bytes=64 * 2**20, cache_bytes=2**20)

    def rates() -> tuple[float, float, float]:
        level, _, passes = hierarchy.copy_rate(2**16)
        rotated, _ = hierarchy.rotated_copy_rate(2**16, 2**18, None)
        return level / passes, rotated, calibrate.calibrate(device, "f32", 1, None).bytes_per_s

    plain = rates()
    assert plain[0] == plain[1] == costs.in_place_pass_bytes((2**16 // 1024, 256), "f32")
    real = costs.in_place_pass_bytes
    monkeypatch.setattr(costs, "in_place_pass_bytes", lambda shape, dtype="bf16": 2 * real(shape, dtype))
    assert rates() == pytest.approx(tuple(2 * r for r in plain))
