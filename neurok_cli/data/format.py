"""The 4D dataset format (version 1): what ``neurok dataset`` writes and ``neurok train`` reads.

A dataset is a folder::

    dataset.json            header: format, version, generator, engine, counts, rejections
    train/<id>.npz          one sequence per file, split by folder
    val/<id>.npz
    test/<id>.npz           shape families never seen in train/val

Each ``.npz`` holds ``rest_vertices (N, 3) f32``, ``faces (F, 3) i32``, ``frames (T, N, 3) f32``,
``fps ()``, ``gravity (3,) f32`` and ``meta`` (a JSON string: category, shape family and
source, material, conditions, engine). Coordinates are metres, +Y up, the ground (if any) at
y = 0.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io.atomic import atomic_path

FORMAT = "neurok-4d"
VERSION = 1
SPLITS = ("train", "val", "test")
HEADER = "dataset.json"


@dataclass
class Sequence:
    """One 4D sequence: a rest mesh and its vertex positions over time (metres, +Y up)."""

    rest_vertices: np.ndarray  # (N, 3) float32
    faces: np.ndarray  # (F, 3) int32
    frames: np.ndarray  # (T, N, 3) float32
    fps: float
    gravity: np.ndarray = field(default_factory=lambda: np.array([0, -9.81, 0], np.float32))
    meta: dict = field(default_factory=dict)

    def require_consistent(self, name: str = "sequence") -> None:
        """Raise :class:`InputError` if arrays are inconsistent or not finite."""
        n = len(self.rest_vertices)
        if self.rest_vertices.ndim != 2 or self.rest_vertices.shape[1] != 3 or n == 0:
            raise InputError(f"{name}: rest_vertices must be (N, 3), got "
                             f"{self.rest_vertices.shape}")
        if self.frames.ndim != 3 or self.frames.shape[1:] != (n, 3) or len(self.frames) == 0:
            raise InputError(f"{name}: frames must be (T, {n}, 3), got {self.frames.shape}")
        if self.faces.ndim != 2 or self.faces.shape[1] != 3 or len(self.faces) == 0:
            raise InputError(f"{name}: faces must be (F, 3), got {self.faces.shape}")
        if self.faces.min() < 0 or self.faces.max() >= n:
            raise InputError(f"{name}: face indices outside the {n} vertices")
        if not (np.isfinite(self.frames).all() and np.isfinite(self.rest_vertices).all()):
            raise InputError(f"{name}: positions contain NaN or infinity")
        if not (np.isfinite(self.fps) and self.fps > 0):
            raise InputError(f"{name}: fps must be positive, got {self.fps}")


def save_sequence(seq: Sequence, path: str | Path) -> None:
    """Write one sequence as a compressed .npz, atomically."""
    seq.require_consistent(str(path))
    buf = io.BytesIO()
    np.savez_compressed(
        buf, rest_vertices=seq.rest_vertices.astype(np.float32),
        faces=seq.faces.astype(np.int32), frames=seq.frames.astype(np.float32),
        fps=np.float32(seq.fps), gravity=np.asarray(seq.gravity, np.float32),
        meta=np.array(json.dumps(seq.meta, sort_keys=True)))
    with atomic_path(path) as tmp:
        tmp.write_bytes(buf.getvalue())


def load_sequence(path: str | Path) -> Sequence:
    """Read and check one sequence file (no pickles are ever loaded)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = {"rest_vertices", "faces", "frames", "fps"} - set(z.files)
            if missing:
                raise InputError(f"{path}: not a 4D sequence "
                                 f"(missing {', '.join(sorted(missing))})")
            seq = Sequence(rest_vertices=z["rest_vertices"], faces=z["faces"],
                           frames=z["frames"], fps=float(z["fps"]),
                           gravity=z["gravity"] if "gravity" in z.files
                           else np.array([0, -9.81, 0], np.float32),
                           meta=json.loads(str(z["meta"])) if "meta" in z.files else {})
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:  # corrupt npz
        raise InputError(f"{path}: cannot read sequence ({e.__class__.__name__}: {e})") from e
    seq.require_consistent(str(path))
    return seq


@dataclass
class Header:
    """``dataset.json``: what made the dataset and what it holds."""

    format: str = FORMAT
    version: int = VERSION
    generator: dict = field(default_factory=dict)  # command, seed, options
    engine: dict = field(default_factory=dict)  # name and version of the physics engine
    counts: dict = field(default_factory=dict)  # split -> category -> sequences
    rejected: dict = field(default_factory=dict)  # reason -> count
    extra: dict = field(default_factory=dict)


def write_header(folder: str | Path, header: Header) -> None:
    """Write ``dataset.json`` atomically."""
    with atomic_path(Path(folder) / HEADER) as tmp:
        tmp.write_text(json.dumps(asdict(header), indent=2, sort_keys=True) + "\n")


def read_header(folder: str | Path) -> Header:
    """Read ``dataset.json``, checking format and version."""
    path = Path(folder) / HEADER
    if not path.is_file():
        raise InputError(f"{folder}: not a 4D dataset (no {HEADER}); make one with "
                         "`neurok dataset generate` or `neurok dataset import`")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: corrupt JSON ({e})") from e
    if data.get("format") != FORMAT:
        raise InputError(f"{path}: format {data.get('format')!r} is not {FORMAT!r}")
    if data.get("version") != VERSION:
        raise InputError(f"{path}: dataset version {data.get('version')} is not supported "
                         f"(this neurok reads version {VERSION})")
    known = Header.__dataclass_fields__
    return Header(**{k: v for k, v in data.items() if k in known})


def is_sequence_file(path: Path) -> bool:
    """A visible ``.npz``: hidden files, such as what an interrupted write leaves
    (``.NAME.XXXXXXXX.part.npz``), are never sequences."""
    return path.suffix == ".npz" and not path.name.startswith(".") and path.is_file()


def sequence_files(folder: str | Path, split: str | None = None) -> list[Path]:
    """Sequence files of one split (or all), sorted by name (see is_sequence_file)."""
    folder = Path(folder)
    splits = SPLITS if split is None else (split,)
    if split is not None and split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    return sorted(p for s in splits if (folder / s).is_dir() for p in (folder / s).iterdir()
                  if is_sequence_file(p))


def split_dir(folder: str | Path, split: str) -> Path:
    """The folder of one split, created if needed."""
    path = Path(folder) / split
    os.makedirs(path, exist_ok=True)
    return path
