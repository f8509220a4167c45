"""The command line's own mistakes (an unknown option, a word where a number is asked, a
missing argument) as every other mistake in the input is told: one line on stderr,
``neurok: error: ...``, and exit status 1 (README's troubleshooting table), not Typer's
boxed usage text."""

from __future__ import annotations

import sys
from typing import Any

from typer.core import TyperGroup
from typer.exceptions import TyperException


class OneLineErrors(TyperGroup):
    """A Typer group whose usage errors are one line each."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                              standalone_mode=False, **extra)
        except TyperException as e:  # (click's ClickException: a usage error)
            if not standalone_mode or not hasattr(e, "format_message"):
                raise
            if type(e).__name__ == "NoArgsIsHelpError":  # a bare command: its help, shown
                sys.stdout.write(str(e.format_message()))  # (Typer's rich help printed it)
                sys.exit(0)
            text = " ".join(str(e.format_message()).split())
            ctx = getattr(e, "ctx", None)
            where = ctx.command_path if ctx is not None else "neurok"
            sys.stderr.write(f"neurok: error: {text} ({where} -h lists the options)\n")
            sys.exit(1)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)
