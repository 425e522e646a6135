"""How a learner types a right answer: spellings of generated problems' keys, for the grammar's tests.

``right_spellings(variant)`` gives the ways a learner writes the right answer to one card variant
(``generator.export.variants.Variant``): for a choice, its name in several cases, with "bound",
an alias (with "bound": "BW-bound"), a TPU as "TPU v6e" or "the v6e", a shape's other forms and a
sentence's full stop; for a number, the key in the card's unit as a bare number, with the unit, in
parentheses, as a working (``x*1``, ``2*x/2``), with a full stop, after "~" or "≈" (about), and in the
answer's base unit with that unit. Every spelling reads as the key (to 6 significant
digits), so every one must be graded right.

``bare_base_spellings(variant)`` gives the key in the answer's base unit typed with no unit, as a
number and as a working, where the card's unit is another one (``698 µs`` typed as ``6.98e-4``): no
reading of these may be graded; each must be "needs-unit".
"""

from __future__ import annotations

from generator.model import answers
from generator.model import catalogue
from generator.export.variants import Variant

# TPU chips, which learners name "TPU v6e" or "the v6e" in a chip choice.
_TPUS = {c.name for c in catalogue.load().chips if c.kind == "tpu"}
# Choices a verdict is ("compute-bound", "comms bound"): they take "bound" after them.
_VERDICTS = {"compute", "memory", "comms", "bandwidth", "latency"}
STOPS = (".", "!", " .", "?")


def _choice_spellings(key: str, choices: tuple[str, ...]) -> list[str]:
    names = [key, key.lower(), key.upper(), key[:1].upper() + key[1:].lower()]
    if key.lower() in _VERDICTS:
        names += [f"{n}{b}" for n in names[:4] for b in ("-bound", " bound", "-Bound")]
    aliases = [a for a, full in answers.card_reader()["aliases"].items()
               if isinstance(full, str) and full == key.lower() and a.lower() not in {c.lower() for c in choices}]
    names += aliases
    if key.lower() in _VERDICTS:  # "bandwidth-bound", "memory-bandwidth-bound", "BW-bound", "HBM-bound"
        names += [f"{a}-bound" for a in aliases] + [f"{a.upper()}-bound" for a in aliases if len(a) <= 4]
    if key in _TPUS:  # a chip as people name it: "TPU v6e", "the v6e", "The TPU v6e"
        names += [f"TPU {key}", f"the {key}", f"The TPU {key}", f"tpu  {key}"]
    if "x" in key and key.replace("x", "").isdigit():
        rows, cols = key.split("x")
        names += [f"{rows} x {cols}", f"({rows}, {cols})", f"{rows}*{cols}", f"{rows} by {cols}"]
    names = list(dict.fromkeys(names))
    return names + [n + s for n in names for s in STOPS]


def _g(x: float) -> str:
    return f"{x:.6g}"


def right_spellings(v: Variant) -> list[str]:
    """The right answer to ``v`` as a learner types it (see the module docstring)."""
    a = v.problem.answer
    if a.is_choice:
        return _choice_spellings(str(a.choice), tuple(a.choices))
    n = a.number * v.base_scale / v.unit_scale  # the key in the card's unit
    u = v.unit
    out = [repr(n), _g(n), f"({_g(n)})", f"{_g(n)}*1", f"1*{_g(n)}", f"2*{_g(n / 2)}", f"{_g(n * 2)}/2",
           f"{_g(n)}.", f"(({_g(n)}))", f"+{_g(n)}", f"~{_g(n)}", f"≈ {_g(n)}", f"2*~{_g(n / 2)}"]
    if u:
        out += [f"{_g(n)} {u}", f"{_g(n)}{u}", f"{_g(n)} {u}.", f"({_g(n)}) {u}", f"({_g(n)} {u})",
                f"~{_g(n)} {u}", f"≈{_g(n)} {u}", f"~ {_g(n)}{u}",
                f"{_g(n)}*1 {u}", f"2*{_g(n / 2)} {u}", f"({_g(n * 2)}/2) {u}"]
    if a.unit:
        base = a.number * v.base_scale
        out += [f"{_g(base)} {a.unit}", f"({_g(base)}) {a.unit}"]
    return list(dict.fromkeys(out))


def bare_base_spellings(v: Variant) -> list[str]:
    """The key in the base unit with no unit, where the card's unit differs (see the module docstring)."""
    a = v.problem.answer
    if a.is_choice or not a.unit or v.unit_scale == v.base_scale:
        return []
    base = a.number * v.base_scale
    ratio = v.unit_scale / v.base_scale
    if abs(ratio - 1) <= 10 * v.good_rel:  # a card unit this close to the base unit reads the same value
        return []
    return [_g(base), repr(base), f"({_g(base)})", f"2*{_g(base / 2)}", f"{_g(base * 4)}/4"]
