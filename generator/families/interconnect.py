"""Family 9 [interconnect]: moving bytes off-chip, and which link a transfer uses.

- ICI between two chips on one axis, PCIe (host <-> chip), DCN (chip egress):
  the transfer time and hop count of ``generator/links.py``, with the one-way
  per-link ICI bandwidth, the PCIe or the DCN bandwidth of the chip.
- Which link: ICI inside a pod (slice), DCN between pods, PCIe between host and chip.

Every bandwidth and the hop latency are catalogue figures, cited in the solution.
"""

from __future__ import annotations

from typing import Any

from generator import catalogue
from generator.links import hops, transfer_seconds
from generator.catalogue import Catalogue
from generator.families.base import cite, make_skill, problem, show
from generator.problem import Answer
from generator.specs import Checker, FamilySpec
from generator.units import DTYPE_BYTES, sci, seconds

NAME = "interconnect"
LINKS = ("ICI", "DCN", "PCIe")
VARIANTS = ("ici", "pcie", "dcn", "link")
FIGURE = {"ici": "ici_bytes_per_s_one_way", "pcie": "pcie_bytes_per_s", "dcn": "dcn_bytes_per_s"}
ARRAY_FIELDS = {"chip", "array", "size"}
PROMPTS = {"ici": ARRAY_FIELDS | {"n", "src", "dst", "wrap", "hop_latency"}, "pcie": ARRAY_FIELDS,
           "dcn": ARRAY_FIELDS, "link": {"chip", "scenario"}}
HOP_LATENCY_FACT = "ici_hop_latency_s"


def check_params(spec: FamilySpec, check: Checker) -> dict[str, Any]:
    keys = {"arrays", "axis_sizes", "scenarios", "variants", "source"}
    p = check.mapping(spec.params, ("params",), required=keys, allowed=keys)
    a = check.mapping(p["arrays"], ("params", "arrays"), required={"rows", "cols", "dtypes"},
                      allowed={"rows", "cols", "dtypes"})
    dtypes = check.dtype_list(a["dtypes"], ("params", "arrays", "dtypes"))
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
            "axis_sizes": sizes, "scenarios": tuple(scenarios), "variants": variants, "source": source}


def skills(spec: FamilySpec, cat: Catalogue):
    what = {"ici": "time to send an array between two chips over ICI", "pcie": "time to move an array over PCIe",
            "dcn": "time to send an array over DCN", "link": "which link a transfer uses (ICI, DCN or PCIe)"}
    out = []
    for name in spec.chips:
        chip = cat.get(name)
        for v in spec.params["variants"]:
            if v in FIGURE and chip.figure(FIGURE[v]) is None:
                continue
            if v == "link" and chip.kind != "tpu":
                continue
            out.append(make_skill(NAME, chip.name, v, f"{what[v]} ({chip.display})",
                                  (f"link::{v}",) if v in FIGURE else ()))
    return out


def draw_params(spec: FamilySpec, cat: Catalogue, skill, rng) -> dict[str, Any]:
    p = spec.params
    if skill.variant == "link":
        return {"chip": skill.chip, "variant": "link", "scenario": rng.randrange(len(p["scenarios"]))}
    params = {"chip": skill.chip, "variant": skill.variant, "dtype": rng.choice(p["dtypes"]),
              "shape": [rng.choice(p["rows"]), rng.choice(p["cols"])]}
    if skill.variant == "ici":
        n = rng.choice(p["axis_sizes"])
        src, dst = rng.sample(range(n), 2)
        params.update(axis=n, src=src, dst=dst, wrap=rng.random() < 0.5)
    return params


def solve(spec: FamilySpec, cat: Catalogue, skill, params: dict[str, Any]):
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
    nbytes = rows * cols * DTYPE_BYTES[dtype]
    bw = chip.figure(FIGURE[variant])
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
        steps += [f"hops on an axis of {n} " + (f"with wraparound: min(|{a}-{b}|, {n}-|{a}-{b}|) = {h}" if wrap
                                                 else f"without wraparound: |{a}-{b}| = {h}"),
                  f"latency = {h} hop{'s' if h != 1 else ''} × {seconds(latency)} per hop {cite(lat)} = {seconds(h * latency)}",
                  f"T = bytes / bandwidth + latency = {seconds(t)} + {seconds(h * latency)} = {seconds(total)}"]
        t = total
        fields.update(n=str(n), src=str(a), dst=str(b), hop_latency=seconds(latency),
                      wrap="with wraparound links (a ring)" if wrap else "without wraparound links (a line)")
        key += f"-n{n}-{a}to{b}-{'wrap' if wrap else 'nowrap'}"
    else:
        steps.append(f"T = bytes / bandwidth = {sci(nbytes)} / {sci(bw_value)} = {seconds(t)}")
    return problem(spec, skill, key, spec.prompts[variant].format(**fields), Answer(value=t, unit="s"), steps,
                   dict(params), spec.hints[variant].format(**fields), (f"dtype::{dtype}",))
