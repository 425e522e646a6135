"""Running the product's JavaScript under Node, in the fast set, to hold it to the Python rules it copies.

The card's script (``generator.export.card``) and the page's playground (``drills/site/assets/site.js``)
restate Python rules in JavaScript. A test module loads the shipped text, hands it to one Node process
together with every case as one JSON document on stdin, and reads one JSON document back; the Python
answers are computed in the test. Node is Debian's ``nodejs`` (``.ci/run`` installs it); under CI
(``CI`` set) a missing ``node`` fails the test rather than skipping it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from tests.conftest import bound

NODE_ENV = "DRILL_NODE"  # a node binary to use instead of the one on PATH


def node() -> str:
    """The path of the ``node`` binary; fails under CI and skips elsewhere when there is none."""
    path = os.environ.get(NODE_ENV) or shutil.which("node") or shutil.which("nodejs")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed (.ci/run installs Debian's nodejs)")
        pytest.skip("node is not installed (Debian: apt-get install nodejs); CI runs these checks")
    return path


def run_node(harness: str, payload: dict[str, Any], seconds: float = 120) -> Any:
    """Run ``harness`` (a Node script reading one JSON document on stdin and writing one on stdout) on
    ``payload`` within ``bound(seconds)``, and return what it wrote, parsed. Fails the test on a non-zero
    exit, with Node's stderr."""
    proc = subprocess.run([node(), "-e", harness], input=json.dumps(payload, allow_nan=False), text=True,
                          capture_output=True, timeout=bound(seconds), env={**os.environ, "NODE_OPTIONS": ""})
    if proc.returncode != 0:
        pytest.fail(f"node exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
