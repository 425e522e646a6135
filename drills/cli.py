"""The ``drill`` command: a click group whose subcommands load on first use.

``COMMANDS`` maps every verb to its module (``drills/cmd_*.py``), imported only when it runs,
so startup stays fast. It also makes closed standard streams and narrow output encodings safe.
Details: docs/internals.md.
"""

from __future__ import annotations

import codecs
import errno
import importlib
import io
import os
import sys
import unicodedata
from typing import Any

import click

from generator.errors import DrillError

# command name -> "module:function" (imported lazily by LazyGroup.get_command)
COMMANDS = {
    "chips": "drills.cmd_core:chips",
    "roofline": "drills.cmd_core:roofline",
    "transformer": "drills.cmd_generate:transformer",
    "deck": "drills.cmd_generate:deck",
    "export": "drills.cmd_generate:export",
    "quiz": "drills.cmd_quiz:quiz",
    "check": "drills.cmd_check:check",
    "misconceptions": "drills.cmd_check:misconceptions",
    "miss-reasons": "drills.cmd_reasons:miss_reasons",
    "hierarchy": "drills.cmd_hierarchy:hierarchy",
    "stats": "drills.cmd_quiz:stats",
    "store": "drills.cmd_quiz:store",
    "lab": "drills.cmd_lab:lab",
    "explain": "drills.cmd_lab:explain",
    "gate": "drills.cmd_lab:gate",
    "progress": "drills.cmd_lab:progress",
    "xprof": "drills.cmd_lab:xprof",
    "site": "drills.cmd_site:site",
    "pod": "drills.cmd_pod:pod",
    "collective": "drills.cmd_pod:collective",
    "transfer": "drills.cmd_pod:transfer",
    "anki-import": "drills.cmd_anki_import:anki_import",
    "fsrs-fit": "drills.cmd_fsrs_fit:fsrs_fit",
}


class OutputError(Exception):
    """Writing to stdout failed (closed pipe, full disk): raised past click, which would exit 1 silently."""

    def __init__(self, command: str, error: OSError):
        super().__init__(command, error)
        self.command, self.error = command, error


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | {
            name for name, target in COMMANDS.items() if _module_exists(target)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and _module_exists(COMMANDS[name]):
            module_name, attr = COMMANDS[name].split(":")
            command: click.Command = getattr(importlib.import_module(module_name), attr)
            return command
        return super().get_command(ctx, name)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent=parent, **extra)
        except OSError as exc:
            if _is_output_error(exc):
                raise OutputError("", exc) from None
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            # click turns EPIPE into a silent exit 1; other output errors would be a traceback.
            if _is_output_error(exc):
                raise OutputError(ctx.invoked_subcommand or "", exc) from None
            raise


# errno values of a write that failed on the way out: closed pipe, full disk, I/O error, quota
_OUTPUT_ERRNOS = {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EBADF}

# ASCII spellings for the characters the tool prints, where the output encoding lacks them.
_ASCII_SPELLINGS = {
    "µ": "u", "μ": "u", "—": "-", "–": "-", "−": "-", "·": ".", "×": "x", "→": "->", "←": "<-",
    "≈": "~", "≤": "<=", "≥": ">=", "≠": "!=", "±": "+/-", "…": "...", "²": "^2", "³": "^3",
    "ᵀ": "T", "√": "sqrt", "’": "'", "‘": "'", "“": '"', "”": '"', "÷": "/", "✓": "ok", "✗": "x",
}
ASCII_ERRORS = "drill-ascii"


def _ascii_fallback(exc: UnicodeError) -> tuple[str, int]:
    """The encode error handler ``drill-ascii``: ASCII spellings, ``\\xNN`` for undecodable bytes."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for ch in exc.object[exc.start:exc.end]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in _ASCII_SPELLINGS:
            out.append(_ASCII_SPELLINGS[ch])
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
            out.append(plain or "?")
    return "".join(out), exc.end


codecs.register_error(ASCII_ERRORS, _ascii_fallback)


class _ClosedOutput(io.TextIOBase):
    """Stands in for a closed stdout: every write fails as writing to a closed descriptor would."""

    encoding = "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def isatty(self) -> bool:
        return False


class _PlainOutput(io.TextIOBase):
    """An ASCII stdout/stderr, shown without its ``buffer``: click would otherwise take an ASCII
    stream for a misconfigured one and write UTF-8 bytes past it, instead of the ASCII spellings."""

    def __init__(self, raw: io.TextIOWrapper):
        self._raw = raw

    encoding = property(lambda self: self._raw.encoding)
    errors = property(lambda self: self._raw.errors)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self._raw.write(text)

    def flush(self) -> None:
        self._raw.flush()

    def fileno(self) -> int:
        return self._raw.fileno()

    def isatty(self) -> bool:
        return self._raw.isatty()


def _standard_streams() -> None:
    """Make closed standard streams safe (docs/internals.md, drills/cli.py) and output encodable."""
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:  # closed: hold the number, so no file the tool opens becomes "stdout"
            try:
                devnull = os.open(os.devnull, mode)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
            except OSError:
                pass
    if sys.stdin is None:
        sys.stdin = io.StringIO("")
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()
    if sys.stderr is None:
        sys.stderr = io.StringIO()  # nowhere to report; the exit status still tells
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            stream.reconfigure(errors=ASCII_ERRORS)
            if codecs.lookup(stream.encoding).name == "ascii":
                setattr(sys, name, _PlainOutput(stream))
        except (ValueError, OSError, LookupError):
            pass


def _is_output_error(exc: OSError) -> bool:
    """A raw write error of the kind stdout gives. Files the tool writes go through
    generator.io.safeio (SafeIOError, no errno) and the store through sqlite3, so these come from printing."""
    from generator.io.safeio import SafeIOError  # start-up: `drill` loads a command's dependencies only when it runs

    return exc.errno in _OUTPUT_ERRNOS and not isinstance(exc, SafeIOError)


def _module_exists(target: str) -> bool:
    import importlib.util  # start-up: `drill` loads a command's dependencies only when it runs
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rudrite-kernels", prog_name="drill")
def cli() -> None:
    """Rudrite Kernels: drill roofline estimates, then measure them.

    Predict before you measure: `drill roofline` works an estimate, `drill quiz`
    drills it with spaced repetition, `drill lab` times it on the real chip.

    Environment: DRILL_STORE (the review store), DRILL_CACHE_DIR (the start-up
    cache), DRILL_FAMILY_PACKAGES (more problem-family packages: importable
    package names, comma-separated, each with its specs in a `specs` folder
    beside it; a name that is not one is refused in one line).
    """


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one-line errors, exit 2 for usage, 130 for Ctrl-C.

    A closed pipe (EPIPE: ``drill roofline ... | head``) exits 141 quietly, as
    Unix tools do (128 + SIGPIPE, what a shell reports for a writer killed by
    SIGPIPE); a quiz's answered reviews are saved all the same (each is committed
    before its feedback is printed). A full or failing stdout is one line on
    stderr and exit 1; a quiz's line says its answered reviews are saved.
    """
    _standard_streams()
    try:
        rv = cli.main(args=argv, prog_name="drill", standalone_mode=False)
        sys.stdout.flush()  # a buffered write that fails must fail here, not at interpreter exit
    except OutputError as exc:
        _output_failed(exc.command, exc.error)
    except click.exceptions.Exit as exc:
        _flush_or_fail("")
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        context = exc.ctx if isinstance(exc, click.UsageError) else None  # only a usage error knows its command
        where = context.command_path if context else "drill"
        message = " ".join(exc.format_message().split())  # one line, always
        _say_error(f"{where}: error: {message}")
        sys.exit(exc.exit_code)
    except DrillError as exc:  # every error the tool raises for its user: one line, its own exit status
        _say_error(f"drill: error: {exc.format_message()}")
        sys.exit(exc.exit_code)
    except OSError as exc:
        if _is_output_error(exc):
            _output_failed("", exc)
        # A file the tool could not read or write (generator.io.safeio refusals included): one line, exit 1.
        _say_error(f"drill: error: {_os_error_text(exc)}")
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)


def _os_error_text(exc: OSError) -> str:
    # start-up: `drill` loads a command's dependencies only when it runs
    from generator.io.safeio import SafeIOError, display_path

    if isinstance(exc, SafeIOError) or not exc.strerror:
        return " ".join(str(exc).split())
    return f"{exc.strerror}: {display_path(exc.filename)}" if exc.filename else exc.strerror


def _flush_or_fail(command: str) -> None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        _output_failed(command, exc)


def _output_failed(command: str, error: OSError) -> None:
    """Exit 141 quietly for a closed pipe; else one line on stderr and exit 1 (full disk, I/O error)."""
    # Point stdout at /dev/null so the interpreter's final flush does not print a second error.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    if error.errno == errno.EPIPE:
        sys.exit(141)  # the reader has what it wanted (| head): nothing to report
    where = f"drill {command}" if command else "drill"
    what = "can not write the output: standard output is closed" if error.errno == errno.EBADF else \
        f"can not write the output: {error.strerror or error}"
    saved = "; every answered review is saved" if command == "quiz" else ""
    _say_error(f"{where}: error: {what}{saved}")
    sys.exit(1)


def _say_error(line: str) -> None:
    try:
        click.echo(line, err=True)
    except (OSError, ValueError):  # stderr is gone too: the exit status still tells
        pass


if __name__ == "__main__":
    main()
