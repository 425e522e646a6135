"""The README's two set-up commands and CI agree."""

import re

from tests.conftest import REPO


def setup_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_setup_commands():
    commands = setup_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    main_job, tests = commands
    assert "drill " in main_job
    assert "pytest" in tests and "[test]" in tests


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert setup_commands()[1] in ci
