"""Per-frame mesh sequences: ``name_0000.obj`` ... (or .ply) in a folder, written and read.

OBJ frames keep the file's parts, UVs and materials (one shared ``.mtl`` and its textures);
PLY frames are binary with positions and faces only. A folder we write also holds
``frames.json``: the frame rate and the up axis of the file frame the vertices are in (OBJ
and PLY carry neither), which readers take as defaults.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import InputError, OutputError, UsageError
from .asset import Asset, Material
from .atomic import atomic_dir, parent_folder
from .colors import linear_to_srgb

FRAME_FORMATS = ("obj", "ply")
INFO = "frames.json"  # frame rate and up axis of a frame folder
_FRAME_RE = re.compile(r"^(.*?)[_\-.]?(\d+)$")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "part"


def _material_name(i: int, mat: Material | None) -> str:
    return f"m{i}_{_safe((mat or Material()).name)}"


def _mtl_text(asset: Asset, folder: Path, stem: str) -> str:
    lines, seen = [], set()
    for i, part in enumerate(asset.parts):
        mat = part.material or Material()
        name = _material_name(i, part.material)
        if name in seen:
            continue
        seen.add(name)
        kd = linear_to_srgb(np.asarray(mat.base_color[:3]))
        lines += [f"newmtl {name}", "Kd {:.6f} {:.6f} {:.6f}".format(*kd),
                  f"d {mat.base_color[3]:.6f}"]
        if mat.texture is not None:
            ext = ".jpg" if mat.texture_mime == "image/jpeg" else ".png"
            tex = f"{stem}_{name}{ext}"
            (folder / tex).write_bytes(mat.texture)
            lines.append(f"map_Kd {tex}")
        lines.append("")
    return "\n".join(lines)


def _obj_text(asset: Asset, positions: np.ndarray, mtl: str) -> str:
    """One OBJ file: positions (N, 3) of the asset's file vertices, parts as materials."""
    out = [f"mtllib {mtl}"]
    out.append("\n".join(f"v {x:.7g} {y:.7g} {z:.7g}" for x, y, z in positions))
    with_uv = all(p.uvs is not None for p in asset.parts)
    if with_uv:
        uvs = np.concatenate([p.uvs for p in asset.parts])
        out.append("\n".join(f"vt {u:.7g} {1.0 - v:.7g}" for u, v in uvs))
    offs = asset.offsets
    for i, part in enumerate(asset.parts):
        out.append("o " + _safe(part.name))
        out.append(f"usemtl {_material_name(i, part.material)}")
        f = part.faces + offs[i] + 1
        fmt = "f {0}/{0} {1}/{1} {2}/{2}" if with_uv else "f {0} {1} {2}"
        out.append("\n".join(fmt.format(*t) for t in f.tolist()))
    return "\n".join(out) + "\n"


def _ply_bytes(positions: np.ndarray, faces: np.ndarray) -> bytes:
    head = (f"ply\nformat binary_little_endian 1.0\ncomment neurok-cli frame\n"
            f"element vertex {len(positions)}\nproperty float x\nproperty float y\n"
            f"property float z\nelement face {len(faces)}\n"
            "property list uchar int vertex_indices\nend_header\n").encode()
    rec = np.zeros(len(faces), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    rec["n"], rec["i"] = 3, faces
    return head + positions.astype("<f4").tobytes() + rec.tobytes()


# the files a frame folder of ours holds besides frames.json: frames, the .mtl, textures
_OWN_FILE = re.compile(r"^.+(_\d{4,}\.(obj|ply)|\.mtl|_m\d+_.*\.(png|jpg))$")


def _foreign(folder: Path) -> list[str]:
    """Entries of ``folder`` that a frame folder written by write_frames would not hold."""
    return sorted(e.name for e in folder.iterdir()
                  if e.is_symlink() or not e.is_file()
                  or not (e.name == INFO or _OWN_FILE.match(e.name)))


def check_frame_folder(folder: str | Path) -> Path:
    """Refuse a frame folder whose writing would delete what the user did not name: frames
    go only into a new or empty folder, or one that write_frames made (its ``frames.json``
    and nothing but frame files), in a writable folder."""
    folder = Path(folder)
    here = Path.cwd().resolve()
    if folder == Path(".") or folder.resolve() in (here, *here.parents):
        raise OutputError(f"-o '{folder}': is empty or names the current folder (or one above "
                          "it); name a new folder for the frames")
    parent_folder(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise OutputError(f"{folder}: exists and is not a folder; name a new folder for the "
                          "frames")
    if not folder.exists() or not any(folder.iterdir()):
        return folder
    if not (folder / INFO).is_file():
        raise OutputError(f"{folder}: is a folder that neurok did not write (no {INFO}) and "
                          "not empty; frames go to a new or empty folder")
    foreign = _foreign(folder)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise OutputError(f"{folder}: holds files neurok did not write ({', '.join(foreign[:3])}"
                          f"{more}); move them or name a new folder for the frames")
    return folder


def write_frames(asset: Asset, frames: np.ndarray, folder: str | Path, *, fmt: str = "obj",
                 fps: float | None = None,
                 progress: Callable[[int], None] | None = None) -> list[Path]:
    """Write ``frames`` (T, N, 3) of the asset's file vertices as one mesh file per frame,
    and ``frames.json`` with ``fps`` (when given) and the asset's up axis.

    The folder is created (or replaced) atomically; it must be new, empty or one written
    here before (``check_frame_folder``). Returns the written frame files.
    """
    if fmt not in FRAME_FORMATS:
        raise UsageError(f"unknown frame format {fmt!r}; choose one of {', '.join(FRAME_FORMATS)}")
    folder = check_frame_folder(folder)
    stem = asset.path.stem
    faces = asset.faces
    names = []
    with atomic_dir(folder) as tmp:
        mtl = f"{stem}.mtl"
        if fmt == "obj":
            (tmp / mtl).write_text(_mtl_text(asset, tmp, stem))
        for i, pos in enumerate(frames):
            name = f"{stem}_{i:04d}.{fmt}"
            if fmt == "obj":
                (tmp / name).write_text(_obj_text(asset, pos, mtl))
            else:
                (tmp / name).write_bytes(_ply_bytes(pos, faces))
            names.append(name)
            if progress:
                progress(i + 1)
        info = {"up": asset.up}
        if fps is not None:
            info["fps"] = float(fps)
        (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n")
    return [folder / n for n in names]


def frame_info(folder: str | Path) -> dict:
    """What a frame folder's ``frames.json`` says ("fps", "up"), or {} when it has none."""
    path = Path(folder) / INFO
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(info, dict):
        raise InputError(f"{path}: expected a JSON object")
    out = {}
    if "fps" in info:
        fps = info["fps"]
        if not isinstance(fps, (int, float)) or isinstance(fps, bool) or not fps > 0:
            raise InputError(f"{path}: fps must be a positive number, got {fps!r}")
        out["fps"] = float(fps)
    if "up" in info:
        if info["up"] not in ("y", "z"):
            raise InputError(f"{path}: up must be \"y\" or \"z\", got {info['up']!r}")
        out["up"] = info["up"]
    return out


def frame_files(folder: str | Path) -> list[Path]:
    """The numbered mesh files of a frame folder, in frame order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of frames")
    found = []
    for f in folder.iterdir():
        m = _FRAME_RE.match(f.stem)
        if f.suffix.lower() in (".obj", ".ply") and m:
            found.append((int(m.group(2)), f))
    if not found:
        raise InputError(f"{folder}: no numbered .obj or .ply frames (name_0000.obj, ...)")
    return [f for _, f in sorted(found)]


def read_frames(folder: str | Path) -> tuple[Asset, np.ndarray]:
    """Read a frame folder: the first frame as the asset, and all positions (T, N, 3)."""
    from .mesh import load_mesh

    files = frame_files(folder)
    first = load_mesh(files[0])
    frames = [first.vertices]
    for f in files[1:]:
        v = load_mesh(f).vertices
        if v.shape != frames[0].shape:
            raise InputError(f"{f}: has {len(v)} vertices but {files[0].name} has "
                             f"{len(frames[0])}; frames must share one topology")
        frames.append(v)
    return first, np.stack(frames)
