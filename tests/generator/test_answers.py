"""Answer parsing: units, arithmetic, choices, limits, and a fuzz test that it never escapes."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import answers
from generator.model.answers import (
    AnswerError,
    NeedsUnitError,
    WrongDimensionError,
    parse_choice,
    parse_duration_seconds,
    parse_number,
    parse_quantity,
)
from tests.conftest import finishes

T_87 = 2 * 2048**3 / 1.97e14  # the course page's floor latency: 87.2 µs


@pytest.mark.parametrize("text, seconds", [
    ("87.2us", 87.2e-6),
    ("87.2 µs", 87.2e-6),   # micro sign U+00B5
    ("87.2 μs", 87.2e-6),   # Greek mu U+03BC
    ("0.0872 ms", 87.2e-6),
    ("8.72e-5 s", 87.2e-6),
    ("8.72E-5", 87.2e-6),
    ("87200 ns", 87.2e-6),
    ("2*2048**3/1.97e14", T_87),
    ("2*2048^3/1.97e14", T_87),
    ("2 * 2048 ** 3 / 1.97e14", T_87),
    ("(2*2048**3)/(1.97e14)", T_87),
    ("(2*2048**3/1.97e14) s", T_87),
    ("2*2048**3/1.97e14 s", T_87),          # a trailing unit on a unit-less working
    ("2*2048**3/1.97e14 us", T_87 * 1e-6),
    ("2*2048**3 FLOP / 197 TFLOP/s", T_87),  # dimensional arithmetic
    ("2*2048**3/197T", T_87),               # a bare prefix scales the number before it
    ("1 GB / 1.6 TB/s", 1e9 / 1.6e12),
    ("1 ms + 20 us", 1.02e-3),
    ("-(-3 s)", 3.0),
    (".5", 0.5),
    ("2×3 ÷ 4", 1.5),
    ("1 sec", 1.0),
])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration_seconds(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("text, unit, value", [
    ("682.7", "FLOP/byte", 682.7),
    ("1.97e14", "FLOP/s", 1.97e14),
    ("197 TFLOP/s", "FLOP/s", 1.97e14),
    ("197 TFLOPS", "FLOP/s", 1.97e14),
    ("1.6 TB/s", "B/s", 1.6e12),
    ("820 GB/s", "B/s", 8.2e11),
    ("16 GiB", "B", 16 * 2**30),
    ("16 GB", "B", 16e9),
    ("128 MiB", "B", 128 * 2**20),
    ("240 FLOPs/byte", "FLOP/byte", 240.0),
    ("240 FLOP/B", "FLOP/byte", 240.0),
    ("2.4k", "", 2400.0),
    ("2.4K", "", 2400.0),
    ("3M", "", 3e6),
    ("1.7e10 FLOP", "FLOP", 1.7e10),
    ("17 GFLOP", "FLOP", 1.7e10),
    ("2**10", "", 1024.0),
    ("2**3**2", "", 512.0),   # right-associative
    ("-2**2", "", -4.0),      # power binds tighter than the sign
    ("2**-1", "", 0.5),
    ("(2 GiB)**2 / (1 GiB)", "B", 4 * 2**30),
    ("1 + 2 * 3", "", 7.0),
    ("(1 + 2) * 3", "", 9.0),
    ("10 - 4 - 3", "", 3.0),  # left-associative
    ("12 / 3 / 2", "", 2.0),
])
def test_numbers_in_units(text: str, unit: str, value: float) -> None:
    # A bare number is read in the unit the question names (the third argument).
    assert parse_number(text, unit, unit) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, unit, value", [
    ("12 microseconds", "s", 12e-6), ("12 US", "s", 12e-6), ("1,200 us", "s", 1.2e-3), ("12 µs.", "s", 12e-6),
    ("1.2e3us", "s", 1.2e-3), ("12 usec", "s", 12e-6), ("12 µsec", "s", 12e-6), ("3 TB/s", "B/s", 3e12),
    ("3 TBps", "B/s", 3e12), ("12 Milliseconds", "s", 12e-3), ("40 NS", "s", 40e-9),
    ("12,345,678 B", "B", 12345678.0),
])
def test_what_people_type_is_accepted(text: str, unit: str, value: float) -> None:
    assert parse_number(text, unit) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, unit", [("11.8", "s"), ("2*2048**3/1.97e14", "s"), ("1.6e12", "B/s"),
                                        ("682.7", "FLOP/byte")])
def test_a_bare_number_needs_a_unit_unless_the_question_names_one(text: str, unit: str) -> None:
    with pytest.raises(NeedsUnitError) as info:
        parse_number(text, unit)
    assert "add a unit" in str(info.value) and text in str(info.value)
    assert parse_number("11.8", "s", "us") == pytest.approx(11.8e-6)
    assert parse_number("7", "", None) == 7.0  # a plain count needs no unit


@pytest.mark.parametrize("text, expected_unit, fragment", [
    ("16 GiB", "s", "expected a time"),
    ("1.6 TB/s", "FLOP/s", "expected a compute rate"),
    ("87 us", "B", "expected a size in bytes"),
    ("240 FLOPs/byte", "", "expected a plain number"),
    ("2 FLOP", "FLOP/byte", "expected an intensity"),
])
def test_wrong_dimension_names_the_expected_one(text: str, expected_unit: str, fragment: str) -> None:
    with pytest.raises(WrongDimensionError) as info:
        parse_number(text, expected_unit)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, fragment", [
    ("9**9**9", "too large"),
    ("10**400", "too large"),
    ("1e999", "too large"),
    ("1/0", "division by zero"),
    ("0**-1", "no real value"),
    ("(-8)**0.5", "no real value"),
    ("", "empty"),
    ("   ", "empty"),
    ("((1)", "missing ')'"),
    ("(" * 40 + "1" + ")" * 40, "nested"),
    ("-" * 40 + "1", "nested"),
    ("1" * 201, "too long"),
    ("2 s s", "two units"),
    ("s", "no number before it"),
    ("1.6 TB / s", "no number before it"),
    ("3 Ms", "megaseconds"),      # almost certainly a typo for ms: refused with the reason
    ("3 MS", "ambiguous"),
    ("5 mB", "unknown unit"),     # milli-bytes
    ("4 Gb", "bits"),             # bits are not accepted, and the reason is given
    ("3 Gbps", "bits"),
    ("1,00", "decimal comma"),
    ("1,5 us", "decimal comma"),
    ("2 3", "unexpected number"),
    ("1 ms + 3", "can not add"),
    ("2**(1 s)", "plain number"),
    ("(1 s)**0.5", "whole power"),
    ("__import__('os')", "unexpected"),
])
def test_refused_with_one_line(text: str, fragment: str) -> None:
    with pytest.raises(AnswerError) as info:
        parse_duration_seconds(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_huge_power_is_refused_at_once() -> None:
    with pytest.raises(AnswerError):
        finishes(lambda: parse_quantity("9**9**9**9**9"))  # big-integer arithmetic would not finish


@pytest.mark.parametrize("text,seconds", [("5 ps", 5e-12), ("5 psec", 5e-12), ("5 picoseconds", 5e-12),
                                          ("5 ns", 5e-9), ("5 nanoseconds", 5e-9)])
def test_picoseconds_are_a_thousandth_of_a_nanosecond(text: str, seconds: float) -> None:
    assert parse_duration_seconds(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("text,value,dims", [("2 kilobytes", 2e3, (0, 1, 0)), ("2 kiloflops", 2e3, (0, 0, 1)),
                                             ("3 megabytes", 3e6, (0, 1, 0)), ("1 kibibyte", 1024.0, (0, 1, 0))])
def test_spelled_prefixes_from_kilo_up_are_read(text: str, value: float, dims: tuple) -> None:
    q = parse_quantity(text)
    assert q.value == pytest.approx(value, rel=1e-12) and q.dims == dims and q.has_unit


@pytest.mark.parametrize("factor,base_first", [(1.0, True), (10.0, True), (0.1, True), (20.0, False),
                                               (0.05, False), (100.0, False), (0.01, False)])
def test_a_bare_number_within_ten_times_the_key_is_offered_the_base_unit_first(factor: float,
                                                                               base_first: bool) -> None:
    key = 5.1e16
    text = repr(key * factor)
    with pytest.raises(NeedsUnitError) as info:
        parse_number(text, "FLOP/s", key=key)
    first = str(info.value).split("e.g. ", 1)[1]
    assert first.startswith(f"{text} FLOP/s") == base_first, str(info.value)


def test_quantity_reports_dims_and_whether_a_unit_was_typed() -> None:
    q = parse_quantity("1.6 TB/s")
    assert q.dims == (-1, 1, 0) and q.has_unit and q.value == pytest.approx(1.6e12)
    bare = parse_quantity("3*4")
    assert bare.dims == answers.DIMENSIONLESS and not bare.has_unit and bare.value == 12


@pytest.mark.parametrize("text, choice", [
    ("compute", "compute"), ("c", "compute"), ("C", "compute"), ("Compute-bound", "compute"),
    ("compute bound", "compute"), ("memory", "memory"), ("m", "memory"), ("mem", "memory"),
    ("  MEMORY  ", "memory"),
])
def test_verdict_choices(text: str, choice: str) -> None:
    assert parse_choice(text, ("compute", "memory")) == choice


def test_yes_no_and_family_choices() -> None:
    assert parse_choice("y", ("yes", "no")) == "yes"
    assert parse_choice("n", ("yes", "no")) == "no"
    assert parse_choice("ICI", ("ICI", "DCN")) == "ICI"
    assert parse_choice("dc", ("ICI", "DCN")) == "DCN"
    with pytest.raises(AnswerError, match="could be"):
        parse_choice("v", ("vmem", "vpu"))
    with pytest.raises(AnswerError, match="answer one of: compute, memory"):
        parse_choice("fast", ("compute", "memory"))


# -- properties ------------------------------------------------------------------------------

finite = st.floats(min_value=1e-12, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(finite, st.sampled_from([("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9)]))
def test_time_units_scale(value: float, unit: tuple[str, float]) -> None:
    name, scale = unit
    assert parse_duration_seconds(f"{value!r} {name}") == pytest.approx(value * scale, rel=1e-12)
    assert parse_duration_seconds(f"{value!r}{name}") == pytest.approx(value * scale, rel=1e-12)


@given(finite)
def test_repr_round_trips(value: float) -> None:
    assert parse_number(repr(value), "") == value


def _expressions(depth: int) -> st.SearchStrategy[tuple[str, float | None]]:
    """Random arithmetic trees rendered as text, with the value computed directly on floats."""
    leaf = st.integers(min_value=1, max_value=999).map(lambda n: (str(n), float(n)))
    if depth == 0:
        return leaf

    def combine(parts: tuple[tuple[str, float | None], str, tuple[str, float | None]]) -> tuple[str, float | None]:
        (left, a), op, (right, b) = parts
        if a is None or b is None or (op == "/" and b == 0):
            return f"({left} {op} {right})", None  # a division by zero somewhere inside
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[op]
        return f"({left} {op} {right})", value

    sub = _expressions(depth - 1)
    return st.one_of(leaf, st.tuples(sub, st.sampled_from("+-*/"), sub).map(combine))


@given(_expressions(3))
def test_arithmetic_matches_float_arithmetic(case: tuple[str, float | None]) -> None:
    text, value = case
    if len(text) > answers.MAX_INPUT_CHARS:
        return
    if value is None:
        with pytest.raises(AnswerError, match="division by zero"):
            parse_number(text, "")
    else:
        assert parse_number(text, "") == pytest.approx(value, rel=1e-9, abs=1e-12)


ALPHABET = list("0123456789.eE+-*/^()  ,_'\"") + ["**", "us", "µs", "ms", "s", "GiB", "TB/s", "FLOP", "k", "T",
                                                 "9**9", "1e308", "(", ")"]


def _check_parser_contains_itself(text: str) -> None:
    try:
        value = parse_duration_seconds(text)
    except AnswerError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(value, float) and math.isfinite(value)


@settings(max_examples=400)
@given(st.text(max_size=300))
def test_fuzz_arbitrary_text(text: str) -> None:
    _check_parser_contains_itself(text)


@settings(max_examples=400)
@given(st.lists(st.sampled_from(ALPHABET), max_size=80).map("".join))
def test_fuzz_answer_like_text(text: str) -> None:
    _check_parser_contains_itself(text)


@settings(max_examples=200)
@given(st.text(max_size=300), st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=4, unique=True))
def test_fuzz_choices(text: str, choices: list[str]) -> None:
    try:
        picked = parse_choice(text, tuple(choices))
    except AnswerError as exc:
        assert str(exc)
    else:
        assert picked in choices


# --- what people type ----------------------------------------------------------------

@pytest.mark.parametrize("text, unit, value", [
    ("3 terabytes", "B", 3e12), ("2 petabytes", "B", 2e15), ("2 gibibytes", "B", 2 * 2**30),
    ("5 petaflops", "FLOP/s", 5e15), ("4 exaflops", "FLOP/s", 4e18), ("197 GFLOP/s", "FLOP/s", 1.97e11),
    ("197 TFLOPs", "FLOP/s", 1.97e14),  # TFLOPs meant as a rate where the answer is a rate
    ("197 TFLOPs", "FLOP", 1.97e14),  # and as a count where it is a count
    ("682.7 FLOPs per byte", "FLOP/byte", 682.7), ("682.7 flops/byte", "FLOP/byte", 682.7),
    ("682.7 flops per byte", "FLOP/byte", 682.7), ("1e9 bytes per second", "B/s", 1e9),
    ("256 chips", "", 256), ("32 hosts", "", 32), ("4096 tokens", "", 4096), ("17920 TensorCores", "", 17920),
])
def test_people_spellings(text, unit, value):
    assert parse_number(text, unit) == pytest.approx(value)


def test_a_flop_count_is_not_read_as_a_rate():
    with pytest.raises(WrongDimensionError, match="that is a FLOP count; this answer is a rate"):
        parse_number("3.4e10 FLOP", "FLOP/s")


@pytest.mark.parametrize("text, unit, wanted, unwanted", [
    ("2.69", "s", "e.g. 2.69 us, 2.69 ms or 2.69 s", None),
    ("4.096 T", "B", "e.g. 4.096 TB", "GiB"),
    ("16", "B", "16 GB", " us"),
    ("240", "FLOP/byte", "240 FLOPs/byte", " us"),
    ("197", "FLOP/s", "197 TFLOP/s", " us"),
])
def test_add_a_unit_suggests_the_expected_dimension(text, unit, wanted, unwanted):
    with pytest.raises(NeedsUnitError) as exc:
        parse_number(text, unit)
    assert wanted in str(exc.value) and (unwanted is None or unwanted not in str(exc.value))


@pytest.mark.parametrize("text, unit, words", [
    ("1.6 TB/s", "s", "that is a rate (bytes/s); this answer is a time"),
    ("197 TFLOP/s", "s", "that is a rate (FLOP/s); this answer is a time"),
    ("123 us/s", "s", "units cancel"),
])
def test_wrong_dimension_says_what_it_is(text, unit, words):
    with pytest.raises(WrongDimensionError, match=re.escape(words)):
        parse_number(text, unit)


@pytest.mark.parametrize("text, choices, want", [
    ("memory bound", ("compute", "memory"), "memory"), ("HBM-bound", ("compute", "memory"), "memory"),
    ("comms-bound", ("compute", "comms"), "comms"), ("communication bound", ("compute", "comms"), "comms"),
    ("48 x 512", ("48x512", "64x512"), "48x512"), ("(112, 512)", ("112x512", "128x512"), "112x512"),
    ("48×512", ("48x512", "64x512"), "48x512"), ("48*512", ("48x512", "64x512"), "48x512"),
])
def test_choices_people_type(text, choices, want):
    assert parse_choice(text, choices) == want


def test_an_unreadable_answer_never_lists_unshown_choices():
    with pytest.raises(AnswerError) as exc:
        parse_choice("sixteen", ("12x128", "16x128", "16x256"), shown=False)
    assert "12x128" not in str(exc.value) and "16x" not in str(exc.value)
    with pytest.raises(AnswerError) as exc:
        parse_choice("1", ("12x128", "16x128"), shown=False)  # a prefix of two choices: not listed either
    assert "12x128" not in str(exc.value)


@pytest.mark.parametrize("text, choices, want", [
    ("Memory-bound.", ("compute", "memory"), "memory"), ("Compute-bound.", ("compute", "memory"), "compute"),
    ("compute-bound!", ("compute", "memory"), "compute"), ("memory bound .", ("compute", "memory"), "memory"),
    ("Compute–bound", ("compute", "memory"), "compute"), ("HBM-bound.", ("compute", "memory"), "memory"),
    ("Comms-bound?", ("compute", "comms"), "comms"), ("Yes.", ("yes", "no"), "yes"), ("no!", ("yes", "no"), "no"),
    ("Y.", ("yes", "no"), "yes"), ("VMEM.", ("HBM", "VMEM", "SMEM"), "VMEM"), ("(48, 512).", ("48x512", "64x512"), "48x512"),
    ("48 x 512.", ("48x512", "64x512"), "48x512"), ("Latency-bound.", ("bandwidth", "latency"), "latency"),
])
def test_a_sentence_s_end_after_a_choice_is_read(text, choices, want):
    assert parse_choice(text, choices) == want


@pytest.mark.parametrize("text", [".", "!?", " . "])
def test_a_choice_of_punctuation_alone_is_empty(text):
    with pytest.raises(AnswerError, match="empty answer"):
        parse_choice(text, ("compute", "memory"))


@pytest.mark.parametrize("text, value", [
    ("172.4.", 172.4), ("172.", 172.0), ("(172.4).", 172.4), ("234.2*1.", 234.2), ("12 us.", 12e-6 / 1e-6),
    ("1e3.", 1e3), ("(2*3) .", 6.0),
])
def test_a_full_stop_after_a_number_or_a_working_is_read(text, value):
    assert parse_number(text, "s", "us") * 1e6 == pytest.approx(value, rel=1e-12)


def test_a_bare_number_right_only_in_the_base_unit_asks_for_its_unit():
    """Read in the stated unit it is wrong; read in the answer's base unit it is right: not graded, and
    the message says the unit it was read in, both values and what to type."""
    key = 2 * 4096 * 2048 * 8192 / 197e12  # 698 µs

    def right(value: float) -> bool:
        return abs(value - key) <= 0.01 * key

    with pytest.raises(NeedsUnitError) as exc:
        parse_number("2*4096*2048*8192/197e12", "s", "µs", key, right)
    said = str(exc.value)
    assert "read in µs, which is 698 ps" in said and "in s it is 698 µs" in said, said
    assert "(2*4096*2048*8192/197e12) s" in said, said
    with pytest.raises(NeedsUnitError, match=r"write 0\.000698 s"):
        parse_number("0.000698", "s", "us", key, right)
    assert parse_number("698", "s", "us", key, right) == pytest.approx(698e-6)  # right as stated: read
    assert parse_number("0.5", "s", "us", key, right) == pytest.approx(0.5e-6)  # wrong both ways: graded
    assert parse_number("0.000698", "s", "us", key) == pytest.approx(698e-12)  # no grader given: read as before
    assert parse_number("0.000698 s", "s", "us", key, right) == pytest.approx(698e-6)  # a unit typed


@given(st.floats(min_value=1e-12, max_value=9.99e5, allow_nan=False, allow_infinity=False))
def test_every_time_the_tool_shows_reads_back(seconds_value):
    """``units.fmt`` is how every screen shows a time ("87.2 µs", "2.31 ks"): the grammar reads each one
    back to within its 3 significant digits."""
    from generator.model.units import fmt

    shown = fmt(seconds_value, "s")
    assert answers.parse_duration_seconds(shown) == pytest.approx(seconds_value, rel=6e-3), shown
