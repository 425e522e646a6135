"""Issue 25 item 1: every number from one formula. Replace the model (``costs`` / ``roofline``) with a
perturbed one and every family's answer and every named mistake's value follows it: nothing is
computed a second time by hand.

Two perturbations, each with a result known in closed form:
- every roofline time x1.25 (``roofline.estimate`` wrapped): each time an op or step family gives,
  key and mistakes alike, is x1.25 (intensities and verdicts do not move);
- a multiply-add counted as 3 FLOPs (``costs.FLOPS_PER_MAC``): a matmul's intensity is x1.5 and its
  B* x2/3, each mistake too, except counting multiply-adds (which does not see the FLOP count).
"""

from __future__ import annotations

import dataclasses

import pytest

from generator import costs, generate, misconceptions, roofline
from generator.families import ops

SCALE = 1.25


def _values(p) -> list[tuple[str, float]]:
    return [(w.misconception.id, float(w.value)) for w, _ in misconceptions.distances(p)]


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
            want = v0 if mid == "macs-not-flops" else factor * v0  # multiply-adds do not see the FLOP count
            assert v == pytest.approx(want, rel=1e-9), (p.id, mid)
            checked += 1
    assert checked > 20
