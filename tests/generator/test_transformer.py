"""The transformer step-time model against hand arithmetic with the seed's constants."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import catalogue
from generator.model import transformer as t

V5E_PEAK, V5E_BW = 1.97e14, 8.2e11  # the seed's v5e constants (LAB·0.1 CHIPS dict)
SEVEN_B = t.Model(params=7_000_000_000, layers=32, d_model=4096, name="7B")
B, S, L, D, P = 8, 4096, 32, 4096, 7_000_000_000


def test_seed_case_prefill_by_hand():
    step, est = t.estimate(catalogue.get("v5e"), SEVEN_B, "prefill", B, S)
    flops = 2 * P * B * S + L * B * (2 * S * D * S + 2 * S * S * D)
    nbytes = P * 2 + 2 * L * B * S * D * 2 + 2 * L * B * S * D * 2
    assert (step.flops, step.bytes) == (flops, nbytes)
    assert est.t_math_s == pytest.approx(flops / V5E_PEAK)
    assert est.t_comms_s == pytest.approx(nbytes / V5E_BW)
    assert est.bound == "compute" and est.floor_s == pytest.approx(2.686, rel=1e-3)


def test_seed_case_decode_by_hand():
    step, est = t.estimate(catalogue.get("v5e"), SEVEN_B, "decode", B, S)
    flops = 2 * P * B + L * B * (2 * 1 * D * S + 2 * 1 * S * D)
    nbytes = P * 2 + 2 * L * B * D * 2 + 2 * L * B * S * D * 2
    assert (step.flops, step.bytes) == (flops, nbytes)
    assert est.bound == "memory"
    assert est.floor_s == pytest.approx(nbytes / V5E_BW)
    assert step.tokens == B


def test_hbm_check():
    step, _ = t.estimate(catalogue.get("v5e"), SEVEN_B, "prefill", B, S)
    d = t.to_dict(step, _, catalogue.get("v5e"))
    assert d["hbm_footprint_bytes"] == P * 2 + 2 * L * B * S * D * 2
    assert d["fits_in_hbm"] is False  # 31.2 GB on a 16 GB chip
    small, est = t.estimate(catalogue.get("h200"), t.Model(1_230_000_000, 16, 2048, 512), "decode", 1, 1024)
    assert t.to_dict(small, est, catalogue.get("h200"))["fits_in_hbm"] is True


def test_json_keys():
    step, est = t.estimate(catalogue.get("v5e"), SEVEN_B, "prefill", B, S)
    d = t.to_dict(step, est, catalogue.get("v5e"))
    for key in ("flops", "bytes", "t_math_s", "t_comms_s", "floor_s", "bound", "phase", "tokens",
                "flops_weights", "flops_attention", "bytes_kv_cache", "hbm_footprint_bytes"):
        assert key in d
    assert d["flops"] == d["flops_weights"] + d["flops_attention"]
    assert d["bytes"] == d["bytes_weights"] + d["bytes_activations"] + d["bytes_kv_cache"]


def test_grouped_query_attention_shrinks_the_cache_only():
    mha = t.step_cost(t.Model(70_000_000_000, 80, 8192), "decode", 16, 2048)
    gqa = t.step_cost(t.Model(70_000_000_000, 80, 8192, kv_d_model=1024), "decode", 16, 2048)
    assert gqa.bytes_kv_cache * 8 == mha.bytes_kv_cache
    assert gqa.flops == mha.flops and gqa.bytes_weights == mha.bytes_weights


@settings(max_examples=60)
@given(st.sampled_from(catalogue.load().chips), st.integers(1, 256), st.integers(128, 32768),
       st.sampled_from([(1_230_000_000, 16, 2048), (7_000_000_000, 32, 4096), (70_000_000_000, 80, 8192)]))
def test_step_properties(chip, batch, seq, sizes):
    model = t.Model(*sizes)
    pre_step, pre = t.estimate(chip, model, "prefill", batch, seq)
    dec_step, dec = t.estimate(chip, model, "decode", batch, seq)
    assert pre.floor_s == max(pre.t_math_s, pre.t_comms_s)
    assert dec.floor_s < pre.floor_s  # one token per sequence costs less than S of them
    assert dec_step.bytes_kv_cache == pre_step.bytes_kv_cache  # written once, read once
    assert dec.intensity_flops_per_byte < pre.intensity_flops_per_byte


def test_decode_is_memory_bound_at_realistic_batches():
    for chip in catalogue.load().chips:
        _, est = t.estimate(chip, SEVEN_B, "decode", 8, 4096)
        assert est.bound == "memory"


@pytest.mark.parametrize("text,value", [("7B", 7_000_000_000), ("7e9", 7_000_000_000), ("1.3b", 1_300_000_000),
                                        ("6738415616", 6_738_415_616), ("70M", 70_000_000), (" 13B ", 13 * 10**9)])
def test_parse_count(text, value):
    assert t.parse_count(text) == value


@pytest.mark.parametrize("text", ["", "7Q", "-7B", "1e400", "7B7", "2**40", "0", "__import__('os')"])
def test_parse_count_refuses(text):
    with pytest.raises(ValueError):
        t.parse_count(text)


def test_bad_sizes():
    with pytest.raises(ValueError, match="phase"):
        t.step_cost(SEVEN_B, "train", 1, 1)
    with pytest.raises(ValueError, match="batch"):
        t.step_cost(SEVEN_B, "prefill", 0, 1)


def test_hbm_footprint_counts_the_grouped_query_cache():
    # 60B, 80 layers, d_model 8192, K/V width 1024 (8x fewer K/V heads), batch 8 at 4096 tokens, bf16:
    # 120 GB of weights + a 10.7 GB grouped cache fits the H200's 141 GB; a full 85.9 GB cache would not.
    P60, L60, D60, KV60, B8, S4K = 60_000_000_000, 80, 8192, 1024, 8, 4096
    gqa, mha = t.Model(P60, L60, D60, kv_d_model=KV60), t.Model(P60, L60, D60)
    want = P60 * 2 + 2 * L60 * B8 * S4K * KV60 * 2
    assert t.hbm_footprint_bytes(gqa, B8, S4K) == want
    assert t.hbm_footprint_bytes(mha, B8, S4K) == P60 * 2 + 2 * L60 * B8 * S4K * D60 * 2
    h200 = catalogue.get("h200")
    fits = {}
    for name, model in (("gqa", gqa), ("mha", mha)):
        step, est = t.estimate(h200, model, "decode", B8, S4K)
        d = t.to_dict(step, est, h200)
        fits[name] = d["fits_in_hbm"]
        if name == "gqa":
            assert d["hbm_footprint_bytes"] == want
    assert fits == {"gqa": True, "mha": False}
