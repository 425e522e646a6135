"""Answer parsing: what the learner typed -> a number in base SI units, or a choice.

The answer grammar: a tokenizer and a recursive-descent parser for numbers, units and arithmetic,
parsed, never evaluated (``parse_number``, ``parse_choice``). Bad input raises ``AnswerError``,
one line for the learner.
Details: docs/internals.md.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Callable

from generator.model.units import fmt

from generator.errors import DrillError

MAX_INPUT_CHARS = 200
MAX_NESTING = 30
MAX_EXPONENT = 100.0

# Dimensions are exponent triples over the base units (seconds, bytes, FLOPs).
Dims = tuple[int, int, int]
DIMENSIONLESS: Dims = (0, 0, 0)

_BASE_WORDS: dict[str, Dims] = {
    "s": (1, 0, 0), "sec": (1, 0, 0), "secs": (1, 0, 0), "second": (1, 0, 0), "seconds": (1, 0, 0),
    "Bps": (-1, 1, 0),  # bytes per second: "3 TBps"
    "B": (0, 1, 0), "byte": (0, 1, 0), "bytes": (0, 1, 0),
    "FLOP": (0, 0, 1), "FLOPs": (0, 0, 1), "flop": (0, 0, 1), "flops": (0, 0, 1),
    # All-capitals FLOPS is the datasheet's "per second" (197 TFLOPS).
    "FLOPS": (-1, 0, 1),
}
_LARGE_PREFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
# Spelled-out prefixes, matched case-insensitively: "terabytes", "Petaflops", "exaflops", "gibibytes".
_SPELLED_PREFIXES = {"kilo": 1e3, "mega": 1e6, "giga": 1e9, "tera": 1e12, "peta": 1e15, "exa": 1e18,
                     "kibi": 2.0**10, "mebi": 2.0**20, "gibi": 2.0**30, "tebi": 2.0**40, "pebi": 2.0**50}
_SPELLED_BASES: dict[str, Dims] = {"byte": (0, 1, 0), "bytes": (0, 1, 0), "flop": (0, 0, 1), "flops": (0, 0, 1)}
# Counts a learner may name: "256 chips", "32 hosts", "4096 tokens" (a plain number).
_COUNT_WORDS = {"chip", "chips", "host", "hosts", "token", "tokens", "core", "cores", "tensorcore", "tensorcores",
                "hop", "hops", "element", "elements", "row", "rows", "sequence", "sequences", "batch"}
# FLOP words without "/s": "197 TFLOPs" is read as a rate where the answer is a rate.
_FLOP_WORDS = re.compile(r"^(?:[kKMGTPE]|kilo|mega|giga|tera|peta|exa)?flops$", re.I)
_BINARY_PREFIXES = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
_SMALL_PREFIXES = {"m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12}
# A bare prefix scales a plain count: "2.4k" is 2400.
_COUNT_PREFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

# dims -> (what it is, an example answer)
_DIMENSION_NAMES: dict[Dims, tuple[str, str]] = {
    (1, 0, 0): ("a time", "87.2 us"),
    (0, 1, 0): ("a size in bytes", "16 GiB"),
    (0, 0, 1): ("a FLOP count", "3.4e10 FLOP"),
    (0, -1, 1): ("an intensity in FLOPs per byte", "240 FLOPs/byte"),
    (-1, 0, 1): ("a compute rate", "197 TFLOP/s"),
    (-1, 1, 0): ("a bandwidth", "1.6 TB/s"),
    DIMENSIONLESS: ("a plain number", "2.4k"),
}

# Spelled-out times and their abbreviations, matched case-insensitively ("12 Microseconds", "12 USEC").
_TIME_WORDS: dict[str, float] = {}
# "ks": ``units.fmt`` shows a time of 1000 s or more with the kilo prefix ("2.31 ks"), so it reads back.
for _scale, _names in ((1e3, ("ks",)), (1.0, ("s", "sec", "secs", "second", "seconds")),
                       (1e-3, ("ms", "msec", "msecs", "millisecond", "milliseconds")),
                       (1e-6, ("us", "µs", "μs", "usec", "usecs", "µsec", "μsec", "microsecond", "microseconds")),
                       (1e-9, ("ns", "nsec", "nsecs", "nanosecond", "nanoseconds")),
                       (1e-12, ("ps", "psec", "picosecond", "picoseconds"))):
    for _name in _names:
        _TIME_WORDS[_name] = _scale

_CHOICE_ALIASES = {"c": "compute", "m": "memory", "y": "yes", "n": "no",
                   # what people call the memory side of a verdict ("HBM-bound", "bandwidth bound" ...)
                   "hbm": "memory", "mem": "memory", "memory bandwidth": "memory", "memory-bandwidth": "memory",
                   "bandwidth": "memory", "bw": "memory", "pcie": "memory", "dcn": "memory",
                   "io": "memory", "flops": "compute", "math": "compute", "mxu": "compute",
                   # the communication side ("comms-bound", "communication-bound", "ICI-bound")
                   "communication": "comms", "comm": "comms", "network": "comms", "ici": "comms",
                   "collective": "comms"}
# Words before a chip's name that name no other choice ("TPU v6e", "the v6e"): dropped before a choice is read.
CHOICE_LEAD = r"^(?:(?:the|tpu) )+(?=\S)"
# "About": a "~" or "≈" just before a number ("~34.7 us", "≈ 87 µs"), dropped before the answer is read.
APPROX = r"[~≈]\s*(?=[0-9.])"
# A 2-D answer typed as "48 x 512", "48*512", "48×512" or the prompt's own "(112, 512)".
_PAIR = re.compile(r"^\(?\s*([0-9]+)\s*(?:x|\*|,|by)\s*([0-9]+)\s*\)?$")

# 1,200 or 12,345,678.5: groups of three digits after the first comma.
_THOUSANDS = re.compile(r"(?<![0-9.,])[0-9]{1,3}(?:,[0-9]{3})+(?![0-9,])")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[A-Za-zµμ]+")
_OPERATORS = ("**", "+", "-", "*", "/", "^", "(", ")")
_TRANSLATE = str.maketrans({"−": "-", "×": "*", "·": "*", "÷": "/"})
# A full stop ends a sentence after a letter, a digit or a ")": "12 µs.", "172.4.", "(2*3)." (a number's
# own point, "172.", reads the same with it or without).
_FULL_STOP_AFTER = re.compile(r"[A-Za-zµμ0-9)]")
# What ends a typed sentence after a choice ("Memory-bound.", "Yes!"): dropped before it is read.
CHOICE_STOPS = ".!?"
# Dashes a keyboard puts in "compute–bound": read as the hyphen.
_CHOICE_TRANSLATE = str.maketrans({"‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-"})


# A comma that is not a thousands separator: "87,2" is 87.2 to some and 872 to others, so it is not guessed.
DECIMAL_COMMA = ("a decimal comma is not read (87,2 could be 87.2 or a mistyped 872, and a grade is never "
                 "guessed): write a decimal point, 87.2")


class AnswerError(DrillError, ValueError):
    """An answer that can not be read; the message is one line for the learner."""


# dims -> units to suggest after a bare number (all of the expected dimension), and the base unit a bare
# prefix ("4.096 T") completes to.
_SUGGEST: dict[Dims, tuple[tuple[str, ...], str]] = {
    (1, 0, 0): (("us", "ms", "s"), "s"),
    (0, 1, 0): (("GB", "GiB", "TB"), "B"),
    (0, 0, 1): (("FLOP", "TFLOP"), "FLOP"),
    (0, -1, 1): (("FLOPs/byte",), "FLOPs/byte"),
    (-1, 0, 1): (("TFLOP/s", "PFLOP/s"), "FLOP/s"),
    (-1, 1, 0): (("GB/s", "TB/s"), "B/s"),
}
# What a readable answer of another dimension is, in a word.
_KIND_WORDS: dict[Dims, str] = {
    (1, 0, 0): "a time", (0, 1, 0): "a size in bytes", (0, 0, 1): "a FLOP count",
    (0, -1, 1): "an intensity", (-1, 0, 1): "a rate (FLOP/s)", (-1, 1, 0): "a rate (bytes/s)",
    DIMENSIONLESS: "a plain number (its units cancel)",
}


class NeedsUnitError(AnswerError):
    """A plain number where the answer has a unit and the question names none: ask again, do not grade.

    The example uses units of the expected dimension; a number ending in a bare prefix ("4.096 T")
    is completed with the dimension's base unit ("4.096 TB").

    Also a plain number read in the question's unit whose value is wrong there but right in the
    base unit (``6.98e-4`` where the question reads µs and the key is 698 µs): ``read_in`` is
    (the unit it was read in, the value so read, the value in the base unit, the base unit), and the
    message says both readings; it is not graded either way."""

    def __init__(self, text: str, expected: Dims, at_key_scale: bool = False,
                 read_in: tuple[str, float, float, str] | None = None):
        self.expected = expected
        shown = text.strip()
        if read_in is not None:
            stated, value, as_base, base = read_in
            working = shown if _NUMBER.fullmatch(shown.lstrip("+-")) else f"({shown})"
            super().__init__(f"add a unit: {shown} with no unit is read in {stated}, which is {fmt(value, base)}; "
                             f"in {base} it is {fmt(as_base, base)}. If you mean {base}, write {working} {base}")
            return
        units, base = _SUGGEST.get(expected, (("",), ""))
        if expected != (1, 0, 0) and re.search(r"[0-9.]\s*[kKMGTPE]$", shown):
            example = f"{shown}{base}"
        else:
            if at_key_scale and base:  # 5.1e16 where the key is 5.1e16 FLOP/s: the base unit first
                units = (base, *(u for u in units if u != base))
            examples = [f"{shown} {u}" for u in units]
            example = examples[0] if len(examples) == 1 else f"{', '.join(examples[:-1])} or {examples[-1]}"
        super().__init__(f"add a unit: {shown} what? e.g. {example}")


class WrongDimensionError(AnswerError):
    """A readable answer in the wrong dimension (bytes where a time is asked): ask again, do not grade."""

    def __init__(self, expected: Dims, given: Dims, tip: str = ""):
        self.expected, self.given = expected, given
        what = _KIND_WORDS.get(given, describe_dims(given, example=False))
        want = _KIND_WORDS.get(expected, describe_dims(expected, example=False))
        super().__init__(f"expected {describe_dims(expected)}; that is {what}; this answer is {want}{tip}")


@dataclass(frozen=True)
class Quantity:
    """A parsed number: ``value`` in base SI units with its dimensions; ``has_unit`` if any unit was typed."""

    value: float
    dims: Dims
    has_unit: bool


@dataclass(frozen=True)
class _Unit:
    scale: float
    dims: Dims
    text: str


def describe_dims(dims: Dims, example: bool = True) -> str:
    """A learner-facing name for a dimension: ``(1, 0, 0)`` -> ``a time (e.g. 87.2 us)``."""
    if dims not in _DIMENSION_NAMES:
        return f"in {_dims_text(dims)}"
    name, sample = _DIMENSION_NAMES[dims]
    return f"{name} (e.g. {sample})" if example else name


def _dims_text(dims: Dims) -> str:
    names = ("s", "B", "FLOP")
    top = [n if e == 1 else f"{n}^{e}" for n, e in zip(names, dims) if e > 0]
    bottom = [n if e == -1 else f"{n}^{-e}" for n, e in zip(names, dims) if e < 0]
    if not top and not bottom:
        return ""
    return ("*".join(top) or "1") + ("/" + "/".join(bottom) if bottom else "")


def _word_unit(word: str) -> _Unit | None:
    """One unit word with an optional prefix; prefixes only where they make sense.

    Small prefixes (m, u, µ, n, p) go on seconds only and large ones never do, so
    "Ms" is refused rather than read as megaseconds; binary prefixes go on bytes only.
    Time words are matched case-insensitively ("US", "Microseconds") except where
    case decides (``MS`` could be ms or Ms: refused by ``_refuse_ambiguous``).
    """
    if word in _BASE_WORDS:
        return _Unit(1.0, _BASE_WORDS[word], word)
    if word.lower() in _COUNT_WORDS:
        return _Unit(1.0, DIMENSIONLESS, word)
    lower = word.lower()
    for prefix, scale in _SPELLED_PREFIXES.items():
        if lower.startswith(prefix) and lower[len(prefix):] in _SPELLED_BASES:
            dims = _SPELLED_BASES[lower[len(prefix):]]
            if scale < 1e3 or (prefix.endswith("bi") and dims != (0, 1, 0)):
                return None
            return _Unit(scale, dims, word)
    if word.lower() in _TIME_WORDS and word not in _AMBIGUOUS:
        return _Unit(_TIME_WORDS[word.lower()], (1, 0, 0), word)
    for table in (_BINARY_PREFIXES, _LARGE_PREFIXES, _SMALL_PREFIXES):
        for prefix, scale in table.items():
            base = word[len(prefix):]
            if not word.startswith(prefix) or base not in _BASE_WORDS:
                continue
            dims = _BASE_WORDS[base]
            is_time = dims == (1, 0, 0)
            if table is _SMALL_PREFIXES and not is_time:
                continue
            if table is _LARGE_PREFIXES and is_time:
                continue
            if table is _BINARY_PREFIXES and dims != (0, 1, 0):
                continue
            return _Unit(scale, dims, word)
    return None


# Words whose meaning depends on a case the learner did not give; each with its reason.
_AMBIGUOUS = {"MS": "'MS' is ambiguous: ms (milliseconds) or Ms? write ms",
              "Ms": "'Ms' would be megaseconds; for milliseconds write ms"}


def _refuse_ambiguous(word: str) -> None:
    """One-line refusals for units that could mean two things (or bits where bytes are meant)."""
    if word in _AMBIGUOUS:
        raise AnswerError(_AMBIGUOUS[word])
    top = word.split("/")[0]
    if top.endswith("b") and _word_unit(top[:-1] + "B") is not None:
        raise AnswerError(f"'{word}': a lower-case b means bits; write {top[:-1]}B for bytes")
    if top.endswith("bps") and _word_unit(top[:-3] + "Bps") is not None:
        raise AnswerError(f"'{word}': a lower-case b means bits; write {top[:-3]}B/s for bytes per second")


def parse_unit(text: str) -> _Unit:
    """A unit like ``us``, ``GiB``, ``TFLOP/s``, ``FLOP/byte`` or ``""`` (a plain count).

    A unit is a function of its text and ``_Unit`` is frozen: each text is read once per process
    (a deck reads the same few units thousands of times); an unknown one raises each time."""
    return _parse_unit(text.strip())


@functools.lru_cache(maxsize=1024)
def _parse_unit(text: str) -> _Unit:
    if not text:
        return _Unit(1.0, DIMENSIONLESS, "")
    if text in _COUNT_PREFIXES:
        return _Unit(_COUNT_PREFIXES[text], DIMENSIONLESS, text)
    _refuse_ambiguous(text)
    top, _, bottom = text.partition("/")
    num = _word_unit(top)
    den = _word_unit(bottom) if bottom else _Unit(1.0, DIMENSIONLESS, "")
    if num is None or den is None:
        raise AnswerError(f"unknown unit '{text}'; try s, ms, us, ns, B, GiB, FLOP, TFLOP/s, TB/s, FLOPs/byte")
    return _Unit(num.scale / den.scale, _combine(num.dims, den.dims, -1), text)


# The tokens, one class a kind, so the parser reads a number, a unit or an operator typed as what it is.
@dataclass(frozen=True)
class _Num:
    value: float


@dataclass(frozen=True)
class _UnitToken:
    unit: _Unit


@dataclass(frozen=True)
class _Op:
    text: str  # one of _OPERATORS, with "^" written "**"


@dataclass(frozen=True)
class _End:
    pass


_Token = _Num | _UnitToken | _Op | _End


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        match = _NUMBER.match(text, i)
        if match:
            value = float(match.group())
            if not math.isfinite(value):
                raise AnswerError(f"number too large: {match.group()}")
            tokens.append(_Num(value))
            i = match.end()
            continue
        match = _WORD.match(text, i)
        if match:
            word, i = match.group(), match.end()
            # A compound unit is written without spaces: TB/s, FLOPs/byte.
            per = _WORD.match(text, i + 1) if text.startswith("/", i) else None
            if per and _word_unit(word) and _word_unit(per.group()):
                word, i = f"{word}/{per.group()}", per.end()
            tokens.append(_UnitToken(parse_unit(word)))
            continue
        for op in _OPERATORS:
            if text.startswith(op, i):
                tokens.append(_Op("**" if op == "^" else op))
                i += len(op)
                break
        else:
            raise AnswerError(f"unexpected '{ch}' in the answer")
    tokens.append(_End())
    return tokens


class _Parser:
    """expr := term (('+'|'-') term)* ; term := unary (('*'|'/') unary)* ;
    unary := ('+'|'-') unary | power ; power := atom ('**' exponent)? UNIT? ;
    exponent := ('+'|'-') exponent | atom ('**' exponent)? ; atom := NUMBER | '(' expr ')'"""

    def __init__(self, tokens: list[_Token]):
        self.tokens, self.pos, self.depth, self.has_unit = tokens, 0, 0, False

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def take_op(self, *ops: str) -> str | None:
        """The next token's operator if it is one of ``ops`` (then taken), else None (nothing taken)."""
        token = self.peek()
        if isinstance(token, _Op) and token.text in ops:
            self.pos += 1
            return token.text
        return None

    def parse(self) -> Quantity:
        value, dims = self.expr()
        tok = self.peek()
        if not isinstance(tok, _End):
            raise AnswerError(f"unexpected {_show(tok)} after a complete answer")
        return Quantity(value, dims, self.has_unit)

    def expr(self) -> tuple[float, Dims]:
        value, dims = self.term()
        while (op := self.take_op("+", "-")) is not None:
            rhs, rhs_dims = self.term()
            if rhs_dims != dims:
                raise AnswerError(
                    f"can not add {describe_dims(dims, False)} and {describe_dims(rhs_dims, False)}")
            value = _finite(value + rhs if op == "+" else value - rhs)
        return value, dims

    def term(self) -> tuple[float, Dims]:
        value, dims = self.unary()
        while (op := self.take_op("*", "/")) is not None:
            rhs, rhs_dims = self.unary()
            if op == "*":
                value, dims = _finite(value * rhs), _combine(dims, rhs_dims, 1)
            else:
                if rhs == 0:
                    raise AnswerError("division by zero")
                value, dims = _finite(value / rhs), _combine(dims, rhs_dims, -1)
        return value, dims

    def unary(self) -> tuple[float, Dims]:
        sign_op = self.take_op("-", "+")
        if sign_op is not None:
            sign = -1.0 if sign_op == "-" else 1.0
            with _Nesting(self):
                value, dims = self.unary()
            return sign * value, dims
        return self.power()

    def power(self) -> tuple[float, Dims]:
        value, dims = self.atom()
        if self.take_op("**") is not None:
            value, dims = _raise(value, dims, self.exponent())
        tok = self.peek()
        if isinstance(tok, _UnitToken):
            # The unit binds after the power: "2048**3 FLOP" is (2048**3) FLOP.
            self.pos += 1
            unit = tok.unit
            self.has_unit = True
            value, dims = _finite(value * unit.scale), _combine(dims, unit.dims, 1)
            after = self.peek()
            if isinstance(after, _UnitToken):
                raise AnswerError(f"two units in a row: '{unit.text}' then '{after.unit.text}'")
        return value, dims

    def exponent(self) -> float:
        """A plain-number exponent; right-associative, so 2**3**2 == 2**9."""
        sign_op = self.take_op("-", "+")
        if sign_op is not None:
            sign = -1.0 if sign_op == "-" else 1.0
            with _Nesting(self):
                return sign * self.exponent()
        value, dims = self.atom()
        if self.take_op("**") is not None:
            with _Nesting(self):
                value, dims = _raise(value, dims, self.exponent())
        if dims != DIMENSIONLESS:
            raise AnswerError("an exponent must be a plain number")
        return value

    def atom(self) -> tuple[float, Dims]:
        tok = self.take()
        if isinstance(tok, _Num):
            return tok.value, DIMENSIONLESS
        if tok == _Op("("):
            with _Nesting(self):
                value, dims = self.expr()
            if self.take() != _Op(")"):
                raise AnswerError("missing ')'")
            return value, dims
        if isinstance(tok, _UnitToken):
            raise AnswerError(f"unit '{tok.unit.text}' has no number before it (write 1.6 TB/s, no spaces around /)")
        raise AnswerError("the answer ends too early" if isinstance(tok, _End) else f"unexpected {_show(tok)}")


def _raise(base: float, dims: Dims, exponent: float) -> tuple[float, Dims]:
    if abs(exponent) > MAX_EXPONENT:
        raise AnswerError(f"exponent {exponent:g} is too large (limit {MAX_EXPONENT:g})")
    if dims != DIMENSIONLESS and not float(exponent).is_integer():
        raise AnswerError("a quantity with a unit can only be raised to a whole power")
    try:
        value = math.pow(base, exponent)
    except OverflowError:
        raise AnswerError("number too large") from None
    except (ValueError, ZeroDivisionError):
        raise AnswerError("that power has no real value") from None
    whole = int(exponent)
    return _finite(value), (dims[0] * whole, dims[1] * whole, dims[2] * whole)


class _Nesting:
    def __init__(self, parser: _Parser):
        self.parser = parser

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_NESTING:
            raise AnswerError(f"too deeply nested (limit {MAX_NESTING})")

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def _show(tok: _Token) -> str:
    if isinstance(tok, _UnitToken):
        return f"unit '{tok.unit.text}'"
    if isinstance(tok, _Num):
        return f"number {tok.value:g}"
    return "end of answer" if isinstance(tok, _End) else f"'{tok.text}'"


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise AnswerError("number too large")
    return value


def _combine(a: Dims, b: Dims, sign: int) -> Dims:
    return (a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2])


def _tokens_of(text: str) -> list[_Token]:
    if not isinstance(text, str):
        raise AnswerError("an answer must be text")
    if len(text) > MAX_INPUT_CHARS:
        raise AnswerError(f"answer too long (limit {MAX_INPUT_CHARS} characters)")
    text = re.sub(APPROX, "", text.translate(_TRANSLATE)).strip()
    if text.endswith(".") and _FULL_STOP_AFTER.match(text[:-1].rstrip()[-1:]):
        text = text[:-1].rstrip()  # a sentence's full stop: "12 µs.", "172.4.", "(2*3)."
    if "," in text:
        text = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
        if "," in text:
            raise AnswerError(DECIMAL_COMMA)
    if not text:
        raise AnswerError("empty answer")
    # "FLOPs per byte", "bytes per second": a spelled "per" between two words is a "/"
    text = re.sub(r"(?<=[A-Za-zµμ])\s+per\s+(?=[A-Za-zµμ])", "/", text)
    return _tokenize(text)


def parse_quantity(text: str) -> Quantity:
    """Parse arithmetic with units into a ``Quantity``; ``AnswerError`` if it can not be read."""
    return _Parser(_tokens_of(text)).parse()


def parse_number(text: str, unit: str, stated_unit: str | None = None, key: float | None = None,
                 right: Callable[[float], bool] | None = None) -> float:
    """The answer's value expressed in ``unit`` (base SI: "s", "B", "FLOP/s", "" ...).

    A plain number (no unit typed, e.g. ``2*2048**3/1.97e14``) is read in
    ``stated_unit`` when the question names the unit to answer in (``"us"``,
    ``"FLOP/byte"``); where it names none and ``unit`` has a dimension,
    ``NeedsUnitError`` asks for a unit instead of guessing seconds.
    An answer with units must have the dimension of ``unit``, or
    ``WrongDimensionError`` says which dimension is expected. One exception
    reads a working the way it was meant: when its only unit is the last
    token and that unit on the number before it gives the wrong dimension,
    the unit applies to the whole working (``2*2048**3/1.97e14 s`` is seconds).
    ``key`` (the expected value in ``unit``, if known) lets ``NeedsUnitError`` suggest the base unit
    first when a plain number is already at the key's scale. ``right(value)`` (the grader's verdict
    on a value in ``unit``, if known): a plain number read in ``stated_unit`` that is not right there
    but is right read in ``unit`` itself is not graded: ``NeedsUnitError`` says both readings.
    """
    expected = parse_unit(unit)
    tokens = _tokens_of(text)
    quantity = _Parser(tokens).parse()
    units = [tok.unit for tok in tokens if isinstance(tok, _UnitToken)]
    if (quantity.dims == (0, 0, 1) and expected.dims == (-1, 0, 1) and units
            and all(_FLOP_WORDS.match(u.text) for u in units)):
        return quantity.value / expected.scale  # "197 TFLOPs" / "5 petaflops" where a rate is asked: the rate
    if (quantity.dims == DIMENSIONLESS and quantity.has_unit and expected.dims != DIMENSIONLESS
            and any(u.text not in _COUNT_PREFIXES and u.text.lower() not in _COUNT_WORDS
                    for u in units)):
        raise WrongDimensionError(expected.dims, DIMENSIONLESS)  # "123 us/s": the units cancel
    if quantity.dims == DIMENSIONLESS:
        if expected.dims == DIMENSIONLESS:
            return quantity.value
        if stated_unit is None:
            at_key = key is not None and key != 0 and 0.1 <= abs(quantity.value / (key * expected.scale)) <= 10
            raise NeedsUnitError(text, expected.dims, at_key)
        stated = parse_unit(stated_unit)
        if stated.dims != expected.dims:
            raise ValueError(f"stated unit '{stated_unit}' is not {describe_dims(expected.dims, False)}")
        value = _finite(quantity.value * stated.scale) / expected.scale
        if right is not None and not right(value) and right(quantity.value / expected.scale):
            raise NeedsUnitError(text, expected.dims, read_in=(stated_unit, value, quantity.value / expected.scale,
                                                                unit))
        return value
    if quantity.dims == expected.dims:
        return quantity.value / expected.scale
    if len(units) == 1 and isinstance(tokens[-2], _UnitToken) and units[0].dims == expected.dims:
        working = _Parser([*tokens[:-2], _End()]).parse()
        if working.dims == DIMENSIONLESS:
            return _finite(working.value * units[0].scale) / expected.scale
    worked = sum(isinstance(tok, _Num) for tok in tokens) > 1
    tip = (" (a unit applies to the number just before it: write (working) unit, or leave the unit off)"
           if worked else "")
    raise WrongDimensionError(expected.dims, quantity.dims, tip)


def parse_duration_seconds(text: str, stated_unit: str | None = "s") -> float:
    """A time in seconds: ``87.2us``, ``0.0872 ms``, ``8.72e-5 s``; a bare number is read in ``stated_unit`` (seconds; None refuses it)."""
    return parse_number(text, "s", stated_unit)


def normalize_choice(text: str) -> str:
    """``"Compute-bound."`` -> ``"compute"``: lower case, without a sentence's end (``CHOICE_STOPS``) and
    without a trailing "bound" (after a hyphen, a dash or a space)."""
    text = " ".join(text.translate(_CHOICE_TRANSLATE).lower().split()).rstrip(CHOICE_STOPS + " ")
    for suffix in ("-bound", " bound"):
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
    return text


def parse_choice(text: str, choices: tuple[str, ...] | list[str], shown: bool = True) -> str:
    """One of ``choices`` (returned as spelled there) from its name, a known alias or a unique prefix.

    Aliases: ``c``/``m`` for compute/memory, ``y``/``n`` for yes/no, ``HBM``/``memory bound``/
    ``bandwidth-bound``/``BW-bound`` for memory, ``comms``/``communication`` for comms; a 2-D answer as
    ``48 x 512`` or ``(48, 512)``; a chip as ``TPU v6e`` or ``the v6e`` (``CHOICE_LEAD``).
    ``shown``: whether the prompt shows the choices; when it does not, an unreadable answer's
    message never lists them (nor a prefix's candidates).
    """
    if not isinstance(text, str):  # None, bytes, a list ...: not an answer we can read
        raise AnswerError(f"an answer must be text, got {type(text).__name__}")
    if len(text) > MAX_INPUT_CHARS:
        raise AnswerError(f"answer too long (limit {MAX_INPUT_CHARS} characters)")
    given = re.sub(CHOICE_LEAD, "", normalize_choice(text.translate(_TRANSLATE)))
    if not given:
        raise AnswerError("empty answer")
    pair = _PAIR.match(given)
    if pair:
        given = f"{pair.group(1)}x{pair.group(2)}"
    by_name = {normalize_choice(c): c for c in choices}
    if given in by_name:
        return by_name[given]
    alias = _CHOICE_ALIASES.get(given)
    if alias is not None and alias in by_name:
        return by_name[alias]
    matches = sorted({c for name, c in by_name.items() if name.startswith(given)})
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1 and shown:
        raise AnswerError(f"'{text.strip()}' could be {' or '.join(matches)}")
    if not shown:  # never list choices the prompt did not show (a lattice problem's distractors)
        if all(_PAIR.match(c) for c in choices):
            raise AnswerError("write the block as rows x cols (like 3x5) or as the prompt writes a shape (like (3, 5))")
        raise AnswerError("that is not an answer this question takes")
    raise AnswerError(f"answer one of: {', '.join(choices)}")


def card_reader() -> dict[str, object]:
    """What the Anki card's reader needs to read "number [unit]" as ``parse_number`` does, as data.

    The card (``generator.export.card``) must never type a unit or factor twice, so this table is
    computed here from the tables above, every entry through ``parse_unit`` itself:

    - ``exact``: unit word -> ``[scale, "s,B,FLOP" exponents, kind]`` for every spelling matched
      case-sensitively (base words, prefixed words, count prefixes), and also every other spelling
      as written in the tables above;
    - ``lower``: lower-cased word -> the same, for the words matched whatever their case (time
      words, counts, spelled-out prefixes): ``parse_unit`` falls back on these;
    - ``ambiguous``: words refused whatever else they might match (``MS``);
    - ``aliases``: ``parse_choice``'s choice aliases;
    - the grammar's own data, so the card types none of it again: ``number`` and ``word`` (the
      tokenizer's patterns), ``ops`` (its operators), ``stop`` (what a full stop may follow),
      ``translate`` and ``dashes`` (the characters read as others in any answer and in a choice),
      ``stops`` (``CHOICE_STOPS``), ``limits`` (``MAX_NESTING``, ``MAX_EXPONENT``), ``approx`` (the "about"
      sign before a number, dropped) and ``lead`` (the words before a chip's name, dropped).

    ``kind``: 1 a FLOP word (``TFLOPs``, read as a rate where a rate is asked), 2 a count word or
    count prefix (``chips``, ``k``: the number stays a plain count), 0 otherwise. A compound unit
    ``a/b`` is two ``exact``/``lower`` words of ``_word_unit`` (``word`` 1 in the kind's tens).
    """
    candidates: set[str] = set(_BASE_WORDS) | set(_COUNT_PREFIXES) | set(_COUNT_WORDS) | set(_TIME_WORDS)
    for prefix in _SPELLED_PREFIXES:
        candidates |= {prefix + base for base in _SPELLED_BASES}
    for table in (_BINARY_PREFIXES, _LARGE_PREFIXES, _SMALL_PREFIXES):
        candidates |= {prefix + base for prefix in table for base in _BASE_WORDS}
    lower_words = set(_COUNT_WORDS) | set(_TIME_WORDS) | {p + b for p in _SPELLED_PREFIXES for b in _SPELLED_BASES}

    def entry(word: str) -> list[object] | None:
        try:
            unit = parse_unit(word)
        except AnswerError:
            return None
        kind = 1 if _FLOP_WORDS.match(word) else 2 if (word in _COUNT_PREFIXES or word.lower() in _COUNT_WORDS) else 0
        # +10: a word of its own (``_word_unit``), which may stand on either side of a compound "a/b".
        kind += 10 if _word_unit(word) is not None else 0
        return [unit.scale, ",".join(str(d) for d in unit.dims), kind]

    exact = {w: e for w in sorted(candidates) if (e := entry(w)) is not None}
    lower = {w.lower(): e for w in sorted(lower_words) if (e := entry(w)) is not None}
    return {"exact": exact, "lower": lower, "ambiguous": sorted(_AMBIGUOUS), "aliases": dict(_CHOICE_ALIASES),
            "number": _NUMBER.pattern, "word": _WORD.pattern, "ops": list(_OPERATORS), "stop": _FULL_STOP_AFTER.pattern,
            "translate": {chr(k): v for k, v in _TRANSLATE.items()},
            "dashes": {chr(k): v for k, v in _CHOICE_TRANSLATE.items()},
            "stops": CHOICE_STOPS, "limits": [MAX_NESTING, MAX_EXPONENT], "approx": APPROX, "lead": CHOICE_LEAD}
