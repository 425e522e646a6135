"""Benchmark: classic wrong answers, graded as `drill check` grades them: never right, and named.

Draws problems of every family (``generator.problems.generate``), works each one's classic wrong answers
*here*, apart from the misconception code (the family's own ``solve`` on a tweaked catalogue or a
patched dtype size, or the key scaled the way the slip scales it), keeps those at least
``AWAY`` x the tolerance from the key, and grades each with ``drills.quiz.assess`` (the quiz's and
`drill check`'s path). Per family and per kind of mistake it prints:

- graded right: a wrong answer marked right (target 0);
- named first: the feedback's first named mistake is one this kind stands for (target >= 97%);
- named anywhere: one of them is among the names (target >= 99%).

A kind whose number several catalogue entries give (a doubled DCN answer: another chip's figure,
another dtype's peak) lists them all; a wrong choice counts as named when the feedback names any.

    .venv/bin/python bench/bench_wrong_answers.py [--samples 10000] [--seed 0] [--from-issue]

``--from-issue`` samples instead the mistakes the answer-key issue lists (bits for bytes on an HBM floor
and on a transfer, a unit slip on bytes, AllReduce or AllToAll timed as one AllGather, HBM read per core,
store-and-forward ICI, ICI's rate for PCIe or DCN, the ridge given as an intensity, the K/V cache left
out, one TensorCore per chip, T_comms alone for a compute-bound floor), each worked by hand in this file
from the problem's params and the chip's figures (``issue_slips``), never through a family's hook.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drills.quiz import assess  # noqa: E402
from generator.model import catalogue, costs, transformer, units  # noqa: E402
from generator.problems import generate  # noqa: E402
from generator.model.catalogue import Catalogue  # noqa: E402
from generator.problems.families import FAMILIES, ops, spec  # noqa: E402
from generator.problems.misconceptions import CONFUSABLE  # noqa: E402  (data: the terms a learner swaps)
from generator.problems.problem import Problem  # noqa: E402
from generator.model.units import fmt  # noqa: E402

AWAY = 1.2  # a sampled wrong answer lies at least this many tolerances from the key
LINK_FIGURES = ("ici_bytes_per_s_one_way", "ici_bytes_per_s_bidi", "pcie_bytes_per_s", "dcn_bytes_per_s")
LINK_FAMILIES = ("interconnect", "collective", "transfer", "host_link", "sharded_matmul")
ANY = frozenset()  # a kind any named mistake answers (a wrong choice)


@dataclass(frozen=True)
class Sample:
    family: str
    kind: str
    problem: Problem
    value: float | str
    expected: frozenset[str]  # catalogue ids this kind stands for; empty: any name


@dataclass(frozen=True)
class Graded:
    sample: Sample
    right: bool
    first: bool
    anywhere: bool


def _scaled_catalogue(cat: Catalogue, factor: float, keys: tuple[str, ...] = LINK_FIGURES) -> Catalogue:
    """The catalogue with the link rates ``keys`` multiplied by ``factor`` (a learner's bits/bytes slip)."""
    chips = []
    for chip in cat.chips:
        figures = dict(chip.figures)
        for key in keys:
            if key in figures:
                figures[key] = dataclasses.replace(figures[key], value=float(figures[key].value) * factor)
        chips.append(dataclasses.replace(chip, figures=figures))
    return Catalogue(tuple(chips), cat.sources, cat.facts)


def _resolve(problem: Problem, cat: Catalogue) -> Problem | None:
    """The problem solved again by its family on ``cat`` (None for a card that solves another family's)."""
    if problem.family == "vocabulary":
        return None
    skill = generate.registry().skill(problem.skill)
    return FAMILIES[problem.family].solve(spec(problem.family), cat, skill, dict(problem.params))


@contextlib.contextmanager
def _bf16_counted_as(size: int) -> Iterator[None]:
    """bf16 counted at ``size`` bytes an element while the block runs (the wrong-dtype-size slip)."""
    old = units.DTYPE_BYTES["bf16"]
    ops._CACHE.clear()
    units.DTYPE_BYTES["bf16"] = size
    try:
        yield
    finally:
        units.DTYPE_BYTES["bf16"] = old
        ops._CACHE.clear()


def _one_operand(problem: Problem, cat: Catalogue) -> list[tuple[float, bool]]:
    """The op problem's answer with one of its two inputs' bytes left out (worked here from the shapes)."""
    p = problem.params
    cost = costs.cost(p["op"], tuple(p["shape"]), p["dtype"])
    t, s, b = cost.operand_dtypes, cost.shape, units.DTYPE_BYTES
    if cost.op == "matmul":
        inputs = [s[0] * s[1] * b[t["lhs"]], s[1] * s[2] * b[t["rhs"]]]
    elif cost.op == "add":
        inputs = [s[0] * s[1] * b[t["x"]]] * 2
    elif cost.op == "dot":
        inputs = [s[0] * b[t["x"]]] * 2
    else:
        return []
    chip = cat.get(p["chip"])
    peak, bw = float(chip.peak_flops[cost.dtype].value), float(chip.figures["hbm_bytes_per_s"].value)
    out = []
    for dropped in inputs:
        nbytes = cost.bytes - dropped
        quantity = "intensity" if problem.family == "intensity" else p.get("quantity", "floor")
        out.append(({"intensity": cost.flops / nbytes, "t_comms": nbytes / bw, "t_math": cost.flops / peak,
                     "floor": max(cost.flops / peak, nbytes / bw)}[quantity], dropped == cost.bytes_written))
    return out


def _transformer(problem: Problem, cat: Catalogue, weight_flops_per_param: int, attention: bool) -> float:
    """The step floor with the weights' FLOPs per parameter per token and attention as given."""
    p = problem.params
    model = transformer.Model(p["params"], p["layers"], p["d_model"], p.get("kv_d_model"))
    step = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], p["dtype"])
    chip = cat.get(p["chip"])
    peak, bw = float(chip.peak_flops[step.dtype].value), float(chip.figures["hbm_bytes_per_s"].value)
    tokens = p["batch"] * (p["seq"] if p["phase"] == "prefill" else 1)
    flops = weight_flops_per_param * model.params * tokens + (step.flops_attention if attention else 0)
    return max(flops / peak, step.bytes / bw)


def _slips(problem: Problem, cat: Catalogue, up8: Catalogue, down8: Catalogue) -> Iterator[tuple[str, float | str,
                                                                                             frozenset[str]]]:
    """(kind, wrong answer, the catalogue ids it stands for) for each classic slip that applies."""
    f, a, p = problem.family, problem.answer, problem.params
    if a.is_choice:
        if len(a.choices) == 2:
            yield "wrong choice", next(c for c in a.choices if c != a.choice), ANY
        elif f in ("vocabulary", "interconnect"):
            for c in a.choices:
                if c != a.choice and frozenset((c, a.choice)) in CONFUSABLE:
                    yield "term confused", c, frozenset({"term-confusion"})
        elif f == "lattice" and p["dtype"] in ("bf16", "int8", "fp8"):
            r, c = p["block"]
            padded = f"{-(-r // 8) * 8}x{-(-c // 128) * 128}"
            if padded in a.choices and padded != a.choice:
                yield "32-bit tile", padded, frozenset({"packing-ignored"})
        return
    key = a.number
    if a.unit == "s":
        for factor in (1e3, 1e-3):
            yield "unit slip of 1000", key * factor, frozenset({"unit-slip-1000"})
    if f in ("intensity", "floor", "transformer_step", "critical_batch") and "bf16" in (
            p.get("dtype"), p.get("activations"), p.get("weights")):
        with _bf16_counted_as(4):
            wide = _resolve(problem, cat)
        if wide is not None:
            # the same number, by construction: a halved intensity is also FLOPs counted as multiply-adds,
            # a doubled B* also a doubled (sparse or int8) peak
            same = {"intensity": {"macs-not-flops"}, "critical_batch": {"sparse-peak", "wrong-dtype-peak"}}
            cores = cat.get(p["chip"]).figure("tensorcores_per_chip")
            if f == "floor" and cores is not None and int(cores.value) == 2:
                same["floor"] = {"hbm-per-core"}  # and doubled bytes are halved bandwidth: one core's share
            yield "bf16 counted as 4 bytes", wide.answer.number, frozenset({"wrong-dtype-size", *same.get(f, ())})
    if f in LINK_FAMILIES:
        for scaled in (up8, down8):
            other = _resolve(problem, scaled)
            if other is not None and not other.answer.is_choice:
                yield "bits for bytes", other.answer.number, frozenset({"bits-for-bytes"})
    if f in ("intensity", "floor"):
        for value, like_output in _one_operand(problem, cat):
            # an input the size of the output left out is, by construction, the output write left out too
            yield "one operand's bytes", value, frozenset({"one-operand-bytes"} | (
                {"forgot-output-write"} if like_output else set()))
    if f == "ridge" or (f == "host_link" and p["variant"].startswith(("ridge", "critical_batch"))):
        yield "ridge inverted", 1 / key, frozenset({"ridge-inverted"})
    if f == "pod" and p["variant"] in ("flops", "hbm", "tensorcores"):
        yield "per chip for per slice", key / math.prod(int(d) for d in p["slice"].split("x")), \
            frozenset({"per-chip-not-pod"})
    if f == "pod" and p["variant"] == "hosts":
        yield "chips counted as hosts", float(math.prod(int(d) for d in p["slice"].split("x"))), \
            frozenset({"chips-as-hosts"})
    if f == "transformer_step":
        yield "6·P training FLOPs", _transformer(problem, cat, 6, True), frozenset({"training-flops"})
        if p["phase"] == "prefill":
            yield "attention left out", _transformer(problem, cat, 2, False), frozenset({"attention-left-out"})
    if f in ("host_link", "interconnect") and p.get("chip") in ("v3", "tpu7x") and "dcn" in p.get("variant", ""):
        for factor in (2.0, 0.5):  # where the other edition's per-chip DCN figure is half the current one
            other = _resolve(problem, _scaled_catalogue(cat, factor, ("dcn_bytes_per_s",)))
            if other is not None:
                # a doubled ridge is also another dtype's doubled peak: either name is the slip's
                yield "DCN factor of 2", other.answer.number, frozenset({"not-the-stated-figure", "wrong-dtype-peak"})


# --- the issue's list of classic mistakes, worked by hand (``--from-issue``) ------------------------------
#
# Each kind below is a mistake a learner makes, written out here from the problem's params and the chip's
# figures (peak, HBM, ICI, PCIe, DCN, cores, the wraparound rule) with formulas of this file's own: no
# family hook and no misconception code is called, so the sample is not built from the catalogue. Op FLOPs
# and bytes are the cost model's (``costs.cost``), which the keys agree with; the mistake is the step done here.

TWO_CORE_CHIPS = ("v4p", "v5p")  # megacore: one chip's HBM figure is shared by two TensorCores


def _fig(cat: Catalogue, chip: str, key: str) -> float:
    return float(cat.get(chip).figures[key].value)


def _wraps(cat: Catalogue, chip: str, n: int, shape: tuple[int, ...]) -> bool:
    """The book's wraparound rule, read from the chip's figure: v5e/v6e an axis of 16, v4p/v5p whole cubes."""
    rule = cat.get(chip).figures["ici_wraparound"].value
    if "axis_equals" in rule:
        return n == int(rule["axis_equals"])
    return all(d % int(rule["whole_cubes_of"]) == 0 for d in shape)


def _all_gather_s(cat: Catalogue, p: dict) -> float:
    """One AllGather of the drawn array over the drawn axes, by the book's rule: a ring moves V at W_bidi, a
    line (N-1)/N·V at W_one_way; the axes share the work; the latency ⌊N/2⌋ (ring) or N-1 (line) hops each."""
    shape = tuple(int(d) for d in p["slice"].split("x"))
    nbytes = p["shape"][0] * p["shape"][1] * units.DTYPE_BYTES[p["dtype"]]
    one, bidi = _fig(cat, p["chip"], "ici_bytes_per_s_one_way"), _fig(cat, p["chip"], "ici_bytes_per_s_bidi")
    lat = float(cat.fact("ici_hop_latency_s").value)
    rate, hop_count = 0.0, 0
    for i in p["over"]:
        n = shape[i]
        ring = _wraps(cat, p["chip"], n, shape)
        rate += bidi if ring else one * n / (n - 1)
        hop_count += n // 2 if ring else n - 1
    return max(nbytes / rate, hop_count * lat)


def _transfer_s(cat: Catalogue, p: dict, rate_factor: float = 1.0, store_and_forward: bool = False) -> float:
    """A point-to-point ICI transfer on a 2-D slice: the shortest way per axis, the bytes split over the
    outgoing links that start a shortest path, first byte after hops x the per-hop latency."""
    shape = tuple(int(d) for d in p["slice"].split("x"))
    nbytes = math.prod(p["shape"]) * units.DTYPE_BYTES[p["dtype"]]
    hop_count, ports = 0, 0
    for n, a, b in zip(shape, p["src"], p["dst"]):
        d = abs(a - b)
        ring = _wraps(cat, p["chip"], n, shape)
        hop_count += min(d, n - d) if ring else d
        ports += 0 if d == 0 else 2 if ring and n > 2 and 2 * d == n else 1
    rate = ports * _fig(cat, p["chip"], "ici_bytes_per_s_one_way") * rate_factor
    lat = float(cat.fact("ici_hop_latency_s").value)
    carried = hop_count if store_and_forward else 1  # store-and-forward: each hop waits for the whole array
    return carried * nbytes / rate + hop_count * lat


def _op_terms(cat: Catalogue, p: dict) -> tuple[float, float, float, float]:
    """(FLOPs, bytes, peak FLOP/s, HBM bytes/s) of a drawn op problem."""
    cost = costs.cost(p["op"], tuple(p["shape"]), p["dtype"])
    chip = cat.get(p["chip"])
    return (cost.flops, cost.bytes, float(chip.peak_flops[cost.dtype].value),
            float(chip.figures["hbm_bytes_per_s"].value))


def issue_slips(problem: Problem, cat: Catalogue) -> Iterator[tuple[str, float | str, frozenset[str]]]:
    """(kind, wrong answer, the catalogue ids it stands for) for each mistake of the issue's list that
    applies to ``problem``, each worked here by hand."""
    f, a, p = problem.family, problem.answer, problem.params
    if a.is_choice:
        return
    key = a.number
    if f == "floor":
        flops, nbytes, peak, bw = _op_terms(cat, p)
        t_math, quantity = flops / peak, p.get("quantity", "floor")

        def floor_with(t_comms: float) -> float:
            return t_comms if quantity == "t_comms" else max(t_math, t_comms)

        if quantity in ("floor", "t_comms"):
            for factor in (8, 1 / 8):  # the HBM rate read in bits (÷8), or a bit rate read as bytes (x8)
                yield "HBM bits for bytes", floor_with(nbytes * factor / bw), frozenset({"bits-for-bytes"})
            if p["chip"] in TWO_CORE_CHIPS:  # one core's half of the chip's HBM bandwidth
                yield "HBM read per core", floor_with(nbytes / (bw / 2)), frozenset({"hbm-per-core"})
        if quantity == "floor" and t_math > nbytes / bw:
            yield "T_comms alone (compute-bound)", nbytes / bw, frozenset({"one-term-floor"})
    if f == "ridge" and p["chip"] in TWO_CORE_CHIPS:
        chip = cat.get(p["chip"])
        peak, bw = float(chip.peak_flops[p["dtype"]].value), float(chip.figures["hbm_bytes_per_s"].value)
        yield "HBM read per core", peak / (bw / 2), frozenset({"hbm-per-core"})
    if f == "intensity":
        _, _, peak, bw = _op_terms(cat, p)
        yield "ridge given as intensity", peak / bw, frozenset({"ridge-as-intensity"})
    if (f == "vmem_fit" and p["variant"] == "bytes") or (f == "pod" and p["variant"] == "hbm"):
        for factor in (1e3, 1e-3):
            yield "unit slip of 1000 (bytes)", key * factor, frozenset({"unit-slip-1000"})
    if f == "pod" and p["variant"] == "tensorcores" and _fig(cat, p["chip"], "tensorcores_per_chip") == 2:
        yield "one TensorCore per chip", float(math.prod(int(d) for d in p["slice"].split("x"))), \
            frozenset({"one-core-per-chip"})
    if f == "collective" and p["variant"] == "all_reduce":
        yield "AllReduce as one AllGather", _all_gather_s(cat, p), frozenset({"allreduce-as-allgather"})
    if f == "collective" and p["variant"] == "all_to_all":
        yield "AllToAll as AllGather", _all_gather_s(cat, p), frozenset({"alltoall-as-allgather"})
    if f == "transfer" and p["variant"] == "time":
        for factor in (1 / 8, 8):
            yield "transfer bits for bytes", _transfer_s(cat, p, rate_factor=factor), frozenset({"bits-for-bytes"})
        yield "store-and-forward ICI", _transfer_s(cat, p, store_and_forward=True), frozenset({"store-and-forward"})
    if f == "interconnect" and p["variant"] == "ici":
        nbytes = math.prod(p["shape"]) * units.DTYPE_BYTES[p["dtype"]]
        d = abs(p["src"] - p["dst"])
        hop_count = min(d, p["axis"] - d) if p["wrap"] else d
        lat = float(cat.fact("ici_hop_latency_s").value)
        yield "store-and-forward ICI", hop_count * (nbytes / _fig(cat, p["chip"], "ici_bytes_per_s_one_way") + lat), \
            frozenset({"store-and-forward"})
    ici = {"ici-for-offchip"}
    if f == "interconnect" and p["variant"] in ("pcie", "dcn"):
        nbytes = math.prod(p["shape"]) * units.DTYPE_BYTES[p["dtype"]]
        yield "ICI for PCIe/DCN", nbytes / _fig(cat, p["chip"], "ici_bytes_per_s_one_way"), frozenset(ici)
    if f == "host_link" and not p["variant"].startswith("bound"):
        chip = cat.get(p["chip"])
        peak, w_ici = float(chip.peak_flops["bf16"].value), _fig(cat, p["chip"], "ici_bytes_per_s_one_way")
        if p["variant"].startswith("floor"):
            flops, nbytes, _, _ = _op_terms(cat, {"op": "matmul", "shape": p["shape"], "dtype": "bf16",
                                                  "chip": p["chip"]})
            yield "ICI for PCIe/DCN", max(flops / peak, nbytes / w_ici), frozenset(ici)
        else:
            yield "ICI for PCIe/DCN", peak / w_ici, frozenset(ici)
    if f == "transformer_step":
        b = units.DTYPE_BYTES[p["dtype"]]
        model = transformer.Model(p["params"], p["layers"], p["d_model"], p.get("kv_d_model"))
        step = transformer.step_cost(model, p["phase"], p["batch"], p["seq"], p["dtype"])
        chip = cat.get(p["chip"])
        peak, bw = float(chip.peak_flops[step.dtype].value), float(chip.figures["hbm_bytes_per_s"].value)
        kv = 2 * p["layers"] * p["batch"] * p["seq"] * (p.get("kv_d_model") or p["d_model"]) * b
        yield "K/V cache left out", max(step.flops / peak, (step.bytes - kv) / bw), frozenset({"kv-cache-left-out"})


def samples(count: int, seed: int = 0, from_issue: bool = False) -> list[Sample]:
    """``count`` classic wrong answers (fewer only if none are left to find): problems of every family in
    turn, each a random skill of it drawn with ``random.Random(seed)``; ``from_issue``: the mistakes of
    the issue's list (``issue_slips``) instead of the catalogue's kinds (``_slips``)."""
    cat = catalogue.load()
    up8, down8 = _scaled_catalogue(cat, 8.0), _scaled_catalogue(cat, 1 / 8)
    rng = random.Random(seed)
    skills: dict[str, list[str]] = defaultdict(list)
    for skill in generate.registry().skills():
        skills[skill.family].append(skill.id)
    out: list[Sample] = []
    while len(out) < count:
        found = 0
        for family in sorted(skills):
            problem = generate.draw(rng.choice(skills[family]), rng)
            slips = issue_slips(problem, cat) if from_issue else _slips(problem, cat, up8, down8)
            for kind, value, expected in slips:
                if not isinstance(value, str):
                    key = problem.answer.number
                    if not (math.isfinite(value) and value > 0) or abs(value - key) < AWAY * problem.tolerance * abs(key):
                        continue
                out.append(Sample(problem.family, kind, problem, value, expected))
                found += 1
        if not found:
            break
    return out[:count]


def grade(sample: Sample) -> Graded:
    """``drills.quiz.assess`` on the wrong answer written as a learner would (the card's formatter)."""
    p = sample.problem
    if isinstance(sample.value, str):
        text = sample.value
    elif p.answer.unit == "s" and sample.value >= 1000:  # no learner writes kiloseconds
        text = f"{sample.value:.6g} s"
    else:
        text = fmt(float(sample.value), p.answer.unit)
    outcome = assess.assess(p, text, generate.grading_bands(p.family))
    named = [m.misconception.id for m in outcome.matches]
    wanted = sample.expected
    first = bool(named) and (not wanted or named[0] in wanted)
    anywhere = bool(named) and (not wanted or bool(wanted & set(named)))
    return Graded(sample, outcome.status == assess.GRADED and bool(outcome.correct), first, anywhere)


def summary(graded: list[Graded]) -> dict[str, dict[str, tuple[int, int, int, int]]]:
    """by -> name -> (samples, graded right, named first, named anywhere), by "family" and by "kind"."""
    out: dict[str, dict[str, list[int]]] = {"family": defaultdict(lambda: [0, 0, 0, 0]),
                                           "kind": defaultdict(lambda: [0, 0, 0, 0])}
    for g in graded:
        for by, name in (("family", g.sample.family), ("kind", g.sample.kind)):
            row = out[by][name]
            row[0] += 1
            row[1] += g.right
            row[2] += g.first
            row[3] += g.anywhere
    return {by: {n: (r[0], r[1], r[2], r[3]) for n, r in sorted(rows.items())} for by, rows in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-issue", action="store_true",
                        help="the mistakes of the answer-key issue's list, worked by hand here, not the catalogue's kinds")
    args = parser.parse_args()
    graded = [grade(s) for s in samples(args.samples, args.seed, args.from_issue)]
    n = len(graded)
    right = sum(g.right for g in graded)
    first = sum(g.first for g in graded)
    anywhere = sum(g.anywhere for g in graded)
    print(f"{n} classic wrong answers ({len({g.sample.family for g in graded})} families), each >= {AWAY}x the "
          f"tolerance from the key; {'the issue list, worked by hand' if args.from_issue else 'the catalogue kinds'}")
    print(f"graded right:   {right} (target 0)")
    print(f"named first:    {first / n:.2%} (target >= 97%)")
    print(f"named anywhere: {anywhere / n:.2%} (target >= 99%)")
    for by, rows in summary(graded).items():
        print(f"\nby {by}:")
        print(f"  {'':28} {'n':>6} {'right':>6} {'first':>8} {'anywhere':>9}")
        for name, (count, r, fi, an) in rows.items():
            print(f"  {name:28} {count:6} {r:6} {fi / count:8.1%} {an / count:9.1%}")
    unnamed = Counter((g.sample.family, g.sample.kind) for g in graded if not g.anywhere)
    if unnamed:
        print("\nnot named (family, kind): " + ", ".join(f"{f}/{k}: {c}" for (f, k), c in unnamed.most_common(12)))
    wrong_right = [g.sample for g in graded if g.right][:5]
    for s in wrong_right:
        print(f"graded right: {s.problem.id} {s.value!r} ({s.kind})")


if __name__ == "__main__":
    main()
