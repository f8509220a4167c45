"""What a 4D dataset holds: counts, sizes, rates, materials, shape families, invalid files.

:func:`summarize` returns a JSON-ready dict; :func:`summary_tables` turns it into plain
(title, columns, rows) tables that the CLI renders. Without validation only the array headers,
``fps`` and ``meta`` of each file are read (no frame data is decompressed).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .format import SPLITS, load_sequence, read_header, sequence_files

MATERIAL_KEYS = ("young", "poisson", "density", "damping")


@dataclass
class SequenceFacts:
    """The few facts the summary needs from one sequence file."""

    split: str
    frames: int
    vertices: int
    faces: int
    fps: float
    meta: dict


def _npy_shape(zf: zipfile.ZipFile, key: str) -> tuple[int, ...]:
    """Shape of ``key`` from its .npy header only (the data stays compressed)."""
    with zf.open(f"{key}.npy") as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, _ = read(f)
    return shape


def _npy_value(zf: zipfile.ZipFile, key: str) -> np.ndarray:
    with zf.open(f"{key}.npy") as f:
        return np.lib.format.read_array(f, allow_pickle=False)


def _peek(path: Path) -> SequenceFacts:
    """Facts from the array headers, ``fps`` and ``meta`` (fast; checks little)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            missing = {"rest_vertices", "faces", "frames", "fps"} - {n[:-4] for n in names}
            if missing:
                raise InputError(f"{path}: not a 4D sequence (missing "
                                 f"{', '.join(sorted(missing))})")
            frames = _npy_shape(zf, "frames")
            faces = _npy_shape(zf, "faces")
            fps = float(_npy_value(zf, "fps"))
            meta = json.loads(str(_npy_value(zf, "meta"))) if "meta.npy" in names else {}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise InputError(f"{path}: cannot read sequence ({e.__class__.__name__}: {e})") from e
    if len(frames) != 3 or len(faces) != 2:
        raise InputError(f"{path}: frames must be (T, N, 3) and faces (F, 3), got {frames} "
                         f"and {faces}")
    return SequenceFacts(split=path.parent.name, frames=frames[0], vertices=frames[1],
                         faces=faces[0], fps=fps, meta=meta if isinstance(meta, dict) else {})


def _load(path: Path) -> SequenceFacts:
    """Facts from a full, checked load of the sequence."""
    try:
        seq = load_sequence(path)
    except (zipfile.BadZipFile, KeyError) as e:  # a cut zip: not every version wraps these
        raise InputError(f"{path}: cannot read sequence ({e.__class__.__name__}: {e})") from e
    return SequenceFacts(split=path.parent.name, frames=len(seq.frames),
                         vertices=len(seq.rest_vertices), faces=len(seq.faces), fps=seq.fps,
                         meta=seq.meta if isinstance(seq.meta, dict) else {})


def _facts(path: Path, validate: bool) -> SequenceFacts | str:
    """The facts of one file, or its one-line error."""
    try:
        return _load(path) if validate else _peek(path)
    except InputError as e:
        return " ".join(str(e).split())


def _stats(values: list[float]) -> dict | None:
    if not values:
        return None
    a = np.asarray(values, np.float64)
    return {"min": float(a.min()), "mean": float(a.mean()), "max": float(a.max())}


def _family(meta: dict) -> str | None:
    """A sequence's shape family: ``meta["family"]`` or ``meta["shape"]["family"]``."""
    shape = meta.get("shape")
    fam = meta.get("family") or (shape.get("family") if isinstance(shape, dict) else None)
    return str(fam) if fam is not None else None


def _aggregate(facts: list[SequenceFacts]) -> dict:
    counts: dict[str, dict[str, int]] = {}
    families: dict[str, dict[str, int]] = {}
    fps: dict[str, int] = {}
    material: dict[str, list[float]] = {k: [] for k in MATERIAL_KEYS}
    for f in facts:
        cat = str(f.meta.get("category", "unknown"))
        split_counts = counts.setdefault(f.split, {})
        split_counts[cat] = split_counts.get(cat, 0) + 1
        fam = _family(f.meta)
        if fam is not None:
            split_fams = families.setdefault(f.split, {})
            split_fams[fam] = split_fams.get(fam, 0) + 1
        key = f"{f.fps:.6g}"
        fps[key] = fps.get(key, 0) + 1
        mat = f.meta.get("material")
        for k in MATERIAL_KEYS:
            if isinstance(mat, dict) and isinstance(mat.get(k), (int, float)):
                material[k].append(float(mat[k]))
    seen = set(families.get("train", {})) | set(families.get("val", {}))
    seconds = [(f.frames - 1) / f.fps for f in facts if f.fps > 0]
    return {
        "counts": counts,
        "frames": _stats([f.frames for f in facts]),
        "vertices": _stats([f.vertices for f in facts]),
        "faces": _stats([f.faces for f in facts]),
        "fps": dict(sorted(fps.items(), key=lambda kv: float(kv[0]))),
        "seconds": _stats(seconds), "total_seconds": float(sum(seconds)),
        "material": {k: {"min": min(v), "max": max(v)} for k, v in material.items() if v},
        "families": {s: dict(sorted(families[s].items())) for s in SPLITS if s in families},
        "test_families_seen": sorted(set(families.get("test", {})) & seen),
    }


def summarize(folder: str | Path, *, validate: bool = True,
              progress: Callable[[int, int], None] | None = None,
              workers: int | None = None) -> dict:
    """Summarize the dataset in ``folder`` (JSON-ready).

    Args:
        validate: load and check every file in full (slower); without it only the array
            headers, fps and meta are read.
        progress: called as ``progress(done, total)`` while reading files.
        workers: reading threads (decompression releases the GIL); default up to 8.
    Returns:
        ``header`` (format, version, generator, engine, counts, rejected), ``sequences``,
        ``counts`` (split -> category -> n), ``frames``/``vertices``/``faces``/``seconds``
        (min, mean, max; seconds from first to last frame), ``fps`` (value -> n),
        ``material`` (key -> min, max), ``families`` (split -> family -> n),
        ``test_families_seen`` (test families also in train/val), ``invalid`` (file, error)
        and ``counts_match_header``.
    """
    folder = Path(folder)
    header = read_header(folder)
    files = sequence_files(folder)
    workers = workers or min(8, os.cpu_count() or 1)
    results: list[SequenceFacts | str] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for r in pool.map(lambda p: _facts(p, validate), files):
            results.append(r)
            if progress:
                progress(len(results), len(files))
    facts = [r for r in results if isinstance(r, SequenceFacts)]
    invalid = [{"file": p.relative_to(folder).as_posix(), "error": r}
               for p, r in zip(files, results) if isinstance(r, str)]
    summary = {
        "folder": str(folder), "validated": validate,
        "header": {"format": header.format, "version": header.version,
                   "generator": header.generator, "engine": header.engine,
                   "counts": header.counts, "rejected": header.rejected},
        "sequences": len(facts), "files": len(files),
        **_aggregate(facts), "invalid": invalid,
    }
    summary["counts_match_header"] = _counts_equal(header.counts, summary["counts"])
    return summary


def _counts_equal(a: dict, b: dict) -> bool:
    def clean(c: dict) -> dict:
        return {s: {k: v for k, v in cats.items() if v} for s, cats in c.items()
                if isinstance(cats, dict) and any(cats.values())}

    return clean(a) == clean(b)


@dataclass
class SummaryTable:
    """A plain table for display: title, column names, rows of strings."""

    title: str
    columns: list[str]
    rows: list[list[str]]


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:.4g}"


def summary_tables(summary: dict) -> list[SummaryTable]:
    """The summary as tables: sequences per category and split, sizes, materials, families,
    rejections and invalid files (empty tables are left out)."""
    counts = summary["counts"]
    splits = [*SPLITS, *sorted(set(counts) - set(SPLITS))]
    cats = sorted({c for s in counts.values() for c in s})
    rows = [[c, *(str(counts.get(s, {}).get(c, 0)) for s in splits),
             str(sum(counts.get(s, {}).get(c, 0) for s in splits))] for c in cats]
    rows.append(["total", *(str(sum(counts.get(s, {}).values())) for s in splits),
                 str(summary["sequences"])])
    tables = [SummaryTable("Sequences", ["category", *splits, "total"], rows)]
    sizes = [[name, _num(st["min"]), _num(st["mean"]), _num(st["max"])]
             for name, st in (("frames", summary["frames"]), ("vertices", summary["vertices"]),
                              ("faces", summary["faces"]), ("seconds", summary["seconds"]))
             if st is not None]
    if sizes:
        sizes.append(["fps", ", ".join(f"{v} ({n})" for v, n in summary["fps"].items()), "", ""])
        tables.append(SummaryTable("Sizes", ["", "min", "mean", "max"], sizes))
    if summary["material"]:
        tables.append(SummaryTable("Materials", ["", "min", "max"], [
            [k, f"{v['min']:.4g}", f"{v['max']:.4g}"] for k, v in summary["material"].items()]))
    if summary["families"]:
        fam_rows = [[s, str(len(f)), ", ".join(list(f)[:6]) + (" ..." if len(f) > 6 else "")]
                    for s, f in summary["families"].items()]
        if summary["test_families_seen"]:
            fam_rows.append(["test ∩ train/val", str(len(summary["test_families_seen"])),
                             ", ".join(summary["test_families_seen"][:6])])
        tables.append(SummaryTable("Shape families", ["split", "families", "names"], fam_rows))
    rejected = summary["header"]["rejected"]
    if rejected:
        tables.append(SummaryTable("Rejected while generating", ["reason", "sequences"],
                                   [[k, str(v)] for k, v in sorted(rejected.items())]))
    if summary["invalid"]:
        tables.append(SummaryTable("Invalid files", ["file", "error"],
                                   [[i["file"], i["error"]] for i in summary["invalid"]]))
    return tables
