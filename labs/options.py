"""What every lab run is told: the one options type of LAB·0.1 and the collectives lab.

``RunOptions`` holds what both labs take (chip, repetitions, dtype, where the record and its
traces go); ``labs.runner.LabOptions`` and ``labs.collectives.lab.Options`` extend it with what is
their own (ops and N; mesh and sizes). ``claim_output`` is the one way a run takes its record's
name and trace folder. Pure Python: no jax.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from labs.records import folder as records

CPU_DEFAULT_SIZE = 1024  # LAB·0.1's N when none is given on a CPU: the whole lab in under a minute on 2 cores
ACCELERATOR_DEFAULT_SIZE = 4096  # N when none is given on a TPU or GPU: the seed's N, a counted size


@dataclass(kw_only=True)
class RunOptions:
    chip: str = "auto"  # a catalogue name or alias; "auto": the device's own kind
    reps: int = 20  # timed calls per trace
    dtype: str = "bf16"
    out_dir: Path = field(default_factory=records.default_dir)  # $DRILL_RECORDS or the user data dir
    trace_dir: Path | None = None  # default: <out_dir>/traces/<record stem>
    trace: bool = True

    def claim_output(self, stem: str) -> tuple[str, Path | None]:
        """(the first free record stem from ``stem``, its trace folder made ready, or None when not
        tracing); RecordError (one line) when the folder cannot be written."""
        free = records.free_stem(self.out_dir, stem)
        return free, records.prepare_output(self.out_dir, free, self.trace, self.trace_dir)
