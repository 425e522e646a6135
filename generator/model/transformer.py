"""The transformer step-time model: a forward pass's FLOPs and bytes from its sizes alone.

Prefill and one decode step, priced with ``costs.matmul`` and ``generator.model.roofline``.
Used by the ``transformer_step`` family and `drill transformer`.
Details: docs/internals.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generator.model import costs, roofline
from generator.model.catalogue import Chip
from generator.model.units import DTYPE_BYTES, normalize_dtype, sci, si
from generator.errors import UsageError
from generator.io import safeio


class TransformerInputError(UsageError, ValueError):
    """A transformer step the model cannot take: a phase, a count or a size out of range."""

PHASES = ("prefill", "decode")
MODELS_PATH = Path(__file__).with_name("models.yaml")


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer's sizes (counts, not bytes)."""

    params: int
    layers: int
    d_model: int
    kv_d_model: int | None = None  # K (and V) width per layer; None: multi-head attention, = d_model
    name: str = ""

    @property
    def kv_width(self) -> int:
        return self.kv_d_model or self.d_model

    def label(self) -> str:
        kv = f", kv_d_model={self.kv_d_model}" if self.kv_d_model and self.kv_d_model != self.d_model else ""
        name = f"{self.name}: " if self.name else ""
        return f"{name}{sci(self.params)} params, {self.layers} layers, d_model={self.d_model}{kv}"


@dataclass(frozen=True)
class StepCost:
    """FLOPs and HBM bytes of one forward step, by part."""

    model: Model
    phase: str
    batch: int
    seq: int
    dtype: str
    flops_weights: int
    flops_attention: int
    bytes_weights: int
    bytes_activations: int
    bytes_kv_cache: int
    attention_working: str

    @property
    def tokens(self) -> int:
        """Tokens this step computes: B·S for prefill, B for one decode step."""
        return self.batch * self.seq if self.phase == "prefill" else self.batch

    @property
    def flops(self) -> int:
        return self.flops_weights + self.flops_attention

    @property
    def bytes(self) -> int:
        return self.bytes_weights + self.bytes_activations + self.bytes_kv_cache

    @property
    def hbm_footprint_bytes(self) -> int:
        """What must sit in HBM at once: the weights plus the full K/V cache for B·S tokens."""
        return hbm_footprint_bytes(self.model, self.batch, self.seq, self.dtype)

    def op_cost(self) -> costs.OpCost:
        """The step as one OpCost, so ``roofline.estimate`` prices it like any op."""
        m, b = self.model, DTYPE_BYTES[self.dtype]
        kv_verb = "written" if self.phase == "prefill" else "read"
        return costs.OpCost(
            op=f"transformer_{self.phase}", shape=(self.batch, self.seq), dtype=self.dtype,
            flops=self.flops, bytes=self.bytes,
            flops_formula="2·P·tokens + attention (Q·Kᵀ and A·V per layer)",
            bytes_formula=f"P·bytes + 2·L·tokens·D·bytes (activations) + 2·L·B·S·kv·bytes (K,V cache {kv_verb})",
            flops_working=f"2 × {sci(m.params)} × {self.tokens} + {self.attention_working}",
            bytes_working=(f"{sci(m.params)}×{b} + 2×{m.layers}×{self.tokens}×{m.d_model}×{b} + "
                           f"2×{m.layers}×{self.batch}×{self.seq}×{m.kv_width}×{b}"),
            convention="2·params FLOPs per token + attention matmuls over the full context (no causal saving); "
                       "weights, layer activations and the K/V cache each cross HBM once",
            operand_dtypes={"weights": self.dtype, "activations": self.dtype, "kv_cache": self.dtype})


def hbm_footprint_bytes(model: Model, batch: int, seq: int, dtype: str = "bf16") -> int:
    """Bytes that must sit in HBM at once: the weights plus the full K/V cache for batch·seq tokens."""
    b = DTYPE_BYTES[normalize_dtype(dtype)]
    return model.params * b + 2 * model.layers * batch * seq * model.kv_width * b


def step_cost(model: Model, phase: str, batch: int, seq: int, dtype: str = "bf16") -> StepCost:
    """FLOPs and bytes of a prefill over B×S tokens, or of one decode step with S tokens of context."""
    if phase not in PHASES:
        raise TransformerInputError(f"unknown phase '{phase}'; accepted: {', '.join(PHASES)}")
    for name, value in (("params", model.params), ("layers", model.layers), ("d_model", model.d_model),
                        ("kv_d_model", model.kv_width), ("batch", batch), ("seq", seq)):
        if value <= 0:
            raise TransformerInputError(f"{name} must be positive, got {value}")
    dtype = normalize_dtype(dtype)
    b, L, D = DTYPE_BYTES[dtype], model.layers, model.d_model
    queries = seq if phase == "prefill" else 1
    qk = costs.matmul(queries, D, seq, dtype)  # [q, D] @ [D, S]: all heads together
    av = costs.matmul(queries, seq, D, dtype)  # [q, S] @ [S, D]
    tokens = batch * queries
    return StepCost(
        model=model, phase=phase, batch=batch, seq=seq, dtype=dtype,
        flops_weights=costs.FLOPS_PER_MAC * model.params * tokens,  # one multiply-add per weight per token
        flops_attention=L * batch * (qk.flops + av.flops),
        bytes_weights=model.params * b,
        bytes_activations=2 * L * tokens * D * b,
        bytes_kv_cache=2 * L * batch * seq * model.kv_width * b,
        attention_working=f"{L} × {batch} × ({qk.flops_working} + {av.flops_working})")


def estimate(chip: Chip | roofline.Ceilings, model: Model, phase: str, batch: int, seq: int,
             dtype: str = "bf16") -> tuple[StepCost, roofline.Estimate]:
    step = step_cost(model, phase, batch, seq, dtype)
    return step, roofline.estimate(chip, step.op_cost())


def to_dict(step: StepCost, est: roofline.Estimate, chip: Chip) -> dict[str, Any]:
    """The JSON of ``drill transformer --json``: the roofline keys plus the parts and the HBM check."""
    out = est.to_dict()
    m = step.model
    out.update({
        "chip": chip.name, "phase": step.phase, "model": m.name, "params": m.params, "layers": m.layers,
        "d_model": m.d_model, "kv_d_model": m.kv_width, "batch": step.batch, "seq": step.seq,
        "tokens": step.tokens,
        "flops_weights": step.flops_weights, "flops_attention": step.flops_attention,
        "bytes_weights": step.bytes_weights, "bytes_activations": step.bytes_activations,
        "bytes_kv_cache": step.bytes_kv_cache,
        "seconds_per_token": est.floor_s / step.tokens,
        "hbm_footprint_bytes": step.hbm_footprint_bytes, "hbm_bytes": chip.hbm_bytes,
        "fits_in_hbm": step.hbm_footprint_bytes <= chip.hbm_bytes,
    })
    return out


def worked_lines(step: StepCost, est: roofline.Estimate, chip: Chip) -> list[str]:
    """The roofline's worked arithmetic for the step, then the parts and the HBM check."""
    lines = [line for line in roofline.worked_lines(est) if not line.startswith("attainable")]
    lines.insert(2, f"parts      : weights {sci(step.flops_weights)} FLOPs + attention {sci(step.flops_attention)} FLOPs; "
                    f"bytes: weights {sci(step.bytes_weights)} + activations {sci(step.bytes_activations)} "
                    f"+ K/V cache {sci(step.bytes_kv_cache)}")
    hbm = chip.figures["hbm_bytes"]
    need = step.hbm_footprint_bytes
    verdict = "fits" if need <= chip.hbm_bytes else f"does NOT fit: needs {need / chip.hbm_bytes:.1f} chips' HBM"
    lines.append(f"HBM check  : weights + K/V cache = {si(need, 'B')} vs {si(chip.hbm_bytes, 'B')} on one "
                 f"{chip.display} [{hbm.source.cite()}]: {verdict} (the floor assumes it does)")
    lines.append(f"per token  : floor / {step.tokens} tokens = {si(est.floor_s / step.tokens, 's')}")
    return lines


_COUNT = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*([kKmMbBtT]?)\s*$")
_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def parse_count(text: str) -> int:
    """``"7B"`` -> 7_000_000_000; also ``7e9``, ``1.3b``, ``6738415616``, ``70M``. Parsed, never evaluated."""
    match = _COUNT.match(str(text))
    if not match:
        raise TransformerInputError(f"'{text}' is not a count: write e.g. 7e9, 7B, 1.3B or 6738415616")
    mantissa, exponent, suffix = match.groups()
    if abs(int(exponent or 0)) > 30:
        raise TransformerInputError(f"'{text}' is out of range: a parameter count between 1 and 1e16")
    value = float(mantissa) * 10 ** int(exponent or 0) * _SUFFIX[suffix.lower()]
    if not value >= 1 or value > 1e16:
        raise TransformerInputError(f"'{text}' is out of range: a parameter count between 1 and 1e16")
    return int(round(value))


@dataclass(frozen=True)
class KnownShape:
    """A published model's shape from ``models.yaml``: what ``--params`` alone fills in."""

    name: str
    params: int
    layers: int
    d_model: int
    kv_d_model: int | None
    sources: tuple[str, ...]  # "title <url>, retrieved DATE", one per source
    note: str = ""

    def model(self, params: int, kv_d_model: int | None = None) -> Model:
        return Model(params, self.layers, self.d_model, kv_d_model or self.kv_d_model, self.name)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": self.params, "layers": self.layers, "d_model": self.d_model,
                "kv_d_model": self.kv_d_model, "sources": list(self.sources), "note": self.note}


@lru_cache(maxsize=1)
def known_shapes() -> tuple[KnownShape, ...]:
    """The shapes in ``models.yaml`` (read through the file policy, parsed as plain YAML)."""
    from generator.io.yamlio import safe_load  # start-up: only this path needs it

    data = safe_load(safeio.read_text_bounded(MODELS_PATH))
    cited = {key: f"{s['title']} <{s['url']}>, retrieved {s['retrieved']}" for key, s in data["sources"].items()}
    return tuple(KnownShape(str(m["name"]), parse_count(str(m["params"])), int(m["layers"]), int(m["d_model"]),
                            int(m["kv_d_model"]) if m.get("kv_d_model") else None,
                            tuple(cited[k] for k in m["sources"]), str(m.get("note", "")))
                 for m in data["models"])


def known_shape(params: int) -> KnownShape | None:
    """The known model whose nominal parameter count is ``params`` (``7B`` -> Llama 2 7B), or None."""
    return next((shape for shape in known_shapes() if shape.params == params), None)
