"""The one check of every option's value, run before a command does any work.

Numbers are checked by name against ``NUMBERS`` (finite, in range, whole where they count
things), with ``OVERRIDES`` where a command means something else by the same name; text
options that hold numbers or regions (vectors, pins, pushes) by ``TEXTS``. Seconds and fps
together are held to ``limits.MAX_FRAMES``, and outputs' places by ``OUTPUTS``. Every
failure is one line naming the option, before any model is loaded or any file is written.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError, UsageError
from ..limits import (
    DEVICES,
    GLTF_ENCODINGS,
    HANDLES,
    INTEGRATORS,
    MATERIAL,
    MAX_BONES,
    MAX_FPS,
    MAX_FRAMES,
    MAX_SECONDS,
    MAX_SEED,
    MAX_SIZE_M,
    MAX_TARGETS,
    MIN_SIZE_M,
    TARGETS,
    Range,
    check_frames,
)

INF = math.inf
WHOLE_MAX = 10**9  # counts with no tighter natural bound

NUMBERS: dict[str, Range] = {
    "seconds": Range(0.0, MAX_SECONDS, lo_open=True),
    "fps": Range(0.0, MAX_FPS, lo_open=True),
    **MATERIAL,
    "strain_limit": Range(0.0, 10.0, inf_ok=True),
    "size": Range(MIN_SIZE_M, MAX_SIZE_M),
    "drop": Range(0.0, 100.0),
    # a height in the file's own units (which may be mm): finite; scenario/placement.py also refuses
    # one more than MAX_GROUND_DISTANCE sizes from the asset
    "ground_at": Range(-1e9, 1e9),
    "friction": Range(0.0, 10.0),
    "gust": Range(0.0, 1.0),
    "seed": Range(0, MAX_SEED, whole=True),
    "samples": Range(1, 10_000_000, whole=True),
    "count": Range(1, 10_000_000, whole=True),
    "workers": Range(1, 256, whole=True),
    "interior_pins": Range(0.0, 1.0),
    "max_vertices": Range(100, 100_000, whole=True),
    "steps": Range(1, 100_000, whole=True),
    "points": Range(16, 1_000_000, whole=True),
    "pairs": Range(1, 1_000_000, whole=True),
    "objects": Range(1, 1_000_000, whole=True),
    "rollouts": Range(0, 1_000_000, whole=True),
    "per_category": Range(1, 1_000_000, whole=True),
    "prior_pairs": Range(1, 1_000_000, whole=True),
    "batch": Range(1, 65_536, whole=True),
    "lr": Range(0.0, 1.0, lo_open=True),
    "minutes": Range(0.0, 1e6, lo_open=True),
    "val_every": Range(1, WHOLE_MAX, whole=True),
    "ckpt_every": Range(1, WHOLE_MAX, whole=True),
    "width": Range(16, 8192, whole=True),
    "height": Range(16, 8192, whole=True),
    "azimuth": Range(-360.0, 360.0),
    "elevation": Range(-90.0, 90.0),
    "at": Range(0.0, MAX_SECONDS),
    "bones": Range(1, MAX_BONES, whole=True),
    "handles": Range(*HANDLES, whole=True),
    "max_targets": Range(1, MAX_TARGETS, whole=True),
}

# (command function, option) -> its own range where the shared name means something else
OVERRIDES: dict[tuple[str, str], Range] = {
    ("animate", "samples"): Range(1, 64, whole=True),
    ("preview", "fps"): Range(0.0, 240.0, lo_open=True),
    ("train", "steps"): Range(1, WHOLE_MAX, whole=True),
    ("train", "workers"): Range(0, 256, whole=True),
}


def _vector(flag: str, value: str) -> None:
    from ..scenario.conditions import parse_vector

    parse_vector(value, flag)


def _pins(flag: str, value: list[str]) -> None:
    from ..scenario.conditions import check_region

    for expr in value:
        check_region(expr, flag)


def _pushes(flag: str, value: list[str]) -> None:
    from ..scenario.conditions import parse_impulse

    for text in value:
        parse_impulse(text)


def _encoding(flag: str, value: str) -> None:
    if value not in GLTF_ENCODINGS:
        raise UsageError(f"unknown {flag} {value!r}; choose one of {', '.join(GLTF_ENCODINGS)}")


def _method(flag: str, value: str) -> None:
    if value not in INTEGRATORS:
        raise UsageError(f"unknown {flag} {value!r}; choose one of {', '.join(INTEGRATORS)}")


def _device(flag: str, value: str) -> None:
    """auto and cpu always; cuda (cuda:N) only where torch sees that device."""
    if value in ("auto", "cpu"):
        return
    if not (value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit())):
        raise UsageError(f"unknown device {value!r} ({flag}); choose one of {', '.join(DEVICES)} "
                         "(or cuda:N)")
    from ..model.bundle import resolve_device  # (torch: only for a device asked by name)

    resolve_device(value)


def _weights(flag: str, value: str) -> None:
    from ..deform.learned.weights import resolve_weights

    resolve_weights(value)


TEXTS: dict[str, Callable[[str, Any], None]] = {
    "gravity": _vector, "velocity": _vector, "spin": _vector, "wind": _vector,
    "pin": _pins, "push": _pushes, "encoding": _encoding, "method": _method,
    "device": _device, "weights": _weights,
}


def _motion_output(flag: str, value: Path, values: dict[str, Any]) -> None:
    from ..render.export import check_output

    fmt = check_output(value, values.get("fmt"), renderer=values.get("renderer"))
    if values.get("meshopt") and fmt not in ("glb", "gltf"):
        raise UsageError(f"--meshopt compresses glTF output (.glb, .gltf), not {fmt}")


def _gltf_output(flag: str, value: Path, values: dict[str, Any]) -> None:
    if value.suffix.lower() not in (".glb", ".gltf"):
        raise UsageError(f"{value}: convert writes glTF; use .glb or .gltf")
    _file_output(flag, value, values)


def _file_output(flag: str, value: Path, values: dict[str, Any]) -> None:
    from ..io.atomic import check_file_output

    check_file_output(value)


def _folder_output(flag: str, value: Path, values: dict[str, Any]) -> None:
    from ..io.atomic import parent_folder

    if not value.is_dir():
        parent_folder(value)


INPUTS = ("file", "observed", "rest")  # parameters that name files a command reads

# (command function, option) -> a check of the place an output goes, before any work
OUTPUTS: dict[tuple[str, str], Callable[[str, Path, dict[str, Any]], None]] = {
    ("animate", "output"): _motion_output,
    ("simulate", "output"): _motion_output,
    ("fit", "output"): _file_output,
    ("fit", "then_animate"): _motion_output,
    ("preview", "output"): _file_output,
    ("convert", "output"): _gltf_output,
    ("evaluate", "json_path"): _file_output,
    ("evaluate", "plot"): _file_output,
    ("generate_cmd", "out_dir"): _folder_output,
    ("import_cmd", "out_dir"): _folder_output,
}


def flag(name: str) -> str:
    """The command-line spelling of a parameter: seconds -> --seconds."""
    return "--" + name.replace("_", "-")


def rule(command: str, name: str) -> Range | None:
    """The range of option ``name`` of ``command`` (its function's name), if it has one."""
    return OVERRIDES.get((command, name), NUMBERS.get(name))


def ranged(help_text: str, name: str, command: str = "") -> str:
    """``help_text`` with the option's range, e.g. 'Random seed (a whole number from 0 to
    4,294,967,295).'"""
    r = rule(command, name)
    return f"{help_text.rstrip('.')} ({r.text()})." if r else help_text


FRAMES_NOTE = f"seconds x fps: at most {MAX_FRAMES:,} frames"


def check_options(command: str, values: dict[str, Any]) -> None:
    """Check every option ``command`` was given (its parameters by name)."""
    for name, value in values.items():
        if value is None:
            continue
        r = rule(command, name)
        if r is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            r.require(flag(name), value)
        elif name in TEXTS and isinstance(value, (str, list, tuple)):
            TEXTS[name](flag(name), value)
    _encoding_options(values)
    seconds, fps = values.get("seconds"), values.get("fps")
    if isinstance(seconds, float) and isinstance(fps, float):
        check_frames(seconds, fps)
    for (cmd, name), check in OUTPUTS.items():  # first: what is missing to write it
        if cmd == command and isinstance(values.get(name), Path):
            _not_an_input(flag(name), values[name], values)
            check(flag(name), values[name], values)
    for name in INPUTS:  # here, before the command imports what it works with (seconds)
        given = values.get(name)
        if isinstance(given, Path) and not given.exists():
            raise InputError(f"{given}: no such file")


def _encoding_options(values: dict[str, Any]) -> None:
    """Refuse an encoding's option given for another encoding (it was ignored silently)."""
    encoding = values.get("encoding")
    if not isinstance(encoding, str):
        return
    if values.get("bones") is not None and encoding != "bones":
        raise UsageError(f"--bones sets the bones encoding's joints, but --encoding is "
                         f"{encoding}: add --encoding bones, or leave --bones out")
    if encoding == "bones" and values.get("max_targets") not in (None, TARGETS):
        raise UsageError("--max-targets bounds the morph targets of the compact encoding, "
                         "but --encoding is bones: leave --max-targets out")


def _not_an_input(flag: str, output: Path, values: dict[str, Any]) -> None:
    """Refuse an output that is one of the command's input files: it would be lost."""
    for name in INPUTS:
        given = values.get(name)
        if isinstance(given, Path) and given.is_file() and output.exists() \
                and output.resolve() == given.resolve():
            raise UsageError(f"{flag} {output} is the input itself, which would be lost; "
                             "choose another name (or leave it out for a new one beside it)")
