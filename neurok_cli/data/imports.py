"""Importing external 4D data into the dataset format.

Three sources, each read by one importer that returns :class:`Sequence` objects:

- animated glTF/GLB (morph targets, node motion): one sequence per animation, metres, +Y up;
- OBJ/PLY frame folders (``name_0000.obj`` ...): unitless, ``up`` and ``size`` say how to read them;
- DeformingThings4D ``.anime`` files: unitless, as frame folders.

Sequences live on the *welded* surface (see :func:`neurok_cli.io.mesh.weld`): UV seams and
split normals duplicate file vertices, but the model deforms one surface. Each welded vertex
follows one representative file vertex (the first one merged into it).

:func:`import_path` finds the sources in a file or folder, writes one ``.npz`` per sequence into
a split folder and creates or updates ``dataset.json``; existing sequences are skipped, so an
interrupted import resumes where it stopped.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, OutputError, UsageError
from ..io.asset import Welded
from ..io.atomic import remove_partials
from ..io.mesh import Z_UP_TO_Y_UP
from .format import (
    HEADER,
    SPLITS,
    Header,
    Sequence,
    read_header,
    save_sequence,
    split_dir,
    write_header,
)

if TYPE_CHECKING:
    from ..io.gltf.doc import GltfDocument

DEFAULT_FPS = 30.0
UP_AXES = ("y", "z")
# (x, y, z) -> (x, z, -y): a Z-up file turned +Y up (the same rotation as io.mesh uses)
# a seam whose file vertices drift apart by more than this x rest diagonal is reported
SEAM_TOLERANCE = 1e-4


# --- shared steps ---------------------------------------------------------------------------
def _check_options(*, fps: float | None = None, up: str = "y", size: float | None = None) -> None:
    """Raise :class:`UsageError` for option values no importer accepts."""
    if fps is not None and not (np.isfinite(fps) and fps > 0):
        raise UsageError(f"«fps» must be a positive number of frames per second, not {fps}")
    if up not in UP_AXES:
        raise UsageError(f"«up» must be one of {', '.join(UP_AXES)}, not {up!r}")
    if size is not None and not (np.isfinite(size) and size > 0):
        raise UsageError(f"«size» must be a positive length in metres, not {size}")


def _on_welded(welded: Welded, frames: np.ndarray) -> tuple[np.ndarray, float]:
    """File-vertex frames (T, N, 3) -> welded frames (T, M, 3), and the largest seam gap.

    The gap is how far apart file vertices merged into one welded vertex move (file units).
    """
    _, rep = np.unique(welded.index, return_index=True)  # (M,) first file vertex of each
    out = frames[:, rep]
    gap = float(np.abs(frames - out[:, welded.index]).max()) if frames.size else 0.0
    return out, gap


def _units(rest: np.ndarray, frames: np.ndarray, *, up: str, size: float | None
           ) -> tuple[np.ndarray, np.ndarray, float]:
    """Turn unitless positions +Y up and scale the rest's largest extent to ``size`` metres.

    Returns rest (N, 3), frames (T, N, 3) and the scale applied (metres per file unit).
    """
    if up == "z":
        rest, frames = rest @ Z_UP_TO_Y_UP.T, frames @ Z_UP_TO_Y_UP.T
    scale = 1.0
    if size is not None:
        extent = float(np.ptp(rest, axis=0).max())
        scale = size / extent if extent > 0 else 1.0
    return rest * scale, frames * scale, scale


def _sequence(name: str, rest: np.ndarray, faces: np.ndarray, frames: np.ndarray, fps: float,
              meta: dict, gap: float) -> Sequence:
    diag = float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0
    if gap > SEAM_TOLERANCE * diag:
        meta["seam_gap"] = round(gap / diag, 6)  # relative to the rest's diagonal
    seq = Sequence(rest_vertices=rest.astype(np.float32), faces=faces.astype(np.int32),
                   frames=frames.astype(np.float32), fps=float(fps), meta=meta)
    seq.require_consistent(name)
    return seq


# --- glTF -----------------------------------------------------------------------------------
def _sample_gltf(path: Path, index: int, fps: float | None):
    """Sample animation ``index``: at ``fps``, else at its keys if evenly spaced, else 30 fps."""
    from ..io.gltf import read_animated

    scene = read_animated(path, fps=fps, animations=[index])
    if fps is not None:
        return scene, fps
    step = np.diff(scene.times)
    if len(step) and step.min() > 0 and np.ptp(step) <= 0.01 * step.mean():
        return scene, round(1.0 / float(step.mean()), 3)
    if not len(step):  # a single key: one pose
        return scene, DEFAULT_FPS
    return read_animated(path, fps=DEFAULT_FPS, animations=[index]), DEFAULT_FPS


def _gltf_sequences(path: Path, fps: float | None, which: list[int] | None) -> list[Sequence]:
    from ..io.mesh import load_mesh

    asset = load_mesh(path)
    count = _gltf_animation_count(path, asset.document)
    welded = asset.welded()
    seqs = []
    for i in which if which is not None else range(count):
        scene, rate = _sample_gltf(path, i, fps)
        frames = scene.frames  # (T, N, 3) file vertices, metres, +Y up
        if frames.shape[1] != len(welded.index):
            raise InputError(f"{path}: animation {i} moves {frames.shape[1]} vertices but the "
                             f"mesh has {len(welded.index)}; re-export the file")
        wf, gap = _on_welded(welded, frames)
        meta = {"source": "import", "format": "gltf", "file": path.name,
                "animation": scene.animation_names[0], "animation_index": i}
        seqs.append(_sequence(f"{path} animation {i}", welded.vertices, welded.faces, wf, rate,
                              meta, gap))
    return seqs


def _gltf_animation_count(path: Path, doc: GltfDocument | None = None) -> int:
    """How many animations the glTF at ``path`` holds (``doc``: it, already read)."""
    if doc is None:
        from ..io.gltf.doc import load_document

        doc = load_document(path)
    count = len(doc.gltf.animations)
    if count == 0:
        raise InputError(f"{path}: has no animations, so there is no motion to import; "
                         "use an animated glTF")
    return count


def import_gltf(path: str | Path, *, fps: float | None = None) -> list[Sequence]:
    """One sequence per animation of an animated glTF/GLB (metres, +Y up, as glTF defines).

    Args:
        path: the .glb or .gltf file.
        fps: sampling rate; None samples at the keyframe times when they are evenly spaced,
            else at 30 fps.
    Returns:
        sequences with rest (M, 3) = the welded bind pose and frames (T, M, 3).
    """
    _check_options(fps=fps)
    return _gltf_sequences(Path(path), fps, None)


# --- OBJ/PLY frame folders ------------------------------------------------------------------
def import_frames(folder: str | Path, *, fps: float | None = None, up: str | None = None,
                  size: float | None = None) -> list[Sequence]:
    """One sequence from a folder of numbered OBJ/PLY frames sharing one topology.

    Args:
        folder: holds ``name_0000.obj`` ... (or .ply); the first frame is the rest.
        fps: frames per second. up: the files' up axis, "y" or "z" (turned to +Y up); each
            by default what the folder's frames.json records (our frame folders have one),
            else 30 and "y".
        size: largest extent of the rest in metres; None reads file units as metres.
    """
    from ..io.frames import frame_info, read_frames

    folder = Path(folder)
    recorded = frame_info(folder)
    fps = recorded.get("fps", DEFAULT_FPS) if fps is None else fps
    up = recorded.get("up", "y") if up is None else up
    _check_options(fps=fps, up=up, size=size)
    asset, frames = read_frames(folder)  # (T, N, 3) file vertices
    welded = asset.welded()
    wf, gap = _on_welded(welded, frames)
    rest, wf, scale = _units(welded.vertices, wf, up=up, size=size)
    meta = {"source": "import", "format": f"{asset.format} frames", "file": folder.name,
            "animation": folder.name, "up": up, "scale": scale}
    return [_sequence(str(folder), rest, welded.faces, wf, fps, meta, gap * scale)]


# --- DeformingThings4D .anime ---------------------------------------------------------------
def read_anime(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read a DeformingThings4D ``.anime`` file.

    Layout (little-endian): int32 nf, nv, nt; float32 frame-0 vertices (nv, 3); int32
    triangles (nt, 3); float32 offsets (nf - 1, nv, 3) of frames 1..nf-1 from frame 0.

    Returns:
        frames (nf, nv, 3) float64 in file units, and faces (nt, 3) int64.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    data = path.read_bytes()
    if len(data) < 12:
        raise InputError(f"{path}: truncated .anime file ({len(data)} bytes; the header alone "
                         "is 12); re-download or re-export it")
    nf, nv, nt = struct.unpack("<3i", data[:12])
    if nf < 1 or nv < 3 or nt < 1:
        raise InputError(f"{path}: corrupt .anime header ({nf} frames, {nv} vertices, {nt} "
                         "triangles); is it a DeformingThings4D file?")
    need = 12 + 4 * (3 * nv + 3 * nt + 3 * nv * (nf - 1))
    if len(data) != need:
        what = "truncated" if len(data) < need else "corrupt (extra bytes)"
        raise InputError(f"{path}: {what}: {len(data):,} bytes, but {nf} frames of {nv} "
                         f"vertices and {nt} triangles need {need:,}; re-download or re-export it")
    v0 = np.frombuffer(data, "<f4", 3 * nv, 12).reshape(nv, 3)
    faces = np.frombuffer(data, "<i4", 3 * nt, 12 + 12 * nv).reshape(nt, 3).astype(np.int64)
    offsets = np.frombuffer(data, "<f4", 3 * nv * (nf - 1), 12 + 12 * nv + 12 * nt)
    if faces.min() < 0 or faces.max() >= nv:
        raise InputError(f"{path}: corrupt: triangle indices outside its {nv} vertices")
    frames = np.concatenate([v0[None], v0[None] + offsets.reshape(nf - 1, nv, 3)])
    if not np.isfinite(frames).all():
        raise InputError(f"{path}: corrupt: positions contain NaN or infinity")
    return frames.astype(np.float64), faces


def import_anime(path: str | Path, *, fps: float | None = None, up: str | None = None,
                 size: float | None = None) -> list[Sequence]:
    """One sequence from a DeformingThings4D ``.anime`` file (frame 0 is the rest).

    ``fps``, ``up`` and ``size`` as in :func:`import_frames` (defaults 30 and "y").
    """
    from ..io.mesh import weld

    fps, up = DEFAULT_FPS if fps is None else fps, "y" if up is None else up
    _check_options(fps=fps, up=up, size=size)
    path = Path(path)
    frames, faces = read_anime(path)
    welded = weld(frames[0], faces)
    wf, gap = _on_welded(welded, frames)
    rest, wf, scale = _units(welded.vertices, wf, up=up, size=size)
    meta = {"source": "import", "format": "anime", "file": path.name, "animation": path.stem,
            "up": up, "scale": scale}
    return [_sequence(str(path), rest, welded.faces, wf, fps, meta, gap * scale)]


# --- finding sources and writing a dataset ---------------------------------------------------
@dataclass
class ImportReport:
    """What :func:`import_path` did. ``sources`` maps each source (relative to the import
    root) to its counts; ``files`` are the written sequences relative to ``out``."""

    out: Path
    split: str
    category: str
    imported: int = 0
    skipped: int = 0
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _is_frame_folder(folder: Path) -> bool:
    from ..io.frames import frame_files

    try:
        frame_files(folder)
    except InputError:
        return False
    return True


def find_sources(src: str | Path, *, exclude: Path | None = None) -> list[tuple[str, Path]]:
    """``(kind, path)`` of every importable source in ``src``, sorted: the file itself, the
    frame folder itself, or everything below a folder (``exclude`` is not searched)."""
    src = Path(src)
    if not src.exists():
        raise InputError(f"{src}: no such file or folder")
    if src.is_file():
        kind = SUFFIX_KINDS.get(src.suffix.lower())
        if kind is None:
            raise InputError(f"{src}: cannot import '{src.suffix or src.name}' files; give a "
                             f"{', '.join(SUFFIX_KINDS)} file, a folder of numbered OBJ/PLY "
                             "frames, or a folder of these")
        return [(kind, src)]
    if _is_frame_folder(src):
        return [("frames", src)]
    found: list[tuple[str, Path]] = []
    for p in sorted(src.iterdir()):
        if p.name.startswith(".") or (exclude is not None and p.resolve() == exclude):
            continue
        if p.is_dir():
            found += find_sources(p, exclude=exclude)
        elif p.suffix.lower() in SUFFIX_KINDS:
            found.append((SUFFIX_KINDS[p.suffix.lower()], p))
    return found


def _stems(sources: list[tuple[str, Path]], root: Path) -> list[str]:
    """Output names: the source's stem, or its path below ``root`` where stems collide."""
    def clean(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", s)

    def name(p: Path) -> str:
        return p.stem if p.is_file() else p.name

    stems = [clean(name(p)) for _, p in sources]
    dup = {s for s in stems if stems.count(s) > 1}
    return [clean("_".join([*_relative(p, root).parent.parts, name(p)])) if s in dup else s
            for s, (_, p) in zip(stems, sources)]


def _relative(path: Path, root: Path) -> Path:
    return path.relative_to(root) if root.is_dir() and path != root else Path(path.name)


def _output_names(kind: str, path: Path, stem: str) -> list[str]:
    if kind != "gltf":
        return [stem]
    count = _gltf_animation_count(path)
    return [stem] if count == 1 else [f"{stem}_{i}" for i in range(count)]


def _open_header(out: Path, options: dict) -> tuple[Header, bool]:
    """The existing header of ``out`` (checked), or a new one; and whether it is new."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a folder; give a dataset folder")
    if (out / HEADER).exists():
        return read_header(out), False
    return Header(generator={"command": "dataset import", **options}), True


def import_path(src: str | Path, out: str | Path, *, split: str = "train",
                category: str | None = None, fps: float | None = None, up: str | None = None,
                size: float | None = None,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import a glTF/GLB, ``.anime`` file, frame folder, or a folder of many into ``out``.

    Each sequence goes to ``out/<split>/<stem>[_<i>].npz`` (``_<i>`` for glTF files with several
    animations); sequences already there are skipped. ``dataset.json`` is created, or its
    counts are merged. ``up`` and ``size`` apply to unitless sources (frames, .anime); glTF is
    metres, +Y up. ``fps`` None: glTF keyframe rate (else 30), a frame folder's frames.json
    (else 30), 30 for .anime; ``up`` None: a frame folder's frames.json, else "y".
    ``progress(done, total)`` is called after each source.
    """
    _check_options(fps=fps, up=up or "y", size=size)
    if split not in SPLITS:
        raise UsageError(f"«split» must be one of {', '.join(SPLITS)}, not {split!r}")
    category = category or "imported"
    src, out = Path(src), Path(out)
    sources = find_sources(src, exclude=out.resolve())
    if not sources:
        raise InputError(f"{src}: found no .glb, .gltf, .anime files or numbered OBJ/PLY frame "
                         "folders to import")
    if src.is_file() and sources[0][0] == "gltf" and (up not in (None, "y") or size is not None):
        raise UsageError(f"{src}: glTF is metres and +Y up; «up» and «size» apply to OBJ/PLY "
                         "frames and .anime files only")
    options = {"source": str(src), "split": split, "category": category, "fps": fps, "up": up,
               "size": size}
    header, new = _open_header(out, options)
    folder = split_dir(out, split)
    remove_partials(folder)  # what a run killed inside a write left
    report = ImportReport(out=out, split=split, category=category)
    try:
        for done, ((kind, path), stem) in enumerate(zip(sources, _stems(sources, src)), 1):
            _import_one(kind, path, stem, folder, src, report, fps=fps, up=up, size=size)
            if progress:
                progress(done, len(sources))
    finally:  # count what was written even if a later source fails, so a rerun resumes right
        if report.imported or new:
            counts = header.counts.setdefault(split, {})
            counts[category] = counts.get(category, 0) + report.imported
            header.extra.setdefault("imports", []).append({**options,
                                                           "imported": report.imported})
            write_header(out, header)
    return report


def _import_one(kind: str, path: Path, stem: str, folder: Path, root: Path,
                report: ImportReport, **opts) -> None:
    """Import one source into ``folder``, skipping the sequences already there."""
    rel = _relative(path, root).as_posix()
    names = _output_names(kind, path, stem)
    missing = [i for i, n in enumerate(names) if not (folder / f"{n}.npz").exists()]
    stats = report.sources.setdefault(rel, {"imported": 0, "skipped": 0})
    stats["skipped"] += len(names) - len(missing)
    report.skipped += len(names) - len(missing)
    if not missing:
        return
    if kind == "gltf":
        seqs = _gltf_sequences(path, opts["fps"], missing)
    else:  # each importer fills in what the options leave open (None)
        seqs = IMPORTERS[kind](path, fps=opts["fps"], up=opts["up"], size=opts["size"])
    for i, seq in zip(missing, seqs):
        seq.meta.update(file=rel, category=report.category)
        if "seam_gap" in seq.meta:
            report.warnings.append(f"{rel}: seams open by up to {seq.meta['seam_gap']:.2g} of "
                                   "the size in motion; each welded vertex follows one of them")
        save_sequence(seq, folder / f"{names[i]}.npz")
        report.files.append(f"{report.split}/{names[i]}.npz")
        stats["imported"] += 1
        report.imported += 1


# file suffix -> source kind; source kind -> importer(path, **options) -> list[Sequence]
SUFFIX_KINDS = {".glb": "gltf", ".gltf": "gltf", ".anime": "anime"}
IMPORTERS: dict[str, Callable[..., list[Sequence]]] = {
    "gltf": import_gltf, "frames": import_frames, "anime": import_anime}
