"""The collectives lab's sharded matmul: its local matmul and its AllReduce run one after the other, so
the prediction is their sum, never their max. Tested through ``labs.collectives.lab.datasheet_prediction``
and ``calibrated_prediction`` (the two public prediction functions), on a v5e plan with no device."""

from __future__ import annotations

import datetime as dt

import pytest

from generator.model import catalogue, costs, roofline
from generator.model import collectives as C
from labs.collectives import lab
from tests.labs.collectives_synthetic import FakeDevice

CAT = catalogue.load()



def _sharded(tmp_path):
    plan = lab.make_plan(lab.Options(out_dir=tmp_path, trace=False, sizes=(16e6,)), FakeDevice(chip=CAT.get("v5e")),
                         dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc))
    return plan, plan.matmul


def test_datasheet_sharded_matmul_is_matmul_plus_all_reduce(tmp_path):
    plan, row = _sharded(tmp_path)
    i, j, k = row.shape
    # the local matmul at the v5e's bf16 peak, the work split over 16 chips (the model's, not a hand count)
    t_math_s = roofline.estimate(roofline.Ceilings.from_chip(CAT.get("v5e"), "bf16"),
                                 costs.cost("matmul", (i, j // 16, k), "bf16")).t_math_s
    t_comms_s = C.chip_collective(CAT, CAT.get("v5e"), "all_reduce", row.bytes, (16,)).t_s
    got = lab.datasheet_prediction(plan, row)
    assert got["t_math_s"] == pytest.approx(t_math_s)
    assert got["seconds"] == pytest.approx(t_math_s + t_comms_s)
    assert got["seconds"] > max(t_math_s, t_comms_s) * 1.01  # both terms count: not an overlap


def test_calibrated_sharded_matmul_is_local_matmul_plus_all_reduce(tmp_path):
    plan, row = _sharded(tmp_path)
    cal = {"w_bidi_bytes_per_s": 9e10, "hop_latency_s": 1e-6, "local_matmul_s": 2e-4}
    comms = C.collective_time("all_reduce", row.bytes, (16,), (True,), 4.5e10, 9e10, 1e-6).t_s
    got = lab.calibrated_prediction(plan, row, cal)
    assert got["t_math_s"] == pytest.approx(2e-4, rel=1e-12) and got["seconds"] == pytest.approx(2e-4 + comms)
    assert got["seconds"] > max(2e-4, comms) * 1.01
