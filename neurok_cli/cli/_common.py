"""What every command shares: error reporting, consoles, progress bars, JSON output."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from typer.exceptions import TyperException

from ..errors import NeurokError, render_quantities
from ._checks import check_options
from ._names import release_unused

F = TypeVar("F", bound=Callable[..., Any])

# The quantities whose flag is not their name with dashes (errors.py marks quantities «so»).
_FLAGS = {"pin region": "--pin", "young modulus": "--young"}


def flag(quantity: str) -> str:
    """The command-line flag that sets a quantity a library message names."""
    return _FLAGS.get(quantity, "--" + quantity.replace(" ", "-"))


out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM ends a command as Ctrl-C does: the exception unwinds through every atomic
    write, which removes its temporary file. Worker processes (forked, so they inherit
    this handler) end quietly; only the process that installed it says why."""
    if os.getpid() == _HANDLER_PID[0]:
        sys.stderr.write("neurok: terminated\n")
    raise SystemExit(128 + signum)


_HANDLER_PID = [0]


@contextmanager
def _sigterm_handled() -> Iterator[None]:
    """Handle SIGTERM like SIGINT while a command runs (main thread only: elsewhere
    signal handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _on_sigterm)
    _HANDLER_PID[0] = os.getpid()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def guarded(fn: F) -> F:
    """Check the options (``_checks``), then turn library errors into one line on stderr and
    exit status 1, and anything else (a bug) into one line and exit status 2 (with the
    traceback above it when NEUROK_TRACEBACK is set). SIGTERM is handled like Ctrl-C."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _sigterm_handled():
                check_options(fn.__name__, kwargs)
                return fn(*args, **kwargs)
        except NeurokError as e:
            sys.stderr.write(f"neurok: error: {' '.join(e.render(flag).split())}\n")
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            sys.stderr.write("neurok: interrupted\n")
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort, TyperException):  # the command line's own
            raise
        except Exception as e:  # a bug, not the input: one line, the traceback on request
            if os.environ.get("NEUROK_TRACEBACK"):
                traceback.print_exc()
            text = " ".join(str(e).split())[:300]
            sys.stderr.write(f"neurok: internal error: {type(e).__name__}: {text} (please "
                             "report it; NEUROK_TRACEBACK=1 shows where it happened)\n")
            raise typer.Exit(2) from None
        finally:
            release_unused()  # a default output the run did not write is not left empty

    return wrapper  # type: ignore[return-value]


def warn(messages: list[str]) -> None:
    for m in messages:
        err.print(f"[yellow]warning:[/] {render_quantities(m, flag)}", soft_wrap=True)


def print_rows(rows: list[tuple[str, str]]) -> None:
    """A two-column (label, value) table on stdout."""
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for label, value in rows:
        table.add_row(label, value)
    out.print(table)


def print_json(data: Any) -> None:
    """``data`` as JSON on stdout; quantities its messages name read as this CLI's flags."""
    text = render_quantities(json.dumps(data, default=str, ensure_ascii=False), flag)
    sys.stdout.write(json.dumps(json.loads(text), indent=2) + "\n")


@contextmanager
def progress_bar(label: str, total: int | None = None) -> Iterator[Callable[..., None]]:
    """A rich progress bar on stderr; yields ``update(done, total, status=None)``."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task(label, total=total)

        def update(done: int, total_now: int, status: str | None = None) -> None:
            bar.update(task, completed=done, total=total_now,
                       description=f"{label} {status}" if status else label)

        yield update
