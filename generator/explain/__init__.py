"""Miss reasons: the concrete reasons a measured time misses its prediction by more than 2x.

The package's public names, from one module a job: ``evidence``, ``reasons``, ``reading``,
``derivation``, ``quantities``, ``search`` and ``judge``. Pure Python (no jax).
Details: docs/internals.md.
"""

from generator.explain.evidence import (ARITHMETIC_FACTOR, CORRECTED_FACTOR, FORMULA_TOLERANCE,
                                             MATCH_TOLERANCE, MAX_COMBINED, MAX_SECONDS, TRAFFIC_FACTOR,
                                             WITHIN_FACTOR, Estimate, Finding, OpEvidence, start)
from generator.explain.judge import EXAMPLE, Judgement, judge, pointer
from generator.explain.reading import (HEDGES, SHRUGS, WORKING_TOLERANCE, CorrectedError, check_seconds,
                                            corrected_from_sentence, is_shrug, parse_corrected, reason_id,
                                            split_reasons)
from generator.explain.reasons import (BY_ID, BY_NAME, EMULATED_RATE_SHARE, MAX_WIDENING, REASONS,
                                            SHAPE_RATE_DIFFERS, MissReason, UnknownReasonError, _log_off, band, corrected_time, find,
                                            matching_misconception, spread)
from generator.explain.search import (Candidate, assess, best, candidates, explains, explanations,
                                           supported_reasons, unexplainable)
from generator.explain.judge import Derived, RuleError, derive
from generator.explain.quantities import REASON_QUANTITIES, Quantity, quantities
from generator.explain.derivation import DerivationError, evaluate

__all__ = [
    "ARITHMETIC_FACTOR", "BY_ID", "BY_NAME", "CORRECTED_FACTOR", "EMULATED_RATE_SHARE", "EXAMPLE",
    "FORMULA_TOLERANCE", "HEDGES", "MATCH_TOLERANCE", "MAX_COMBINED", "MAX_SECONDS", "MAX_WIDENING",
    "REASONS", "SHAPE_RATE_DIFFERS", "SHRUGS", "TRAFFIC_FACTOR", "WITHIN_FACTOR",
    "WORKING_TOLERANCE", "CorrectedError", "UnknownReasonError", "Estimate", "Finding", "Judgement", "MissReason", "OpEvidence",
    "_log_off", "Candidate", "best", "candidates", "Derived", "RuleError", "derive", "REASON_QUANTITIES",
    "Quantity", "quantities", "DerivationError", "evaluate", "assess", "band", "check_seconds",
    "corrected_from_sentence", "corrected_time", "explains", "explanations", "find", "is_shrug", "judge",
    "matching_misconception", "parse_corrected", "pointer", "reason_id", "split_reasons", "spread", "start",
    "supported_reasons", "unexplainable",
]
