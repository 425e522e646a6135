"""Whether a dtype is emulated comes from the compiled program, on every jax CI makes a venv for.

The same small script runs under this venv's jax and under each older jax venv `.ci/run` makes
($DRILL_OLD_JAX_PYTHON: 0.5.2, $DRILL_OLDEST_JAX_PYTHON: 0.4.30, $DRILL_JAX_0_6_PYTHON: 0.6.2; the
Python 3.12 run of the fast set has no slow tests) and the newest jax, which needs Python 3.12
($DRILL_NEW_JAX_PYTHON: a 3.12 venv with jax >= 0.11). On jax 0.5.2-0.10.2 XLA's CPU backend upcasts a
bf16 dot (converts to f32 in its optimized HLO, several times the hand count's bytes); where a newer
jax on a CPU with native bf16 keeps it in bf16, the same code says native. f32 never converts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, bound

pytestmark = pytest.mark.slow

SCRIPT = """
import json, jax, jax.numpy as jnp
from labs.records import evidence
from labs.measure import probes
out = {"jax": jax.__version__}
for name, dt in (("bf16", jnp.bfloat16), ("f32", jnp.float32)):
    x = jnp.ones((256, 256), dt)
    fn = jax.jit(lambda a, b: a @ b)
    compiled = probes.compiled_dtype(fn, (x, x))
    out[name] = {"converts": compiled["converts"], "hlo": compiled["hlo"],
                 "verdict": list(evidence.dtype_verdict(name, compiled["converts"], None, 3 * 256 * 256 * 2))}
print(json.dumps(out))
"""
VENVS = ("DRILL_OLD_JAX_PYTHON", "DRILL_OLDEST_JAX_PYTHON", "DRILL_JAX_0_6_PYTHON", "DRILL_NEW_JAX_PYTHON")


def _pythons() -> list[str]:
    found = [sys.executable]
    for env in VENVS:
        path = os.environ.get(env, "").strip()
        if path:
            found.append(path)
        elif os.environ.get("CI"):
            pytest.fail(f"{env} is not set in CI (.ci/run makes that venv)")
    return found


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:3] if p.isdigit())


def test_emulated_dtype_is_read_from_the_optimized_hlo_on_every_jax():
    seen = []
    for python in _pythons():
        res = subprocess.run([python, "-c", SCRIPT], cwd=str(REPO), capture_output=True, text=True, timeout=bound(300))
        assert res.returncode == 0, res.stderr[-2000:]
        got = json.loads(res.stdout.strip().splitlines()[-1])
        bf16, f32 = got["bf16"], got["f32"]
        assert bf16["hlo"] == "optimized" and isinstance(bf16["converts"], int), got
        assert f32["verdict"][0] is False  # f32 needs no conversion
        assert bf16["verdict"][0] is (bf16["converts"] > 0) and "optimized HLO" in bf16["verdict"][1], got
        if (0, 5, 2) <= _version(got["jax"]) <= (0, 10, 2):  # XLA's CPU backend upcasts bf16 here
            assert bf16["verdict"][0] is True, got
        seen.append(got["jax"])
    if os.environ.get("DRILL_NEW_JAX_PYTHON", "").strip():  # the newest jax really ran, not an old one renamed
        assert any(_version(v) >= (0, 11) for v in seen), seen
