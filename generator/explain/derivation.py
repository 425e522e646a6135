"""A derivation: the working of an explanation, read as arithmetic over quantities with units.

``evaluate`` reads ``"65536 exps / 1.097e9 exp/s + 23.01 us"`` into its value in SI units and the
dimension of that value (bytes, FLOPs, exponentials and seconds, each with a power), and lists every
number it used with its unit. Operators: ``+``, ``x``/``*``/``×``, ``/``, parentheses and
``max(a, b, ...)``. Words between quantities are skipped, but an operator is never guessed: two
quantities with only words between them are refused, and so is ``-``. Parsed, never evaluated by
Python. A refusal is a ``DerivationError`` with one line naming the term that failed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from generator.errors import DrillError

Dims = tuple[int, int, int, int]  # powers of (bytes, FLOPs, exponentials, seconds)
NONE: Dims = (0, 0, 0, 0)
BYTES: Dims = (1, 0, 0, 0)
FLOPS: Dims = (0, 1, 0, 0)
EXPS: Dims = (0, 0, 1, 0)
SECONDS: Dims = (0, 0, 0, 1)

_DIM_NAMES = ("B", "FLOP", "exp", "s")


class DerivationError(DrillError, ValueError):
    """A working that cannot be read as a derivation: one line naming the term."""


def dims_text(dims: Dims) -> str:
    """'B/s', 'FLOP', 'exp·s', 'a pure number' for a dimension."""
    up = [n if p == 1 else f"{n}^{p}" for n, p in zip(_DIM_NAMES, dims) if p > 0]
    down = [n if p == -1 else f"{n}^{-p}" for n, p in zip(_DIM_NAMES, dims) if p < 0]
    if not up and not down:
        return "a pure number"
    head = "·".join(up) or "1"
    return head + ("/" + "·".join(down) if down else "")


def _add(a: Dims, b: Dims, sign: int = 1) -> Dims:
    return (a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2], a[3] + sign * b[3])


# --- units: a base with an SI (or binary, for bytes) prefix, or a rate "<unit>/<unit>" ----------------------

_BASES: dict[str, tuple[Dims, dict[str, float]]] = {}
_SI_UP = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_SI_DOWN = {"": 1.0, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12}
for _name in ("B", "byte", "bytes"):
    _BASES[_name] = (BYTES, {**_SI_UP, **_BINARY})
for _name in ("FLOP", "FLOPs", "flop", "flops"):
    _BASES[_name] = (FLOPS, _SI_UP)
for _name in ("exp", "exps"):
    _BASES[_name] = (EXPS, _SI_UP)
_BASES["s"] = (SECONDS, _SI_DOWN)
PREFIX_WORDS = frozenset(p for p in (*_SI_UP, *_BINARY) if p)


def _simple_unit(text: str) -> tuple[float, Dims] | None:
    for base, (dims, prefixes) in _BASES.items():
        if text.endswith(base):
            prefix = text[: len(text) - len(base)]
            if prefix in prefixes:
                return prefixes[prefix], dims
    return None


def parse_unit(text: str) -> tuple[float, Dims] | None:
    """(scale to SI, dims) of a unit word ("GB/s", "µs", "G exp/s" as "Gexp/s", "ns/exp"), or None."""
    num, _, den = text.partition("/")
    top = _simple_unit(num)
    if top is None:
        return None
    if not den:
        return top
    bottom = _simple_unit(den)
    if bottom is None:
        return None
    return top[0] / bottom[0], _add(top[1], bottom[1], -1)


# --- tokens ------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<max>max\s*\()
  | (?P<word>[^\W\d_]+(?:-[^\W\d_]+)*(?:/[^\W\d_]+)?)
  | (?P<op>[*×/+])
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<comma>,)
  | (?P<minus>[-−–])
  | (?P<space>\s+)
  | (?P<other>.)
""", re.VERBOSE)


@dataclass(frozen=True)
class Number:
    """One number of the working: its value in SI units, its dims, and its text as written."""

    value: float
    dims: Dims
    text: str
    has_unit: bool


@dataclass(frozen=True)
class _Tok:
    kind: str  # num, op, lp, rp, max, comma
    text: str
    number: Number | None = None


def _tokens(working: str) -> list[_Tok]:
    raw = [(m.lastgroup or "other", m.group(0)) for m in _TOKEN.finditer(working)]
    out: list[_Tok] = []
    depth: list[str] = []  # the open parentheses: "max" or "(" (a comma separates max's arguments only)
    i = 0
    while i < len(raw):
        kind, text = raw[i]
        if kind == "num":
            j = i + 1
            while j < len(raw) and raw[j][0] == "space":
                j += 1
            unit_text = written = ""
            if j < len(raw) and raw[j][0] == "word":
                word = raw[j][1]
                k = j + 1
                while k < len(raw) and raw[k][0] == "space":
                    k += 1
                if word in PREFIX_WORDS and k < len(raw) and raw[k][0] == "word" and \
                        parse_unit(word + raw[k][1]) is not None and parse_unit(raw[k][1]) is not None:
                    unit_text, j = word + raw[k][1], k  # "1.097 G exp/s"
                    written = f"{word} {raw[k][1]}"
                elif parse_unit(word) is not None:
                    unit_text = written = word
            try:
                value = float(text)
            except ValueError:  # pragma: no cover - the pattern admits only floats
                raise DerivationError(f"'{text}' is not a number") from None
            if not math.isfinite(value):
                raise DerivationError(f"'{text}' is not a finite number")
            if unit_text:
                scale, dims = parse_unit(unit_text) or (1.0, NONE)
                shown = f"{text} {written}"
                out.append(_Tok("num", shown, Number(value * scale, dims, shown, True)))
                i = j + 1
            else:
                out.append(_Tok("num", text, Number(value, NONE, text, False)))
                i += 1
            continue
        if kind == "word":
            if text in ("x", "X"):
                out.append(_Tok("op", "x"))
            i += 1
            continue
        if kind == "op":
            out.append(_Tok("op", "x" if text in "*×" else text))
        elif kind == "max":
            depth.append("max")
            out.append(_Tok("max", "max("))
        elif kind == "lp":
            depth.append("(")
            out.append(_Tok("lp", "("))
        elif kind == "rp":
            if depth:
                depth.pop()
            out.append(_Tok("rp", ")"))
        elif kind == "comma":
            if depth and depth[-1] == "max":
                out.append(_Tok("comma", ","))
        elif kind == "minus":
            raise DerivationError("'-' is not an operator of a derivation: it adds (+), multiplies (x) and "
                                  "divides (/) quantities, with max(a, b) and parentheses")
        i += 1  # words, spaces and other punctuation separate; they are never operators
    return out


# --- the parser: expr := term ('+' term)*; term := factor (('x' | '/') factor)*; factor := number | (expr) | max(expr, ...)

@dataclass(frozen=True)
class Value:
    """A derivation's value in SI units, its dims, and the text of the term it came from."""

    value: float
    dims: Dims
    text: str


class _Parser:
    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> _Tok | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> _Tok:
        tok = self.tokens[self.at]
        self.at += 1
        return tok

    def expr(self) -> Value:
        left = self.term()
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.text == "+":
            self.take()
            right = self.term()
            if left.dims != right.dims:
                raise DerivationError(f"'{left.text}' is {dims_text(left.dims)} and '{right.text}' is "
                                      f"{dims_text(right.dims)}: they cannot be added")
            left = Value(left.value + right.value, left.dims, f"{left.text} + {right.text}")
        return left

    def term(self) -> Value:
        left = self.factor()
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.text in ("x", "/"):
            self.take()
            right = self.factor()
            if tok.text == "x":
                left = Value(left.value * right.value, _add(left.dims, right.dims), f"{left.text} x {right.text}")
            else:
                if right.value == 0:
                    raise DerivationError(f"'{right.text}' is zero: nothing can be divided by it")
                left = Value(left.value / right.value, _add(left.dims, right.dims, -1),
                             f"{left.text} / {right.text}")
        return left

    def factor(self) -> Value:
        tok = self.peek()
        if tok is None:
            raise DerivationError("the working ends where a quantity is expected")
        self.take()
        if tok.kind == "num":
            assert tok.number is not None
            return Value(tok.number.value, tok.number.dims, tok.text)
        if tok.kind == "lp":
            inner = self.expr()
            self.closing("(")
            return Value(inner.value, inner.dims, f"({inner.text})")
        if tok.kind == "max":
            args = [self.expr()]
            while (nxt := self.peek()) is not None and nxt.kind == "comma":
                self.take()
                args.append(self.expr())
            self.closing("max(")
            for a in args[1:]:
                if a.dims != args[0].dims:
                    raise DerivationError(f"max compares like with like: '{args[0].text}' is "
                                          f"{dims_text(args[0].dims)} and '{a.text}' is {dims_text(a.dims)}")
            best = max(args, key=lambda a: a.value)
            return Value(best.value, best.dims, "max(" + ", ".join(a.text for a in args) + ")")
        raise DerivationError(f"'{tok.text}' stands where a quantity is expected")

    def closing(self, opened: str) -> None:
        tok = self.peek()
        if tok is None or tok.kind != "rp":
            raise DerivationError(f"'{opened}' is not closed with ')'")
        self.take()


def numbers(working: str) -> list[Number]:
    """Every number of the working, with its unit where one follows it (no arithmetic done)."""
    return [t.number for t in _tokens(working) if t.number is not None]


def evaluate(working: str) -> tuple[Value, list[Number]]:
    """The value of ``working`` and the numbers it used, in order; DerivationError (one line) when it
    shows no quantity, when two quantities stand with no operator between them, or when the units of a
    sum or a max do not agree."""
    tokens = _tokens(working)
    numbers = [t.number for t in tokens if t.number is not None]
    if not numbers:
        raise DerivationError("the working shows no quantity: write it as arithmetic over the record's numbers")
    parser = _Parser(tokens)
    value = parser.expr()
    rest = parser.peek()
    if rest is not None:
        before = parser.tokens[parser.at - 1].text if parser.at else ""
        if rest.kind in ("num", "lp", "max"):
            raise DerivationError(f"no operator between '{before}' and '{rest.text}': an operator is never guessed "
                                  "(write +, x or /)")
        raise DerivationError(f"'{rest.text}' after '{before}' does not fit the working")
    return value, numbers
