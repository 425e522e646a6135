"""Every lazily loaded command answers ``--help``: `drill`'s group lists a command only when its module is
found, so a missing or broken module would otherwise just hide the command. The walk reads
``drills.cli.COMMANDS`` itself (not the group's listing) and descends into subcommand groups."""

from __future__ import annotations

import click

from drills import cli as drill_cli
from tests.conftest import invoke_drill


def help_problems(commands: dict[str, str]) -> list[str]:
    """One line per command of ``commands`` (name -> "module:function") whose ``--help`` fails."""
    problems = []
    ctx = click.Context(drill_cli.cli, info_name="drill")
    listed = drill_cli.cli.list_commands(ctx)
    for name in sorted(commands):
        if name not in listed:
            problems.append(f"{name}: not listed by `drill` (module {commands[name].split(':')[0]} not found)")
            continue
        try:
            command = drill_cli.cli.get_command(ctx, name)
        except (ImportError, AttributeError) as exc:  # the module breaks on import, or lacks the function
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        paths = [[name]]
        if isinstance(command, click.Group):
            paths += [[name, sub] for sub in command.list_commands(ctx)]
        for path in paths:
            res = invoke_drill(*path, "--help")
            usage = f"Usage: drill {' '.join(path)}"
            if res.returncode != 0 or not res.stdout.startswith(usage) or res.stderr:
                problems.append(f"{' '.join(path)} --help: exit {res.returncode}: {(res.stderr or res.stdout)[:200]}")
    return problems


def test_every_lazy_command_answers_help(monkeypatch):
    assert help_problems(drill_cli.COMMANDS) == []
    top = invoke_drill("--help")
    assert top.returncode == 0
    for name in drill_cli.COMMANDS:
        assert f"  {name} " in top.stdout or f"  {name}\n" in top.stdout, name


def test_the_walk_fails_on_a_missing_module(monkeypatch):
    monkeypatch.setitem(drill_cli.COMMANDS, "ghost", "drills.cmd_no_such_module:ghost")
    assert help_problems(drill_cli.COMMANDS) == [
        "ghost: not listed by `drill` (module drills.cmd_no_such_module not found)"]


def test_the_walk_fails_on_a_missing_function(monkeypatch):
    monkeypatch.setitem(drill_cli.COMMANDS, "ghost", "drills.cmd_core:no_such_function")
    (problem,) = help_problems(drill_cli.COMMANDS)
    assert problem.startswith("ghost: AttributeError:") and "no_such_function" in problem
