"""Wavefront OBJ (+ MTL and its base-colour texture) reader.

Written here rather than borrowed so that every malformed input gets a precise message (line
number, index out of range) and so that the file's own render vertices, split at UV and normal
seams, are kept exactly: export must preserve UVs and the texture.
"""

from __future__ import annotations

import math
import re
import warnings
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


def parse_obj(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray],
                                   list[str]]:
    """Read positions (V, 3), uvs (VT, 2), normals (VN, 3) and triangle corners per material.

    Returns corners as ``{material: (T, 3, 3) int64}`` (per triangle and corner: zero-based
    v, vt, vn, -1 where absent) and the MTL library names. A file whose face corners share
    one format is converted with whole-array operations (a 100k-vertex sphere: 1.9 s ->
    0.3 s); any other file, and any file with a mistake, is read line by line, which names
    the line at fault. The commonest files (positions, maybe normals and UVs, then faces, one
    material, no negative index) are read from the whole text at once, the records told
    apart by their first bytes and parsed by numpy (a 100k-vertex sphere: 0.85-1.2 s ->
    0.15 s).
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    read = _whole_text(text)
    if read is not None:
        return read
    lines = _Lines()
    for lineno, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if toks:
            lines.add(lineno, toks, line)
    read = lines.arrays()
    return read if read is not None else _parse_line_by_line(path, text)


_KEYS = {b"v": 1, b"vt": 2, b"vn": 3, b"f": 4}  # the records read from the whole text
_SKIPPED = (b"#", b"o", b"g", b"s", b"mtllib")  # lines that do not change what is read
_SPACE = np.zeros(256, bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # line ends besides \n and \r


def _whole_text(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                    dict[str, np.ndarray], list[str]] | None:
    """What :func:`parse_obj` returns for a file of v, vt and vn records, then faces in one
    corner format with positive indices, one material, and besides them only comments,
    object, group, smoothing and mtllib lines; None for any other file. The records are
    told apart by their first bytes and their numbers parsed by numpy, not line by line."""
    if any(c in text for c in _OTHER_BREAKS):
        return None  # str.splitlines, which the line reader uses, ends lines there too
    b = np.frombuffer(text.encode("utf-8"), np.uint8)
    starts = np.r_[0, np.flatnonzero(b == 10) + 1]
    starts = starts[starts < len(b)]
    pad = np.r_[b, 10, 10, 10]  # the bytes after a line's start, also at the end
    c0, c1, c2 = pad[starts], pad[starts + 1], pad[starts + 2]
    kind = np.zeros(len(starts), np.int8)
    kind[(c0 == ord("v")) & _SPACE[c1]] = 1
    kind[(c0 == ord("v")) & (c1 == ord("t")) & _SPACE[c2]] = 2
    kind[(c0 == ord("v")) & (c1 == ord("n")) & _SPACE[c2]] = 3
    kind[(c0 == ord("f")) & _SPACE[c1]] = 4
    mtllibs = []
    ends = np.r_[starts[1:], len(b)]
    for i in np.flatnonzero((kind == 0) & ~_SPACE[c0]):  # the few other lines
        head = b[starts[i]:ends[i]].tobytes().decode("utf-8", errors="replace").split(None, 1)
        if not head[0].startswith("#") and head[0].encode() not in _SKIPPED:
            return None  # usemtl, or a record this does not read: line by line
        if head[0] == "mtllib" and len(head) > 1:
            mtllibs.append(head[1].strip())
    if (_SPACE[c0] & ~((c0 == 10) | (c0 == 13))).any():
        return None  # an indented line
    faces = np.flatnonzero(kind == 4)
    if len(faces) and (kind[faces[0]:] % 4 != 0).any():
        return None  # a face may refer to what follows it: the line reader says which
    length = np.diff(np.r_[starts, len(b)])  # bytes per line, its newline included
    buf = b.copy()
    buf[starts[kind > 0]] = 32  # the keywords blanked
    buf[starts[(kind == 2) | (kind == 3)] + 1] = 32
    of_line = np.repeat(kind, length)  # each byte's record
    arrays = [_numbers_in(buf[of_line == k], n, length[kind == k])
              for k, n in ((1, 3), (2, 2), (3, 3))]
    if any(a is None for a in arrays):
        return None
    v, vt, vn = arrays
    corners = _face_corners(buf[of_line == 4], length[faces], (len(v), len(vt), len(vn)))
    if corners is None:
        return None
    return v, vt.astype(np.float32), vn.astype(np.float32), {"": corners}, mtllibs


def _parsed(data: bytes, dtype: type) -> np.ndarray | None:
    """The whitespace-separated numbers of ``data``, or None if any is not one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns, then stops, at a token it cannot read
        try:
            return np.fromstring(data, dtype=dtype, sep=" ")
        except (ValueError, DeprecationWarning):
            return None


def _numbers_in(data: np.ndarray, n: int, length: np.ndarray) -> np.ndarray | None:
    """Bytes of records (keywords blanked, ``length`` (R,) bytes each) of exactly ``n``
    numbers each -> (R, n) float64, or None (``v 0 0 0 0`` then ``v 1 0`` would otherwise
    pass as two good records)."""
    rows = len(length)
    if rows == 0:
        return np.zeros((0, n))
    if (_tokens_per_record(data, length) != n).any():
        return None
    values = _parsed(data.tobytes(), np.float64)
    if values is None or len(values) != n * rows:
        return None
    return values.reshape(rows, n)


def _face_corners(data: np.ndarray, length: np.ndarray, counts: tuple[int, int, int]
                  ) -> np.ndarray | None:
    """Bytes of face records (keywords blanked, ``length`` (F,) bytes each) of positive
    indices in one corner format -> fan-triangulated corners (T, 3, 3) (zero-based v, vt,
    vn; -1 where absent); None otherwise."""
    if len(length) == 0:
        return np.zeros((0, 3, 3), np.int64)
    sizes = _tokens_per_record(data, length)  # corners per face
    text = data.tobytes().decode("ascii", errors="replace")
    if sizes.min() < 3 or "-" in text:
        return None
    fields = _corner_fields(text, int(sizes.sum()))
    if fields is None:
        return None
    values = _parsed(text.replace("/", " ").encode(), np.int64)
    if values is None or len(values) != len(fields) * int(sizes.sum()):
        return None
    values = values.reshape(-1, len(fields)) - 1
    idx = np.full((len(values), 3), -1, np.int64)
    for col, k in enumerate(fields):
        if not ((values[:, col] >= 0) & (values[:, col] < counts[k])).all():
            return None
        idx[:, k] = values[:, col]
    return idx[_fan(sizes)]


def _tokens_per_record(data: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Whitespace-separated tokens in each of the records (``length`` (R,) bytes each) that
    ``data`` holds end to end -> (R,)."""
    space = _SPACE[data]
    first = ~space & np.r_[True, space[:-1]]  # each token's first byte
    row = np.repeat(np.arange(len(length)), length)
    return np.bincount(row[first], minlength=len(length))


def _fan(sizes: np.ndarray) -> np.ndarray:
    """Corner rows (T, 3) of the fan triangulation of faces with ``sizes`` corners each."""
    start = np.cumsum(sizes) - sizes
    per = sizes - 2  # triangles per face
    tri_face = np.repeat(np.arange(len(sizes)), per)
    j = np.arange(len(tri_face)) - np.repeat(np.cumsum(per) - per, per) + 1
    first = start[tri_face]
    return np.stack([first, first + j, first + j + 1], axis=1)


class _Lines:
    """An OBJ file's lines sorted by keyword, as token lists with their line numbers."""

    def __init__(self) -> None:
        self.rows: dict[str, list[list[str]]] = {"v": [], "vt": [], "vn": [], "f": []}
        self.at: dict[str, list[int]] = {"v": [], "vt": [], "vn": [], "f": []}
        self.materials: list[tuple[int, str]] = []  # (line, name) of each usemtl
        self.mtllibs: list[str] = []

    def add(self, lineno: int, toks: list[str], line: str) -> None:
        key = toks[0]
        rows = self.rows.get(key)
        if rows is not None:
            rows.append(toks)
            self.at[key].append(lineno)
        elif key == "usemtl":
            self.materials.append((lineno, " ".join(toks[1:])))
        elif key == "mtllib" and len(toks) > 1:  # an empty one names nothing to read
            self.mtllibs.append(line.split(None, 1)[1].strip())

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray],
                              list[str]] | None:
        """What :func:`parse_obj` returns, or None where the file needs reading line by line
        (a corner format this does not take, or a mistake to report)."""
        v = _numbers(self.rows["v"], 3)
        vt = _numbers(self.rows["vt"], 2)
        vn = _numbers(self.rows["vn"], 3)
        corners = self._corners()
        if v is None or vt is None or vn is None or corners is None:
            return None
        tri_face, tris = corners
        # each face is in the material of the last usemtl above it ("" before any)
        ids = {"": 0}
        switch = np.array([0, *(ids.setdefault(name, len(ids)) for _, name in self.materials)])
        above = np.searchsorted([at for at, _ in self.materials], self.at["f"])
        group = switch[above][tri_face]  # (T,) each triangle's material
        groups = {name: tris[group == g] for name, g in ids.items()}
        return (v, vt.astype(np.float32), vn.astype(np.float32), groups, self.mtllibs)

    def _corners(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Fan-triangulated faces: each triangle's face line (T,) and corners (T, 3, 3)."""
        faces = self.rows["f"]
        if not faces:
            return np.zeros(0, np.int64), np.zeros((0, 3, 3), np.int64)
        sizes = np.fromiter(map(len, faces), np.int64, len(faces)) - 1  # corners per face
        if sizes.min() < 3:
            return None
        joined = " ".join([tok for toks in faces for tok in toks[1:]])
        fields = _corner_fields(joined, int(sizes.sum()))
        if fields is None:
            return None
        try:
            values = np.array(list(map(int, joined.replace("//", "/").replace("/", " ")
                                       .split())), np.int64).reshape(-1, len(fields))
        except (ValueError, OverflowError):
            return None
        idx = np.full((len(values), 3), -1, np.int64)  # (corners, 3): v, vt, vn
        for col, k in enumerate(fields):
            # how many of its kind precede each corner's line: OBJ counts back from there
            before = np.searchsorted(self.at[("v", "vt", "vn")[k]], self.at["f"])
            before = np.repeat(before, sizes)
            i = values[:, col]
            i = np.where(i > 0, i - 1, before + i)  # 1-based; negatives count back
            if not ((i >= 0) & (i < before)).all():
                return None
            idx[:, k] = i
        tri_face = np.repeat(np.arange(len(faces)), sizes - 2)  # each triangle's face
        return tri_face, idx[_fan(sizes)]


def _numbers(rows: list[list[str]], n: int) -> np.ndarray | None:
    """The first ``n`` numbers after the keyword of each row -> (len(rows), n) float64, or
    None where a row has fewer or one is not a number (read line by line to say where)."""
    if rows and min(map(len, rows)) < n + 1:
        return None
    try:
        flat = list(map(float, [x for toks in rows for x in toks[1:n + 1]]))
    except ValueError:
        return None
    return np.array(flat, np.float64).reshape(-1, n)


_TWO_IN_ONE = re.compile(r"/[^\s/]*/")  # a corner with two or more slashes
_THREE_IN_ONE = re.compile(r"/[^\s/]*/[^\s/]*/")  # ... with three or more
_EMPTY_END = re.compile(r"(?:^|\s)/|/(?:\s|$)")  # a corner starting or ending with a slash


def _corner_fields(joined: str, corners: int) -> tuple[int, ...] | None:
    """Which of (v, vt, vn) every corner of ``joined`` (``corners`` of them, spaced) holds,
    when all hold the same: 'v', 'v/vt', 'v//vn' or 'v/vt/vn'; None otherwise."""
    slashes, doubled = joined.count("/"), joined.count("//")
    if slashes == 0:
        return (0,)
    if _EMPTY_END.search(joined):
        return None
    if slashes == corners and doubled == 0 and not _TWO_IN_ONE.search(joined):
        return (0, 1)
    if slashes == 2 * corners and not _THREE_IN_ONE.search(joined):
        if doubled == 0:
            return (0, 1, 2)
        if doubled == corners:
            return (0, 2)
    return None


def _parse_line_by_line(path: Path, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                        dict[str, np.ndarray], list[str]]:
    """:func:`parse_obj` one line at a time: any corner format, and the exact line of any
    mistake."""
    v, vt, vn = [], [], []
    groups: dict[str, list] = {}
    current = groups.setdefault("", [])
    mtllibs: list[str] = []
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
            np.asarray(vn, np.float32).reshape(-1, 3),
            {name: np.asarray(tris, np.int64).reshape(-1, 3, 3) for name, tris in groups.items()},
            mtllibs)


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
        if not len(tris):
            continue
        corners = tris.reshape(-1, 3)  # (3F, 3): v, vt, vn per corner
        uniq, inverse = _unique_rows(corners, (len(v), len(vt), len(vn)))
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


def _unique_rows(corners: np.ndarray, counts: tuple[int, int, int]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(corners, axis=0, return_inverse=True)`` for corners (C, 3) of indices in
    [-1, count) per column, through one integer key per row (sorting rows as a whole is
    ~10x slower); the same rows in the same order."""
    span = [c + 1 for c in counts]
    if float(span[0]) * span[1] * span[2] >= 2.0**62:  # the key would overflow
        uniq, inverse = np.unique(corners, axis=0, return_inverse=True)
        return uniq, inverse.reshape(-1)
    key = (corners[:, 0] * span[1] + corners[:, 1] + 1) * span[2] + corners[:, 2] + 1
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return corners[first], inverse.reshape(-1)
