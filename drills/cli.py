"""The ``drill`` command: a click group whose subcommands load on first use.

Each verb lives in its own module (``drills/cmd_*.py``) and is imported only
when it runs, so ``drill quiz`` never pays for the lab's imports (jax) and
startup stays fast. Errors: usage problems exit 2 with one line on stderr,
never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

# command name -> "module:function" (imported lazily by LazyGroup.get_command)
COMMANDS = {
    "chips": "drills.cmd_core:chips",
    "roofline": "drills.cmd_core:roofline",
    "transformer": "drills.cmd_generate:transformer",
    "deck": "drills.cmd_generate:deck",
    "export": "drills.cmd_generate:export",
    "quiz": "drills.cmd_quiz:quiz",
    "stats": "drills.cmd_quiz:stats",
    "lab": "drills.cmd_lab:lab",
    "explain": "drills.cmd_lab:explain",
    "gate": "drills.cmd_lab:gate",
    "progress": "drills.cmd_lab:progress",
    "pod": "drills.cmd_pod:pod",
    "collective": "drills.cmd_pod:collective",
    "transfer": "drills.cmd_pod:transfer",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | {
            name for name, target in COMMANDS.items() if _module_exists(target)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and _module_exists(COMMANDS[name]):
            module_name, attr = COMMANDS[name].split(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, name)


def _module_exists(target: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rudrite-kernels", prog_name="drill")
def cli() -> None:
    """Rudrite Kernels: drill roofline estimates, then measure them.

    Predict before you measure: `drill roofline` works an estimate, `drill quiz`
    drills it with spaced repetition, `drill lab` times it on the real chip.
    """


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one-line errors, exit 2 for usage, 130 for Ctrl-C."""
    try:
        rv = cli.main(args=argv, prog_name="drill", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        where = exc.ctx.command_path if getattr(exc, "ctx", None) else "drill"
        message = " ".join(exc.format_message().split())  # one line, always
        click.echo(f"{where}: error: {message}", err=True)
        sys.exit(exc.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
