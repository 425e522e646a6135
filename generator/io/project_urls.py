"""The course repository's address: one place, ``[project.urls] Repository`` in pyproject.toml.

``drill site`` reads it for the page's Open-in-Colab link (``--repo-url`` overrides it);
the notebook can call ``repository_url()`` where it runs in a checkout or with the
package installed. Read from the checkout's ``pyproject.toml`` when there is one, else
from the installed package's metadata (``Project-URL: Repository, ...``). Empty when the
copy has no address yet (not published). Parsed as text, never executed.
"""

from __future__ import annotations

import re
from pathlib import Path

from generator.io.safeio import SafeIOError, read_text_bounded

PACKAGE = "rudrite-kernels"
URL_KEY = "Repository"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
NOTEBOOK_REPO_PATH = "labs/stage-0/lab-0.1-rooflines.ipynb"
NOTEBOOK_BRANCH = "main"  # the branch the Colab link opens
_GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def urls_from_pyproject(text: str) -> dict[str, str]:
    """The ``[project.urls]`` table of a pyproject.toml: ``key = "value"`` lines (no tomllib on 3.10)."""
    out: dict[str, str] = {}
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line.split("#", 1)[0].strip() == "[project.urls]"
            continue
        m = re.match(r'^"?([A-Za-z0-9_. -]+?)"?\s*=\s*"([^"\\]*)"\s*(#.*)?$', line) if inside else None
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _from_metadata() -> str:
    try:
        from importlib import metadata  # start-up: only this path needs it
        entries: list[str] = metadata.metadata(PACKAGE).get_all("Project-URL") or []
    except Exception:  # not installed, or metadata unreadable: no address
        return ""
    for entry in entries:
        key, _, value = entry.partition(",")
        if key.strip() == URL_KEY:
            return value.strip()
    return ""


def repository_url(pyproject: Path | None = None) -> str:
    """The repository's address, or "" when this copy is not published yet."""
    path = PYPROJECT if pyproject is None else Path(pyproject)
    try:
        text = read_text_bounded(path, 1024 * 1024)
    except SafeIOError:
        return _from_metadata() if pyproject is None else ""
    return urls_from_pyproject(text).get(URL_KEY, "").strip()


def github_owner_repo(url: str) -> tuple[str, str] | None:
    m = _GITHUB.match((url or "").strip())
    return (m.group(1), m.group(2)) if m else None


def colab_url(url: str, notebook_path: str = NOTEBOOK_REPO_PATH) -> str | None:
    """Colab's address for the notebook in a GitHub repository, or None for any other address."""
    found = github_owner_repo(url)
    if not found:
        return None
    owner, repo = found
    return f"https://colab.research.google.com/github/{owner}/{repo}/blob/{NOTEBOOK_BRANCH}/{notebook_path}"
