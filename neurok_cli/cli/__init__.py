"""The ``neurok`` command line: each command lives in its own module and only orchestrates."""

from __future__ import annotations

import typer

from .. import __version__
from .animate import animate
from .dataset import dataset_app
from .evaluate import calibrate, evaluate
from .fit import fit
from .info import info
from .preview import preview
from .simulate import simulate
from .train import train

app = typer.Typer(
    name="neurok",
    help="Turn a static 3D asset into physically plausible 4D animation.\n\n"
         "Start with:  neurok animate chair.glb  then  neurok preview chair_animated.glb",
    no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(animate)
app.command()(calibrate)
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
    """Console-script entry point."""
    app()
