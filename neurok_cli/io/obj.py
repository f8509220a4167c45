"""Wavefront OBJ (+ MTL and its base-colour texture) reader.

Written here rather than borrowed so that every malformed input gets a precise message (line
number, index out of range) and so that the file's own render vertices, split at UV and normal
seams, are kept exactly: export must preserve UVs and the texture.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import InputError
from .asset import Material, Part
from .colors import srgb_to_linear
from .refs import resolve_ref

_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def _floats(path: Path, lineno: int, toks: list[str], n: int) -> list[float]:
    try:
        return [float(t) for t in toks[1: 1 + n]]
    except ValueError as e:
        raise InputError(f"{path}:{lineno}: bad number in '{' '.join(toks)}'") from e


def _corner(path: Path, lineno: int, tok: str, counts: tuple[int, int, int]) -> tuple[int, ...]:
    """Parse 'v', 'v/vt', 'v//vn' or 'v/vt/vn' into zero-based (v, vt, vn), -1 when absent."""
    out = []
    for k, s in enumerate((tok.split("/") + ["", ""])[:3]):
        if not s:
            out.append(-1)
            continue
        try:
            i = int(s)
        except ValueError as e:
            raise InputError(f"{path}:{lineno}: bad face index '{tok}'") from e
        i = i - 1 if i > 0 else counts[k] + i  # OBJ is 1-based; negatives count back
        if not 0 <= i < counts[k]:
            what = ("vertex", "texture coordinate", "normal")[k]
            raise InputError(f"{path}:{lineno}: face refers to {what} {s}, "
                             f"but only {counts[k]} are defined before it")
        out.append(i)
    if out[0] < 0:
        raise InputError(f"{path}:{lineno}: face corner '{tok}' has no vertex index")
    return tuple(out)


def parse_obj(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, list], list[str]]:
    """Read positions (V, 3), uvs (VT, 2), normals (VN, 3), triangle corners per material.

    Returns corners as ``{material: [(v, vt, vn) * 3, ...]}`` and the MTL library names.
    """
    v, vt, vn = [], [], []
    groups: dict[str, list] = {}
    current = groups.setdefault("", [])
    mtllibs: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for lineno, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks:
            continue
        key = toks[0]
        if key == "v":
            v.append(_floats(path, lineno, toks, 3))
        elif key == "vt":
            vt.append((_floats(path, lineno, toks, 2) + [0.0])[:2])
        elif key == "vn":
            vn.append(_floats(path, lineno, toks, 3))
        elif key == "f":
            counts = (len(v), len(vt), len(vn))
            poly = [_corner(path, lineno, t, counts) for t in toks[1:]]
            if len(poly) < 3:
                raise InputError(f"{path}:{lineno}: face with fewer than 3 corners")
            for i in range(1, len(poly) - 1):  # fan triangulation of polygons
                current.append((poly[0], poly[i], poly[i + 1]))
        elif key == "usemtl":
            current = groups.setdefault(" ".join(toks[1:]), [])
        elif key == "mtllib" and len(toks) > 1:  # an empty one names nothing to read
            mtllibs.append(line.split(None, 1)[1].strip())
    for arr, n in ((v, 3), (vt, 2), (vn, 3)):
        if any(len(x) != n for x in arr):
            raise InputError(f"{path}: a 'v', 'vt' or 'vn' line has too few numbers")
    return (np.asarray(v, np.float64).reshape(-1, 3), np.asarray(vt, np.float32).reshape(-1, 2),
            np.asarray(vn, np.float32).reshape(-1, 3), groups, mtllibs)


def _unit_floats(path: Path, lineno: int, toks: list[str], n: int) -> list[float]:
    """``n`` numbers after the keyword, each finite and clipped to [0, 1] (colours, opacity)."""
    vals = _floats(path, lineno, toks, n)
    if not all(math.isfinite(x) for x in vals):
        raise InputError(f"{path}:{lineno}: '{' '.join(toks)}' is not a finite number")
    return [min(max(x, 0.0), 1.0) for x in vals]


def parse_mtl(path: Path, warnings: list[str]) -> dict[str, Material]:
    """Materials of an MTL file: Kd (+ d) as base colour, map_Kd as texture."""
    mats: dict[str, Material] = {}
    cur: Material | None = None
    text = path.read_text(encoding="utf-8", errors="replace")
    for lineno, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks:
            continue
        if toks[0] == "newmtl":
            cur = mats.setdefault(" ".join(toks[1:]), Material(name=" ".join(toks[1:])))
        elif cur is None:
            continue
        elif toks[0] == "Kd" and len(toks) >= 4:
            rgb = srgb_to_linear(np.array(_unit_floats(path, lineno, toks, 3)))
            cur.base_color = (*map(float, rgb), cur.base_color[3])
        elif toks[0] == "d" and len(toks) >= 2:
            cur.base_color = (*cur.base_color[:3], _unit_floats(path, lineno, toks, 1)[0])
        elif toks[0] == "map_Kd" and len(toks) >= 2:
            tex = resolve_ref(path, toks[-1], what=f"line {lineno} map_Kd", uri=False)
            mime = _MIME.get(tex.suffix.lower())
            if tex.is_file() and mime:
                cur.texture, cur.texture_mime = tex.read_bytes(), mime
            else:
                warnings.append(f"texture {tex} is missing or not PNG/JPEG; using colour only")
    return mats


def load_obj(path: Path) -> tuple[list[Part], list[str]]:
    """Parts of an OBJ file (one per material), with UVs, normals and materials."""
    warnings: list[str] = []
    v, vt, vn, groups, mtllibs = parse_obj(path)
    mats: dict[str, Material] = {}
    for lib in mtllibs:
        f = resolve_ref(path, lib, what="mtllib", uri=False)
        if f.is_file():
            mats.update(parse_mtl(f, warnings))
        else:
            warnings.append(f"material library {f} is missing; using a default material")
    parts = []
    for name, tris in groups.items():
        if not tris:
            continue
        corners = np.asarray(tris, np.int64).reshape(-1, 3)  # (3F, 3): v, vt, vn per corner
        uniq, inverse = np.unique(corners, axis=0, return_inverse=True)
        has_uv = bool((uniq[:, 1] >= 0).all()) and len(vt) > 0
        has_n = bool((uniq[:, 2] >= 0).all()) and len(vn) > 0
        parts.append(Part(
            name=name or path.stem,
            vertices=v[uniq[:, 0]],
            faces=inverse.reshape(-1, 3).astype(np.int64),
            uvs=(vt[uniq[:, 1]] * [1, -1] + [0, 1]).astype(np.float32) if has_uv else None,
            normals=vn[uniq[:, 2]] if has_n else None,
            material=mats.get(name) or (Material(name=name) if name else None),
        ))
    return parts, warnings
