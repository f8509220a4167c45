"""Errors the library raises for the user to read.

Every message names the file or quantity at fault and says what to do; the CLI prints it as one
line on stderr and exits with status 1.

A quantity the user sets is written between guillemets in a message: ``"«seconds» must be
> 0"``. ``str()`` of the error reads it as plain words ("seconds must be > 0"), for a caller of
the library; the CLI reads each through :meth:`NeurokError.render` as the flag its command
takes for it ("--seconds must be > 0"), so the library knows quantities, not flags
(``docs/design.md``, "Errors").
"""

from __future__ import annotations

import re
from collections.abc import Callable

QUANTITY = re.compile(r"«([a-z][a-z ]*)»")


def render_quantities(text: str, name: Callable[[str], str] = lambda q: q) -> str:
    """``text`` with each «quantity» replaced by ``name(quantity)`` (plain words by default)."""
    return QUANTITY.sub(lambda m: name(m.group(1)), text)


class NeurokError(Exception):
    """Base class of every error meant for the user (not a bug)."""

    def __str__(self) -> str:
        return render_quantities(super().__str__())

    def render(self, name: Callable[[str], str]) -> str:
        """The message with each «quantity» named by ``name`` (the CLI: its flag)."""
        return render_quantities(super().__str__(), name)


class InputError(NeurokError):
    """An input file is missing, unreadable, malformed or unsupported."""


class UsageError(NeurokError):
    """Options that contradict each other or name something that does not exist."""


class OutputError(NeurokError):
    """An output cannot be written (unknown format, unwritable place)."""


class DependencyError(NeurokError):
    """An optional dependency or system facility (EGL, ffmpeg) is missing."""
