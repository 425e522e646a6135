"""The collectives lab's sharded matmul: its local matmul and its AllReduce run one after the other, so
the prediction is their sum, never their max. Tested through ``labs.collectives.datasheet_prediction``
and ``calibrated_prediction`` (the two public prediction functions), on a v5e plan with no device."""

from __future__ import annotations

import datetime as dt

import pytest

from generator import catalogue
from generator import collectives as C
from labs import collectives as lab
from tests.labs.collectives_synthetic import FakeDevice

CAT = catalogue.load()



def _sharded(tmp_path):
    plan = lab.make_plan(lab.Options(out_dir=tmp_path, trace=False, sizes=(16e6,)), FakeDevice(chip=CAT.get("v5e")),
                         dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc))
    return plan, plan.matmul


def test_datasheet_sharded_matmul_is_matmul_plus_all_reduce(tmp_path):
    plan, row = _sharded(tmp_path)
    i, j, k = row.shape
    t_math_s = 2 * i * j * k / 16 / 1.97e14  # v5e bf16 peak, the work split over 16 chips
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
    assert got["t_math_s"] == 2e-4 and got["seconds"] == pytest.approx(2e-4 + comms)
    assert got["seconds"] > max(2e-4, comms) * 1.01
