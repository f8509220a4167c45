"""A summary of a mesh file or frame folder: geometry, units, parts, animations, morphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from .asset import Asset
from .mesh import guess_units, load_mesh


def _animations(asset: Asset) -> list[dict]:
    from .gltf.anim import Sampler

    doc = asset.document
    if doc is None:
        return []
    out = []
    for i, anim in enumerate(doc.gltf.animations):
        paths: dict[str, int] = {}
        end = 0.0
        for ch in anim.channels:
            path = ch.target.path or "?"
            paths[path] = paths.get(path, 0) + 1
            s = Sampler(doc, anim.samplers[ch.sampler], path)
            end = max(end, float(s.times[-1]))
        out.append({"index": i, "name": anim.name if anim.name is not None else f"animation{i}",
                    "duration_s": end, "channels": paths})
    return out


def describe_asset(asset: Asset) -> dict:
    """JSON-ready facts about a loaded asset."""
    lo, hi = asset.bounds()
    welded = asset.welded()
    morphs, compressed = 0, 0
    if asset.document is not None:
        compressed = asset.document.compressed
        morphs = sum(len(m.primitives[0].targets or [])
                     for m in asset.document.gltf.meshes if m.primitives)
    return {
        "file": str(asset.path), "format": asset.format,
        "parts": [{"name": p.name, "vertices": len(p.vertices), "faces": len(p.faces),
                   "uvs": p.uvs is not None,
                   "material": p.material.name if p.material else None,
                   "texture": bool(p.material and p.material.texture)} for p in asset.parts],
        "vertices": len(asset.vertices), "faces": int(sum(len(p.faces) for p in asset.parts)),
        "welded_vertices": len(welded.vertices), "welded_faces": len(welded.faces),
        "bounds_min": lo.tolist(), "bounds_max": hi.tolist(),
        "extent": (hi - lo).tolist(), "up": asset.up, "units": guess_units(asset),
        "morph_targets": morphs, "skins": _skins(asset),
        "meshopt_views": compressed, "animations": _animations(asset),
        "warnings": list(asset.warnings),
    }


def _skins(asset: Asset) -> list[dict]:
    """Each skin of a glTF: its joints, and the most non-zero weights a vertex it skins has
    (JOINTS_0/WEIGHTS_0: four at most)."""
    if asset.document is None:
        return []
    doc = asset.document
    gltf = doc.gltf
    out = []
    for si, skin in enumerate(gltf.skins or []):
        most = 0
        for node in gltf.nodes:
            if node.skin != si or node.mesh is None:
                continue
            for prim in gltf.meshes[node.mesh].primitives:
                if prim.attributes.WEIGHTS_0 is not None:
                    used = (doc.accessor(prim.attributes.WEIGHTS_0) > 0).sum(axis=1)
                    most = max(most, int(used.max(initial=0)))
        out.append({"index": si, "name": skin.name, "joints": len(skin.joints or []),
                    "weights_per_vertex": most})
    return out


def _check_frames(first: Asset, files: list[Path]) -> None:
    """Every frame must load and share the first frame's vertex count."""
    n = len(first.vertices)
    for f in files[1:]:
        m = len(load_mesh(f).vertices)
        if m != n:
            raise InputError(f"{f}: has {m} vertices but {files[0].name} has {n}; frames "
                             "must share one topology")


def describe(path: str | Path, *, up: str | None = None) -> dict:
    """Facts about a mesh file, or a frame folder (then with its frame count)."""
    path = Path(path)
    if path.is_dir():
        from .frames import frame_files, frame_info

        files = frame_files(path)
        recorded = frame_info(path)  # our writer's frames.json: the up axis, the frame rate
        first = load_mesh(files[0], up=up or recorded.get("up"))
        _check_frames(first, files)
        info = describe_asset(first)
        info.update(file=str(path), format=f"{files[0].suffix[1:]} frames", frames=len(files))
        if "fps" in recorded:
            info["fps"] = recorded["fps"]
        if up is None and "up" in recorded:
            info["up_from"] = "frames.json"
        return info
    return describe_file(load_mesh(path, up=up))


def describe_file(asset: Asset) -> dict:
    """Facts about a loaded mesh file (one frame)."""
    return {**describe_asset(asset), "frames": 1}


def _up_text(info: dict) -> str:
    up, fmt = info["up"], info["format"].split()[0]
    if info.get("up_from"):
        return f"{up} (as {info['up_from']} records; --up to override)"
    if fmt in ("glb", "gltf"):
        return f"{up} (glTF is always +Y up)"
    return f"{up} (--up {'y' if up == 'z' else 'z'} if not; STL defaults to z, OBJ and PLY to y)"


def summary_rows(info: dict) -> list[tuple[str, str]]:
    """Human-readable (label, value) rows of :func:`describe`'s result."""
    ext = np.asarray(info["extent"])
    rows = [("file", info["file"]), ("format", info["format"]),
            ("parts", str(len(info["parts"]))),
            ("vertices", f"{info['vertices']:,} in file, {info['welded_vertices']:,} welded"),
            ("faces", f"{info['faces']:,} ({info['welded_faces']:,} after welding)"),
            ("bounding box", " .. ".join("(" + ", ".join(f"{x:.4g}" for x in c) + ")"
                                         for c in (info["bounds_min"], info["bounds_max"]))),
            ("extent", ", ".join(f"{x:.4g}" for x in ext)), ("up axis", _up_text(info)),
            ("units", info["units"]), ("morph targets", str(info["morph_targets"]))]
    if info.get("meshopt_views"):
        rows.append(("compression", f"meshopt (EXT_meshopt_compression): "
                                    f"{info['meshopt_views']} bufferViews"))
    for skin in info.get("skins", []):
        n = skin["weights_per_vertex"]
        rows.append((f"skin {skin['index']}", f"'{skin['name']}': {skin['joints']} joints, at "
                     f"most {n} weight{'' if n == 1 else 's'} per vertex"))
    if info.get("frames", 1) > 1:
        rows.append(("frames", str(info["frames"]) + (f" at {info['fps']:g} fps"
                                                      if "fps" in info else "")))
    for a in info["animations"]:
        chans = ", ".join(f"{n} {k}" for k, n in a["channels"].items())
        rows.append((f"animation {a['index']}", f"'{a['name']}': {a['duration_s']:.3g} s; {chans}"))
    for p in info["parts"]:
        look = "texture" if p["texture"] else ("uv" if p["uvs"] else "")
        text = f"{p['vertices']:,} v, {p['faces']:,} f"
        text += (f", {p['material']}" if p["material"] else "") + (f", {look}" if look else "")
        rows.append((f"part '{p['name']}'", text))
    return rows
