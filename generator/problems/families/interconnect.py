"""Family 9 [interconnect]: moving bytes off-chip, and which link a transfer uses.

Transfer times and hop counts over ICI, PCIe and DCN from ``generator.model.links``, with the
catalogue's figures, cited in the solution.
Details: docs/internals.md.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, TypedDict, cast

from generator.model import catalogue, collectives, costs
from generator.model.links import hops, transfer_seconds
from generator.model.catalogue import Catalogue, Chip
from generator.problems.families.base import Mastery, Skill, cite, figure_sentence, other_editions, per_chip, problem, show
from generator.problems.families import slips
from generator.problems.families.slips import wrong
from generator.problems.misconceptions import WrongAnswer
from generator.problems.problem import Answer, Problem
from generator.problems.specs import Checker, FamilySpec
from generator.model.units import DTYPE_BYTES, sci, seconds, si

NAME = "interconnect"
ORDER = 90  # place in the course (decks, skills, --family lists): ascending
DECK_ID = 1_739_240_109  # the Anki deck, fixed forever (a new family gets a new id, never a reused one)
# "Can you" item 7: what shows it (drill progress)
MASTERY = {7: Mastery("the link question right (ICI, DCN or PCIe)", must_include=(":link",))}
LINKS = ("ICI", "DCN", "PCIe")
VARIANTS = ("ici", "pcie", "dcn", "link")
FIGURE = {"ici": "ici_bytes_per_s_one_way", "pcie": "pcie_bytes_per_s", "dcn": "dcn_bytes_per_s"}
LINK_LABEL = {"ici": "ICI", "pcie": "PCIe", "dcn": "DCN"}
ARRAY_FIELDS = {"chip", "array", "size"}
PROMPTS = {"ici": ARRAY_FIELDS | {"n", "src", "dst", "wrap", "hop_latency"}, "pcie": ARRAY_FIELDS,
           "dcn": ARRAY_FIELDS, "link": {"chip", "scenario"}}
HOP_LATENCY_FACT = "ici_hop_latency_s"
WRAP_FIGURE = "ici_wraparound"
TERM_SHARE = 0.05  # least share of the answer each ICI term carries (more if the tolerance is wider)
_REDRAWS = 2000  # an ICI skill with no fair draw in this many tries is a spec error


class _ChipVariant(TypedDict):
    chip: str
    variant: str


class InterconnectParams(_ChipVariant, total=False):
    """A drawn link problem: the chip and the variant; a ``link`` problem the index of its ``scenario``;
    an ``ici``, ``pcie`` or ``dcn`` problem the array's ``dtype`` and (rows, cols) ``shape``; an ``ici``
    one also the ``axis`` size, the ``src`` and ``dst`` positions on it and whether it ``wrap``s."""

    scenario: int
    dtype: str
    shape: list[int]
    axis: int
    src: int
    dst: int
    wrap: bool


def params_of(problem: Problem) -> InterconnectParams:
    """The params of an interconnect problem."""
    return cast(InterconnectParams, problem.params)


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"arrays", "ici_arrays", "axis_sizes", "scenarios", "variants", "source"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    a = check.mapping(p["arrays"], ("params", "arrays"), required={"rows", "cols", "dtypes"},
                      allowed={"rows", "cols", "dtypes"})
    dtypes = check.dtype_list(a["dtypes"], ("params", "arrays", "dtypes"))
    ia = check.mapping(p["ici_arrays"], ("params", "ici_arrays"), required={"rows", "cols"}, allowed={"rows", "cols"})
    scenarios = []
    if not isinstance(p["scenarios"], list) or not p["scenarios"]:
        check.fail(("params", "scenarios"), "expected a non-empty list of {text, link}")
    for i, s in enumerate(p["scenarios"]):
        at = ("params", "scenarios", i)
        s = check.mapping(s, at, required={"text", "link"}, allowed={"text", "link"})
        scenarios.append((check.template(s["text"], (*at, "text"), {"chip"}),
                          check.one_of(s["link"], (*at, "link"), LINKS)))
    sizes = check.int_list(p["axis_sizes"], ("params", "axis_sizes"), low=2)
    sources = catalogue.load().sources
    source = check.one_of(p["source"], ("params", "source"), list(sources))
    variants = check.text_list(p["variants"], ("params", "variants"))
    for i, v in enumerate(variants):
        check.one_of(v, ("params", "variants", i), VARIANTS)
    return {"rows": check.int_list(a["rows"], ("params", "arrays", "rows")),
            "cols": check.int_list(a["cols"], ("params", "arrays", "cols")), "dtypes": tuple(dtypes),
            "ici_rows": check.int_list(ia["rows"], ("params", "ici_arrays", "rows")),
            "ici_cols": check.int_list(ia["cols"], ("params", "ici_arrays", "cols")),
            "axis_sizes": sizes, "scenarios": tuple(scenarios), "variants": variants, "source": source}


def wrong_answers(problem: Problem, cat: Catalogue) -> Iterator[WrongAnswer]:
    """Named wrong answers: the link time with one step tweaked (``slip_times``, one model: ``generator.model.links``)."""
    p = params_of(problem)
    if problem.answer.is_choice:  # which link: ICI, DCN or PCIe
        yield from slips.term_confusions(problem)
        return
    chip = cat.get(p["chip"])
    t = slip_times(chip, cat, p)
    nbytes = costs.array_bytes(p["shape"], p["dtype"])
    if "other_hops" in t:
        yield wrong("wrong-hops", t["other_hops"],
                    f"{t['other_hop_count']:.0f} hops ({'no ' if p['wrap'] else ''}wraparound assumed) "
                    f"instead of {t['hop_count']:.0f}")
        yield wrong("forgot-latency", t["no_latency"],
                    f"latency left out: {t['hop_count']:.0f} hops x {si(t['latency_s'], 's')}")
        yield wrong("one-way-vs-bidirectional", t["bidirectional"],
                    f"bandwidth {sci(t['bidi_bytes_per_s'])} B/s (bidirectional) instead of "
                    f"{sci(t['bytes_per_s'])} (one way)")
        yield wrong("store-and-forward", t["store_and_forward"],
                    f"the array's {seconds(t['no_latency'])} on the wire paid at each of {t['hop_count']:.0f} hops, "
                    f"not once")
    if "elements" in t:
        yield wrong("elements-not-bytes", t["elements"],
                    f"bytes = {sci(costs.array_bytes(p['shape'], 'int8'))} elements instead of {sci(nbytes)} B")
    def with_rate(w: float) -> float:
        return slip_times(chip, cat, p, bytes_per_s=w)["answer"]

    ici = chip.figure(FIGURE["ici"])
    if p["variant"] != "ici" and ici is not None:  # first: likelier than another chip's figure of the same value
        yield wrong("ici-for-offchip", with_rate(float(ici.value)),
                    f"ICI's {sci(float(ici.value))} B/s one way instead of {LINK_LABEL[p['variant']]}'s "
                    f"{sci(t['bytes_per_s'])}")
    if p["variant"] != "ici":
        yield from slips.stated_figure_slips(problem, cat, chip, FIGURE[p["variant"]], LINK_LABEL[p["variant"]],
                                             with_rate)
    yield from slips.gib_slips(with_rate, t["bytes_per_s"])
    yield from slips.bits_slips(with_rate, t["bytes_per_s"], LINK_LABEL[p["variant"]])
    yield from slips.unit_slips(problem)


def skills(spec: FamilySpec, cat: Catalogue) -> list[Skill]:
    what = {"ici": "time to send an array between two chips over ICI", "pcie": "time to move an array over PCIe",
            "dcn": "time to send an array over DCN", "link": "which link a transfer uses (ICI, DCN or PCIe)"}
    def keep(chip: Chip, v: str) -> bool:
        return (v not in FIGURE or chip.figure(FIGURE[v]) is not None) and (v != "link" or chip.kind == "tpu")

    return per_chip(spec, cat, spec.params["variants"], lambda chip, v: f"{what[v]} ({chip.display})", keep,
                    tags=lambda v: (f"link::{v}",) if v in FIGURE else ())


def wraps(chip: catalogue.Chip, n: int) -> bool:
    """Whether an ICI axis of ``n`` chips has wraparound links, by the catalogue's rule
    (``collectives.wraps``; none when unstated). On v4p/v5p an axis of 4 may lie in a whole cube
    or in a 2x2x4: the model takes the line, and the prompt states it either way."""

    try:
        return bool(collectives.wraps(chip, n))
    except collectives.TopologyError:
        return False


def slip_times(chip: catalogue.Chip, cat: Catalogue, params: InterconnectParams,
               bytes_per_s: float | None = None) -> dict[str, float]:
    """The transfer time (s) of drawn ``params`` and what each slip gives, all from ``generator.model.links``:
    ``answer``; ``elements`` (bytes counted as elements, when the dtype is wider than a byte); on ICI
    also ``no_latency``, ``no_bandwidth``, ``other_hops`` (wraparound ignored or assumed) and
    ``bidirectional`` (the bidirectional figure for the one-way one) and ``store_and_forward`` (the array
    crossing each hop in turn), with the counts and figures
    behind them. ``bytes_per_s`` replaces the link's figure (another edition's, a GiB slip)."""
    variant = params["variant"]
    nbytes = costs.array_bytes(params["shape"], params["dtype"])
    elements = costs.array_bytes(params["shape"], "int8")
    bw = float(chip.value(FIGURE[variant])) if bytes_per_s is None else bytes_per_s
    out = {"bytes_per_s": bw}
    if variant != "ici":
        out["answer"] = transfer_seconds(nbytes, bw)
        if elements != nbytes:
            out["elements"] = transfer_seconds(elements, bw)
        return out
    n, a, b, wrap = params["axis"], params["src"], params["dst"], params["wrap"]
    lat = float(cat.facts[HOP_LATENCY_FACT].value)
    bidi = float(chip.value("ici_bytes_per_s_bidi"))
    h, other = hops(n, a, b, wrap), hops(n, a, b, not wrap)
    out.update(answer=transfer_seconds(nbytes, bw, h, lat), no_latency=transfer_seconds(nbytes, bw),
               no_bandwidth=transfer_seconds(0, bw, h, lat), other_hops=transfer_seconds(nbytes, bw, other, lat),
               bidirectional=transfer_seconds(nbytes, bidi, h, lat), hop_count=float(h),
               store_and_forward=transfer_seconds(nbytes * h, bw, h, lat),
               other_hop_count=float(other), latency_s=lat, bidi_bytes_per_s=bidi)
    if elements != nbytes:
        out["elements"] = transfer_seconds(elements, bw, h, lat)
    return out


def ici_terms(chip: catalogue.Chip, cat: Catalogue, params: InterconnectParams) -> dict[str, float]:
    """The ICI answer and what each slip gives: ``answer``, ``no_latency``, ``no_bandwidth``, ``other_hops``."""
    return slip_times(chip, cat, params)


def ici_is_fair(chip: catalogue.Chip, cat: Catalogue, params: InterconnectParams, least: float) -> bool:
    """Each slip (a term left out, the other hop count) misses the answer by more than ``least``."""
    t = ici_terms(chip, cat, params)
    return all(abs(t[k] - t["answer"]) > least * t["answer"] for k in ("no_latency", "no_bandwidth", "other_hops"))


def draw_params(spec: FamilySpec, cat: Catalogue, skill: Skill, rng: random.Random) -> InterconnectParams:
    p = spec.params
    if skill.variant == "link":
        return {"chip": skill.chip_name, "variant": "link", "scenario": rng.randrange(len(p["scenarios"]))}
    if skill.variant != "ici":
        return {"chip": skill.chip_name, "variant": skill.variant, "dtype": rng.choice(p["dtypes"]),
                "shape": [rng.choice(p["rows"]), rng.choice(p["cols"])]}
    chip, least = cat.get(skill.chip_name), max(TERM_SHARE, spec.tolerance)
    for _ in range(_REDRAWS):  # redraw from the same rng until every term decides the answer
        n = rng.choice(p["axis_sizes"])
        src, dst = rng.sample(range(n), 2)
        params: InterconnectParams = {"chip": skill.chip_name, "variant": "ici", "dtype": rng.choice(p["dtypes"]),
                  "shape": [rng.choice(p["ici_rows"]), rng.choice(p["ici_cols"])],
                  "axis": n, "src": src, "dst": dst, "wrap": wraps(chip, n)}
        if ici_is_fair(chip, cat, params, least):
            return params
    raise ValueError(f"interconnect on {chip.name}: no ICI draw where latency, bandwidth and hop count each "
                     f"move the answer by more than {least:.0%}; change ici_arrays or axis_sizes")


def solve(spec: FamilySpec, cat: Catalogue, skill: Skill, params: InterconnectParams) -> Problem:
    chip, variant = cat.get(params["chip"]), params["variant"]
    if variant == "link":
        text, link = spec.params["scenarios"][params["scenario"]]
        scenario = text.format(chip=chip.display)
        fields = {"chip": chip.display, "scenario": scenario}
        src = cat.sources[spec.params["source"]].cite()
        steps = ["ICI links the chips inside a pod (a slice) directly; DCN, the data-center network, joins pods "
                 "and hosts; PCIe joins a host to its own chips",
                 f"{scenario}: {link} [{src}]"]
        return problem(spec, skill, f"s{params['scenario']}", spec.prompts["link"].format(**fields),
                       Answer(choice=link, choices=LINKS), steps, dict(params), spec.hints["link"].format(**fields))
    rows, cols = params["shape"]
    dtype = params["dtype"]
    nbytes = costs.array_bytes(params["shape"], dtype)
    bw = chip.published_figure(FIGURE[variant])
    bw_value = float(bw.value)
    steps = [f"bytes = {rows}·{cols}·{DTYPE_BYTES[dtype]} ({dtype}) = {sci(nbytes)} B",
             f"{chip.display} {variant.upper() if variant != 'pcie' else 'PCIe'} bandwidth = {sci(bw_value)} B/s "
             f"{cite(bw)}" + (" (one way, per link)" if variant == "ici" else "")]
    t = transfer_seconds(nbytes, bw_value)
    fields = {"chip": chip.display, "array": f"{dtype}[{rows},{cols}]", "size": show(nbytes, "B")}
    key = f"{rows}x{cols}-{dtype}"
    if variant == "ici":
        n, a, b, wrap = params["axis"], params["src"], params["dst"], params["wrap"]
        h = hops(n, a, b, wrap)
        lat = cat.facts[HOP_LATENCY_FACT]
        latency = float(lat.value)
        total = transfer_seconds(nbytes, bw_value, h, latency)
        rule = chip.figure(WRAP_FIGURE)
        steps += [(f"wraparound on an axis of {n}: {'yes' if wrap else 'none'} ({rule.note}) {cite(rule)}" if rule
                   else f"the catalogue states no wraparound rule for the {chip.display}: the problem gives a line"),
                  f"hops on an axis of {n} " + (f"with wraparound: min(|{a}-{b}|, {n}-|{a}-{b}|) = {h}" if wrap
                                                 else f"without wraparound: |{a}-{b}| = {h}"),
                  f"latency = {h} hop{'s' if h != 1 else ''} × {seconds(latency)} per hop {cite(lat)} = {seconds(h * latency)}",
                  f"T = bytes / bandwidth + latency = {seconds(t)} + {seconds(h * latency)} = {seconds(total)}"]
        t = total
        fields.update(n=str(n), src=str(a), dst=str(b), hop_latency=seconds(latency),
                      wrap="with wraparound (a ring)" if wrap else "without wraparound (a line)")
        key += f"-n{n}-{a}to{b}-{'wrap' if wrap else 'nowrap'}"
    else:
        steps.append(f"T = bytes / bandwidth = {sci(nbytes)} / {sci(bw_value)} = {seconds(t)}")
    label = {"ici": "ICI", "pcie": "PCIe", "dcn": "DCN egress"}[variant]
    prompt = spec.prompts[variant].format(**fields) + figure_sentence(label, bw_value,
                                                                      "one way per link" if variant == "ici" else "per chip")
    also = () if variant == "ici" else other_editions(
        chip, FIGURE[variant], {"pcie": "PCIe", "dcn": "DCN"}[variant], lambda other: slip_times(chip, cat, params, other)["answer"], t, "s",
        spec.tolerance)
    return problem(spec, skill, key, prompt, Answer(value=t, unit="s"), steps,
                   dict(params), spec.hints[variant].format(**fields), (f"dtype::{dtype}",), also)
