"""Build the small example assets in this folder (run from the repository root).

    python examples/make_examples.py

- ``flag.glb``: a textured flag waving on its pole for 2 s (an analytic travelling wave),
  written with neurok's own animated-glTF writer: the file README's first example previews.
- ``blob.obj``: a closed, lumpy, squashable shape (a static mesh to animate).
- ``chest.glb``, ``cabinet.glb``: articulated objects from the data engine's families, a
  part to a node, the lid or door standing open: ``neurok info`` finds their hinges,
  ``neurok animate --preset open`` (or close, swing) moves them.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from neurok_cli.io.asset import Asset, Material, Part
from neurok_cli.io.gltf import write_animated

HERE = Path(__file__).resolve().parent


def _stripes(width: int = 128, height: int = 128) -> bytes:
    """Three horizontal bands with a white border, as PNG bytes."""
    img = np.zeros((height, width, 3), np.uint8)
    bands = np.array([[200, 40, 40], [240, 240, 240], [40, 70, 160]], np.uint8)
    img[:] = bands[np.minimum(np.arange(height) * 3 // height, 2)][:, None]
    img[:3], img[-3:], img[:, :3], img[:, -3:] = 255, 255, 255, 255
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def flag(nx: int = 36, ny: int = 24, width: float = 1.5, height: float = 1.0,
         seconds: float = 2.0, fps: int = 24) -> None:
    """A flag in the XY plane hanging from x = 0, waving in z."""
    u, v = np.meshgrid(np.linspace(0, 1, nx), np.linspace(0, 1, ny))
    rest = np.stack([u * width, 1.0 + v * height, np.zeros_like(u)], -1).reshape(-1, 3)
    quads = np.arange(nx * ny).reshape(ny, nx)[:-1, :-1].reshape(-1)
    faces = np.concatenate([np.stack([quads, quads + 1, quads + nx + 1], 1),
                            np.stack([quads, quads + nx + 1, quads + nx], 1)])
    uvs = np.stack([u, 1.0 - v], -1).reshape(-1, 2).astype(np.float32)
    part = Part(name="flag", vertices=rest, faces=faces, uvs=uvs,
                material=Material(name="cloth", base_color=(1, 1, 1, 1), texture=_stripes(),
                                  texture_mime="image/png", double_sided=True))
    import trimesh

    box = trimesh.creation.box(extents=(0.04, 2.1, 0.04))
    pole = Part(name="pole", vertices=box.vertices + [-0.02, 1.05, 0.0], faces=box.faces,
                material=Material(name="wood", base_color=(0.35, 0.22, 0.12, 1.0)))
    asset = Asset(path=Path("flag.obj"), format="obj", parts=[part, pole])
    t = np.arange(int(seconds * fps))[:, None] / fps
    x, y = rest[:, 0][None], rest[:, 1][None]
    phase = 2 * np.pi * (1.2 * t - x / 0.9)
    amp = 0.12 * (x / width) ** 1.3
    frames = np.repeat(rest[None], len(t), axis=0)
    frames[..., 2] = amp * np.sin(phase) + 0.03 * (x / width) * np.sin(3 * phase + 4 * y)
    frames[..., 0] = x - 0.5 * amp ** 2 / 0.9  # the cloth shortens as it waves
    frames[..., 1] = y - 0.05 * (x / width) ** 2  # and sags a little at the free end
    frames = np.concatenate([frames, np.repeat(pole.vertices[None], len(t), axis=0)], axis=1)
    report = write_animated(asset, [frames], HERE / "flag.glb", fps=fps, encoding="compact",
                            names=["wave"])
    print(f"flag.glb: {report.targets} targets, {report.bytes / 1024:.0f} KiB")


def blob(subdivisions: int = 3, seed: int = 7) -> None:
    """An icosphere with smooth random lumps, written as OBJ."""
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=subdivisions)
    v = sphere.vertices
    rng = np.random.default_rng(seed)
    dirs = rng.normal(size=(6, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    r = 1.0 + 0.12 * np.exp(4 * (v @ dirs.T - 1)).sum(axis=1)
    v = v * r[:, None] * [0.5, 0.42, 0.5]
    lines = ["# neurok example: lumpy blob (examples/make_examples.py)"]
    lines += [f"v {a:.6f} {b:.6f} {c:.6f}" for a, b, c in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in sphere.faces]
    (HERE / "blob.obj").write_text("\n".join(lines) + "\n")
    print(f"blob.obj: {len(v)} vertices, {len(sphere.faces)} faces")


def articulated(family: str, seed: int, angle: float) -> None:
    """A generated chest or cabinet, its lid or door turned ``angle`` degrees open on its
    hinge, written as GLB with each part its own node (metres, +Y up, on y = 0)."""
    from neurok_cli.io.gltf.build import build_document
    from neurok_cli.scenario.joints import axis_rotation
    from neurok_cli.sim.articulated import make_articulated

    obj = make_articulated(family, np.random.default_rng(seed))
    v, f, owner = obj.mesh()
    colours = [(0.55, 0.36, 0.2, 1.0), (0.75, 0.55, 0.3, 1.0)]
    parts = []
    for p, part in enumerate(obj.parts):
        sel = np.flatnonzero(owner == p)
        remap = np.full(len(v), -1)
        remap[sel] = np.arange(len(sel))
        pv = v[sel]
        if part.joint is not None:
            j = part.joint
            assert j.kind == "hinge", "chests and cabinets turn their lids and doors"
            R = axis_rotation(j.axis, np.radians(angle))
            pv = (pv - j.anchor) @ R.T + j.anchor
        parts.append(Part(name=part.name, vertices=pv,
                          faces=remap[f[(owner[f] == p).all(axis=1)]],
                          material=Material(name=part.name, base_color=colours[min(p, 1)])))
    asset = Asset(path=Path(f"{family}.glb"), format="glb", parts=parts)
    doc, _ = build_document(asset)
    doc.save_glb(HERE / f"{family}.glb")
    print(f"{family}.glb: {len(v)} vertices, {len(obj.parts)} parts, open {angle:g} degrees")


if __name__ == "__main__":
    flag()
    blob()
    articulated("chest", 3, 35.0)
    articulated("cabinet", 4, 40.0)
