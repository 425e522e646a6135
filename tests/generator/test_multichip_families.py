"""The five families beyond one chip: pod, collective, transfer, host_link, sharded_matmul.

Answers are recomputed here by hand from the catalogue figures (not through
generator/model/collectives.py) so a broken formula there shows up as a disagreement.
"""

from __future__ import annotations

import math
import re

import pytest

from generator.model import catalogue
from generator.problems.families import mistakes
from generator.problems.generate import generate, registry
from generator.model.units import DTYPE_BYTES, sci, seconds, si

CAT = catalogue.load()
FAMILIES = ("pod", "collective", "transfer", "host_link", "sharded_matmul")
PROBLEMS = generate(families=list(FAMILIES), count=6, seed=5)
BY = {f: [p for p in PROBLEMS if p.family == f] for f in FAMILIES}
HOP = 1e-6


def _wraps(chip: str, n: int, shape: list[int]) -> bool:
    # the reference's rule, written out independently: v5e/v6e only an axis of 16; v4p/v5p only a slice
    # of whole 4x4x4 cubes ("a 2x2x4 won't have any wraparounds"), then every axis
    return n == 16 if chip in ("v5e", "v6e") else all(d % 4 == 0 for d in shape)


def _ag(chip: str, v: float, axes: list[int], shape: list[int], op: str = "all_gather") -> tuple[float, int]:
    c = CAT.get(chip)
    w1, wb = c.value("ici_bytes_per_s_one_way"), c.value("ici_bytes_per_s_bidi")
    # AllToAll on a line: the middle link carries floor(N/2)*ceil(N/2)/N^2 of V each way; as a divisor of V/4
    line = {n: (w1 * n * n / (4 * (n // 2) * ((n + 1) // 2)) if op == "all_to_all" else w1 * n / (n - 1))
            for n in axes}
    bw = sum(wb if _wraps(chip, n, shape) else line[n] for n in axes)
    hops = sum(n // 2 if _wraps(chip, n, shape) else n - 1 for n in axes)
    return v / bw, hops


def _collective(chip: str, op: str, v: float, axes: list[int], shape: list[int]) -> float:
    t_bw, hops = _ag(chip, v, axes, shape, op)
    factor = {"all_gather": 1, "reduce_scatter": 1, "all_reduce": 2, "all_to_all": 0.25}[op]
    return max(factor * t_bw, (2 if op == "all_reduce" else 1) * hops * HOP)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_generates_with_tight_tolerance(family):
    assert BY[family]
    for p in BY[family]:
        if not p.answer.is_choice:
            assert p.tolerance == 0.05
        assert any("retrieved 2026-07-26" in s for s in p.solution), p.id


@pytest.mark.parametrize("family", FAMILIES)
def test_no_prompt_states_its_own_answer(family):
    for p in generate(families=[family], count=20, seed=9):
        if p.answer.is_choice:
            continue
        v = p.answer.value
        if p.answer.unit == "":
            assert f"{v:g}" not in re.findall(r"\d+(?:\.\d+)?", p.prompt), (p.prompt, v)
            continue
        for text in {sci(v), si(v, p.answer.unit), seconds(v) if p.answer.unit == "s" else sci(v)}:
            assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d.])", p.prompt), (p.prompt, text)


def test_collective_answers_match_the_hand_model():
    assert BY["collective"]
    for p in BY["collective"]:
        prm = p.params
        shape = [int(d) for d in prm["slice"].split("x")]
        v = prm["shape"][0] * prm["shape"][1] * DTYPE_BYTES[prm["dtype"]]
        t = _collective(prm["chip"], prm["op"], v, [shape[i] for i in prm["over"]], shape)
        if p.answer.is_choice:
            t_bw, hops = _ag(prm["chip"], v, [shape[i] for i in prm["over"]], shape, prm["op"])
            factor = {"all_gather": 1, "reduce_scatter": 1, "all_reduce": 2, "all_to_all": 0.25}[prm["op"]]
            lat = (2 if prm["op"] == "all_reduce" else 1) * hops * HOP
            assert p.answer.choice == ("bandwidth" if factor * t_bw >= lat else "latency")
        else:
            assert p.answer.value == pytest.approx(t, rel=1e-9), p.id


def test_collective_draws_cover_both_bounds_and_both_wrap_cases():
    many = generate(families=["collective"], chips=["v5e"], count=40, seed=2)
    text = "\n".join(s for p in many for s in p.solution)
    assert "bandwidth-bound" in text and "latency-bound" in text
    assert "no wraparound" in text and "wraparound -> bidirectional ring" in text
    for p in many:  # v5e wraps only an axis of 16
        shape = [int(d) for d in p.params["slice"].split("x")]
        for i in p.params["over"]:
            line = next(s for s in p.solution if s.startswith(f"axis of {shape[i]}:"))
            assert ("no wraparound" in line) == (shape[i] != 16), (p.id, line)


def test_pod_answers():
    for p in BY["pod"]:
        prm, chip = p.params, CAT.get(p.params["chip"])
        shape = [int(d) for d in prm["slice"].split("x")]
        chips = math.prod(shape)
        host = math.prod(int(d) for d in chip.value("host_topology").split("x"))
        want = {"chips": chips, "hosts": -(-chips // host), "tensorcores": chips * chip.value("tensorcores_per_chip", 0),
                "flops": chips * chip.peak_flops_per_s("bf16"), "hbm": chips * chip.hbm_bytes}
        if prm["variant"] == "wrap":
            assert p.answer.choice == ("yes" if _wraps(chip.name, shape[prm["axis"]], shape) else "no")
        else:
            assert p.answer.value == pytest.approx(want[prm["variant"]])


def test_transfer_answers():
    for p in BY["transfer"]:
        prm, chip = p.params, CAT.get(p.params["chip"])
        shape = [int(d) for d in prm["slice"].split("x")]
        hops = ports = 0
        for n, a, b in zip(shape, prm["src"], prm["dst"]):
            d = abs(a - b)
            wrap = _wraps(chip.name, n, shape)
            hops += min(d, n - d) if wrap else d
            ports += 0 if d == 0 else 2 if wrap and 2 * d == n else 1
        nbytes = math.prod(prm["shape"]) * DTYPE_BYTES[prm["dtype"]]
        want = {"hops": hops, "first_byte": hops * HOP,
                "time": hops * HOP + nbytes / (ports * chip.value("ici_bytes_per_s_one_way"))}[prm["variant"]]
        assert p.answer.value == pytest.approx(want), p.id


def test_host_link_answers():
    for p in BY["host_link"]:
        chip = CAT.get(p.params["chip"])
        kind, link = p.params["variant"].rsplit("_", 1)
        bw = chip.value(f"{link}_bytes_per_s")
        peak = chip.peak_flops_per_s("bf16")
        if kind in ("ridge", "critical_batch"):
            assert p.answer.value == pytest.approx(peak / bw)
            continue
        b, d, f = p.params["shape"]
        flops, nbytes = 2 * b * d * f, 2 * (b * d + d * f + b * f)
        if kind == "floor":
            assert p.answer.value == pytest.approx(max(flops / peak, nbytes / bw))
        else:
            assert p.answer.choice == ("compute" if flops / nbytes >= peak / bw else "memory")


def test_sharded_matmul_answers_and_both_bounds():
    for p in BY["sharded_matmul"]:
        prm, chip = p.params, CAT.get(p.params["chip"])
        n, i, j, k = prm["n"], prm["i"], prm["j"], prm["k"]
        peak = chip.peak_flops_per_s("bf16")
        # the prompt names the slice: whole cubes n x 4 x 4 on v4p/v5p when 4 divides n, else n x 2 x 2; n x n in 2-D
        sl = ([n, 4, 4] if n % 4 == 0 else [n, 2, 2]) if chip.name in ("v4p", "v5p") else [n, n]
        assert f"The slice is {'x'.join(map(str, sl))}" in p.prompt
        if prm["variant"] == "gather_time":
            want = 2 * i * j * k / peak + _collective(chip.name, "all_gather", 2 * i * j, [n], sl)
        else:
            op = "reduce_scatter" if prm["variant"] == "reducescatter_time" else "all_reduce"
            want = 2 * i * j * k / n / peak + _collective(chip.name, op, 2 * i * k, [n], sl)
        if prm["variant"] == "split_bound":
            t_math = 2 * i * j * k / n / peak
            assert p.answer.choice == ("compute" if t_math >= want - t_math else "comms")
        else:
            assert p.answer.value == pytest.approx(want), p.id
    splits = generate(families=["sharded_matmul"], chips=["v5e"], count=30, seed=3)
    assert {p.answer.choice for p in splits if p.params["variant"] == "split_bound"} == {"compute", "comms"}


def test_skills_skip_chips_without_figures():
    ids = {s.id for s in registry().skills(list(FAMILIES))}
    assert "collective:v5e:all_reduce" in ids and "pod:v5p:wrap" in ids
    assert not any(i.startswith(("collective:v3:", "collective:tpu7x:", "pod:tpu7x:wrap", "pod:h100")) for i in ids)
    assert not any(i.startswith("transfer:") and not i.startswith(("transfer:v5e", "transfer:v6e")) for i in ids)


def test_misconceptions_are_outside_the_tolerance_and_do_occur():
    from generator.problems.families import FAMILIES as MODULES

    reg = registry()
    seen: dict[str, set[str]] = {f: set() for f in FAMILIES}
    for p in generate(families=list(FAMILIES), count=8, seed=13):
        hook = getattr(MODULES[p.family], "misconceptions", None)
        wrong = hook(reg.specs[p.family], CAT, p.params) if hook else {
            w.misconception.id: float(w.value) for w in mistakes.wrong_answers(p, CAT) if not isinstance(w.value, str)}
        for name, value in wrong.items():
            assert p.answer.value is not None
            assert abs(value - p.answer.value) > p.tolerance * p.answer.value, (p.id, name)
            seen[p.family].add(name)
    assert {"one-way-vs-bidirectional", "wrong-hops", "elements-not-bytes", "sum-not-max"} <= seen["collective"]
    assert {"one-way-vs-bidirectional", "wrong-hops", "elements-not-bytes"} <= seen["transfer"]
    assert {"one-way-vs-bidirectional", "wrong-hops", "max-not-sum"} <= seen["sharded_matmul"]
    assert {"wrong-dtype-peak", "sum-not-max", "elements-not-bytes"} <= seen["host_link"]
    assert {"bits-for-bytes", "bits-for-bytes/"} <= seen["collective"] & seen["transfer"] & seen["sharded_matmul"]
    assert {"bits-for-bytes", "ridge-inverted", "unit-slip-1000", "ici-for-offchip"} <= seen["host_link"]
    assert {"allreduce-as-allgather", "alltoall-as-allgather"} <= seen["collective"]
    assert "store-and-forward" in seen["transfer"]
    # GB/GiB both ways on HBM; one chip's share for the slice's; chips for hosts; one TensorCore for two
    assert seen["pod"] == {"wrong-dtype-peak", "gb-gib", "gb-gib/", "per-chip-not-pod", "chips-as-hosts",
                           "one-core-per-chip"}


def test_wrong_hops_example():
    # v5e, AllGather of 1 GB over an axis of 16: the key uses the ring (V / W_bidi = 11.1 ms);
    # ignoring the wraparound gives the line: 15/16 * 1e9 / 4.5e10 = 20.8 ms
    from generator.problems.families import collective

    params = {"chip": "v5e", "variant": "all_gather", "op": "all_gather", "slice": "16x16", "over": [0],
              "dtype": "bf16", "shape": [8192, 65536 // 2 * 2]}
    v = 8192 * 65536 * 2
    wrong = collective.misconceptions(registry().specs["collective"], CAT, params)
    assert wrong["wrong-hops"] == pytest.approx(15 / 16 * v / 4.5e10)
    assert wrong["one-way-vs-bidirectional"] == pytest.approx(v / 4.5e10)


@pytest.mark.slow
def test_the_five_families_import_into_real_anki(tmp_path):
    from anki.collection import Collection

    from generator.export import anki as export
    from bench.anki_schedule import import_package

    problems = generate(families=list(FAMILIES), chips=["v5e", "v5p"], count=1, seed=4)
    path = tmp_path / "multi.apkg"
    export.write_deck(problems, str(path))
    col = Collection(str(tmp_path / "c.anki2"))
    try:
        log = import_package(col, path)
        assert len(log.new) == len(problems) == col.note_count()
        names = {d.name for d in col.decks.all_names_and_ids()}
        assert {f"Rudrite Kernels::Stage 0::{f}" for f in FAMILIES} <= names
        again = import_package(col, path)  # the same deck again: nothing new, nothing duplicated
        assert len(again.new) == 0 and col.note_count() == len(problems)
    finally:
        col.close()
