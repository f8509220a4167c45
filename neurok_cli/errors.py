"""Errors the library raises for the user to read.

Every message names the file or option at fault and says what to do; the CLI prints it as one
line on stderr and exits with status 1.
"""

from __future__ import annotations


class NeurokError(Exception):
    """Base class of every error meant for the user (not a bug)."""


class InputError(NeurokError):
    """An input file is missing, unreadable, malformed or unsupported."""


class UsageError(NeurokError):
    """Options that contradict each other or name something that does not exist."""


class OutputError(NeurokError):
    """An output cannot be written (unknown format, unwritable place)."""


class DependencyError(NeurokError):
    """An optional dependency or system facility (EGL, ffmpeg) is missing."""
