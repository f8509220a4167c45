"""The ``neurok`` command line: each command lives in its own module and only orchestrates."""

from __future__ import annotations

import gc

import typer

from .. import __version__
from ._group import OneLineErrors
from .animate import animate
from .convert import convert
from .dataset import dataset_app
from .evaluate import calibrate, evaluate
from .fit import fit
from .info import info
from .preview import preview
from .simulate import simulate
from .train import train

app = typer.Typer(
    name="neurok", cls=OneLineErrors,
    help="Turn a static 3D asset into physically plausible 4D animation.\n\n"
         "Start with:  neurok animate chair.glb  then  neurok preview chair_animated.glb",
    no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(animate)
app.command()(calibrate)
app.command()(convert)
app.command("eval")(evaluate)
app.command()(fit)
app.command()(info)
app.command()(preview)
app.command()(simulate)
app.command()(train)
app.add_typer(dataset_app, name="dataset")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"neurok {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       metavar="", help="Print the version and exit.")
          ) -> None:
    """Turn a static 3D asset into physically plausible 4D animation.

    Start with:  neurok animate chair.glb   then:  neurok preview chair_animated.glb
    """


def main() -> None:
    """Console-script entry point.

    Python's cyclic garbage collector is tuned for a process that lives on: start-up here
    makes ~1M objects that last until exit (torch, numba, scipy), and the default
    collections walked them again and again while they were made (~0.15 s of a command's
    start) and once more at exit (~0.3 s). So collections wait for 20,000 new objects
    rather than 700, and at the end everything left is frozen out of the last one (the
    process ends; the system takes the memory back). 10k-vertex animate: ~0.4 s less. The
    price: objects caught in reference cycles at exit are not finalised; our files are
    written through context managers and atexit hooks, which still run."""
    gc.set_threshold(20_000, 10, 10)
    try:
        app()
    finally:
        gc.freeze()
