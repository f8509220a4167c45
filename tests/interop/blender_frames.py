"""Import a file into Blender (``bpy``) and save its evaluated vertices at given frames.

Runs in the Python that has ``bpy`` (a separate environment, see test_blender.py), not the
project's: ``python blender_frames.py IN.glb|IN.usd* OUT.npz FPS FRAME [FRAME ...]``.

Nothing is chosen for Blender: the scene plays whatever the importer made active, as a user
who opens the file sees it. Each mesh object's evaluated mesh (shape keys, modifiers, mesh
sequence caches applied) is taken to world space and turned from Blender's Z-up to glTF's
Y-up: Blender (x, y, z) is glTF (x, z, -y).

OUT.npz holds ``frames`` (F,) as set, ``positions`` (F, N, 3) float64 of every mesh object's
vertices concatenated, ``counts`` (objects,) and ``names`` (objects,), and ``fps`` the scene
rate the import ran at.
"""

from __future__ import annotations

import sys

import bpy
import numpy as np

Z_UP_TO_Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def import_file(path: str) -> None:
    if path.endswith((".glb", ".gltf")):
        bpy.ops.import_scene.gltf(filepath=path)
    elif path.endswith((".usd", ".usda", ".usdc")):
        bpy.ops.wm.usd_import(filepath=path)
    else:
        raise SystemExit(f"not a glTF or USD file: {path}")


def evaluated_vertices(objects) -> list[np.ndarray]:
    """World positions (n, 3) of each object's evaluated mesh at the current frame."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    out = []
    for obj in objects:
        ev = obj.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, np.float64)
        mesh.vertices.foreach_get("co", co)
        world = np.array(ev.matrix_world, np.float64)
        ev.to_mesh_clear()
        co = co.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
        out.append(co @ Z_UP_TO_Y_UP.T)
    return out


def main(argv: list[str]) -> None:
    path, out, fps, *frames = argv
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = int(fps), 1.0  # before import: keys land on frames
    import_file(path)
    shapes = {pb.custom_shape for o in scene.objects if o.type == "ARMATURE"
              for pb in o.pose.bones if pb.custom_shape is not None}  # bones' display shapes
    objects = sorted((o for o in scene.objects if o.type == "MESH" and o not in shapes),
                     key=lambda o: o.name)
    if not objects:
        raise SystemExit(f"{path}: Blender imported no mesh objects")
    positions = []
    for f in frames:
        scene.frame_set(int(f))
        positions.append(np.concatenate(evaluated_vertices(objects)))
    np.savez(out, frames=np.array([int(f) for f in frames]), positions=np.stack(positions),
             counts=np.array([len(o.data.vertices) for o in objects]),
             names=np.array([o.name for o in objects]), fps=float(scene.render.fps))


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:])
