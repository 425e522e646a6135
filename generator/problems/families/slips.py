"""Wrong methods several families share: each is the family's own model re-evaluated on one tweaked input.

A family's ``wrong_answers`` hook calls these for the slips that are not its own: the sparse or
another dtype's peak, the GB/GiB mix-ups, a unit slip of 1000, the easily swapped neighbour term.
Each gives a ``misconceptions.WrongAnswer`` with the one step that differs from the key.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from generator.problems import misconceptions
from generator.model.catalogue import Catalogue, Chip
from generator.problems.misconceptions import CONFUSABLE, WrongAnswer
from generator.problems.problem import Problem
from generator.model.units import GIB_PER_GB
from generator.model.units import sci as _sci
from generator.model.units import si as _si

# Every draw prices its named mistakes (fair draws, the solution's notes), and their steps repeat the
# same few constants: the one formatter, memoised here (pure functions of their arguments).
sci = functools.lru_cache(maxsize=8192)(_sci)
si = functools.lru_cache(maxsize=8192)(_si)

SPARSE_FACTOR = 2  # a 2:4-sparse datasheet peak is twice the dense one


def wrong(mid: str, value: float | str, step: str) -> WrongAnswer:
    """The wrong answer of catalogue entry ``mid``."""
    return WrongAnswer(misconceptions.find(mid), value, step)


def other_peaks(chip: Chip, dtype: str) -> Iterator[tuple[str, float]]:
    """(dtype, peak FLOP/s) of each other dtype whose published peak differs from ``dtype``'s."""
    mine = float(chip.peak_flops[dtype].value)
    for other, fig in chip.peak_flops.items():
        if other != dtype and float(fig.value) != mine:
            yield other, float(fig.value)


def sparse_step(chip: Chip, peak: float) -> str:
    """The step of the sparse-peak slip: a GPU's 2:4-sparse figure, or a TPU's peak doubled."""
    why = "sparse" if chip.kind == "gpu" else f"doubled: the {chip.display} publishes no sparse figure"
    return f"peak = {sci(SPARSE_FACTOR * peak)} FLOP/s ({why}) instead of {sci(peak)} (dense)"


def gib_slips(answer_with: Callable[[float], float | str], bytes_per_s: float) -> Iterator[WrongAnswer]:
    """The GB/GiB mix-ups, as the model's answer with the bandwidth (bytes/s) mis-converted either way."""
    for w, how in ((bytes_per_s / GIB_PER_GB, "bytes in GiB over a bandwidth in GB/s: the bandwidth ÷1.0737"),
                   (bytes_per_s * GIB_PER_GB, "a bandwidth in GB/s taken as GiB/s: the bandwidth x1.0737")):
        yield wrong("gb-gib", answer_with(w), how)


PREFIXED_UNITS = ("s", "B")  # answers a learner writes with an SI prefix (µs, ms; MB, GB): one step is 1000x


def unit_slips(problem: Problem) -> Iterator[WrongAnswer]:
    """The key read with its SI prefix one step off (a slip in writing the answer, not in the model)."""
    key = problem.answer.number
    unit = problem.answer.unit
    for factor, how in ((1e3, "1000x too large"), (1e-3, "1000x too small")):
        yield wrong("unit-slip-1000", key * factor, f"{si(key * factor, unit) if unit else f'{key * factor:g}'}: {how}")


BITS_PER_BYTE = 8


def bits_slips(answer_with: Callable[[float], float | str], bytes_per_s: float, label: str) -> Iterator[WrongAnswer]:
    """Bits taken for bytes on a link: the model's answer with the link rate (bytes/s) 8x off either way."""
    for w, how in ((bytes_per_s / BITS_PER_BYTE, f"{label} rate divided by 8 (bytes taken for bits)"),
                   (bytes_per_s * BITS_PER_BYTE, f"{label} rate times 8 (a rate in bits read as bytes)")):
        yield wrong("bits-for-bytes", answer_with(w), f"{how}: {sci(w)} B/s instead of {sci(bytes_per_s)}")


def stated_figure_slips(problem: Problem, cat: Catalogue, chip: Chip, key: str, label: str,
                        answer_with: Callable[[float], float]) -> Iterator[WrongAnswer]:
    """The answer worked with a figure of ``key`` other than the chip's that the prompt states: another
    chip's (the generic rate where this chip's differs) or another edition's that is not accepted (one
    ``problem.also_right`` does not list)."""
    mine = float(chip.value(key))
    others: dict[float, list[str]] = {}
    for c in cat.chips:
        fig = c.figure(key)
        if fig is not None and float(fig.value) != mine:
            others.setdefault(float(fig.value), []).append(c.display)
    for value, alt in chip.other_figures(key):
        others.setdefault(value, []).append(f"another edition of the book, per {alt.per}")
        if alt.per == "host":  # that edition's per-host figure taken as the per-chip one
            others.setdefault(float(alt.value), []).append("another edition's per-host figure, taken per chip")
    accepted = [float(a["value"]) for a in problem.also_right]
    for value, whose in others.items():
        answer = answer_with(value)
        if any(abs(answer - a) <= problem.tolerance * abs(a) for a in accepted):
            continue  # another edition's answer, graded right with its note
        yield wrong("not-the-stated-figure", answer,
                    f"{label} at {sci(value)} B/s ({', '.join(whose)}) instead of the {chip.display}'s "
                    f"{sci(mine)} B/s that the prompt gives")


def term_confusions(problem: Problem) -> Iterator[WrongAnswer]:
    """The choices that are the key's easily swapped neighbour (``misconceptions.CONFUSABLE``)."""
    key = problem.answer.choice
    for other in problem.answer.choices:
        if frozenset((other, key)) in CONFUSABLE:
            yield wrong("term-confusion", other, f"{other} instead of {key}")
