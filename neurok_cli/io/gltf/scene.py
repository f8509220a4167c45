"""The glTF scene graph: node transforms, mesh primitives as parts, animation sampling."""

from __future__ import annotations

import numpy as np
import pygltflib

from ...errors import InputError
from ..asset import Material, Part
from ..skinning import skinned
from .bones import primitive_skin, skin_matrices
from .codec import Node
from .doc import GltfDocument

TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 4, 5, 6


def trs_matrix(t=(0, 0, 0), r=(0, 0, 0, 1), s=(1, 1, 1)) -> np.ndarray:
    """4x4 matrix of translation, rotation (quaternion x, y, z, w) and scale."""
    x, y, z, w = np.asarray(r, np.float64) / (np.linalg.norm(r) or 1.0)
    rot = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    m = np.eye(4)
    m[:3, :3] = rot * np.asarray(s, np.float64)
    m[:3, 3] = t
    return m


def node_local(node: pygltflib.Node, override: dict | None = None) -> np.ndarray:
    """A node's local matrix; ``override`` holds animated translation/rotation/scale."""
    o = override or {}
    if node.matrix is not None and not o:
        return np.asarray(node.matrix, np.float64).reshape(4, 4).T  # column-major in glTF
    return trs_matrix(_pick(o, "translation", node.translation, (0, 0, 0)),
                      _pick(o, "rotation", node.rotation, (0, 0, 0, 1)),
                      _pick(o, "scale", node.scale, (1, 1, 1)))


def _pick(override: dict, key: str, value: list[float] | None, default: tuple) -> object:
    if key in override:
        return override[key]
    return default if value is None else value


def scene_roots(doc: GltfDocument) -> list[int]:
    """Root nodes of the default scene (or of every scene-less root when there is none)."""
    gltf = doc.gltf
    if gltf.scenes:
        return list(gltf.scenes[gltf.scene or 0].nodes or [])
    children = {c for n in gltf.nodes for c in n.children or []}
    return [i for i in range(len(gltf.nodes)) if i not in children]


def world_matrices(doc: GltfDocument, overrides: dict[int, dict] | None = None
                   ) -> dict[int, np.ndarray]:
    """World matrix of every node reachable from the scene roots."""
    nodes = doc.gltf.nodes
    out: dict[int, np.ndarray] = {}
    stack = [(r, np.eye(4)) for r in scene_roots(doc)]
    while stack:
        i, parent = stack.pop()
        if i in out:
            raise InputError(f"{doc.path}: node {i} appears twice in the scene graph (a cycle?)")
        # huge scales may overflow to inf: mesh.validate names the file, without a warning
        with np.errstate(over="ignore", invalid="ignore"):
            out[i] = parent @ node_local(nodes[i], (overrides or {}).get(i))
        stack.extend((c, out[i]) for c in nodes[i].children or [])
    return out


def _triangles(doc: GltfDocument, prim: pygltflib.Primitive, n: int) -> np.ndarray | None:
    idx = doc.accessor(prim.indices).astype(np.int64) if prim.indices is not None \
        else np.arange(n)
    mode = TRIANGLES if prim.mode is None else prim.mode
    if mode == TRIANGLES:
        return idx[: len(idx) // 3 * 3].reshape(-1, 3)
    if mode == TRIANGLE_STRIP and len(idx) >= 3:
        tri = np.stack([idx[:-2], idx[1:-1], idx[2:]], axis=1)
        tri[1::2] = tri[1::2][:, [1, 0, 2]]  # keep winding consistent
        return tri
    if mode == TRIANGLE_FAN and len(idx) >= 3:
        return np.stack([np.full(len(idx) - 2, idx[0]), idx[1:-1], idx[2:]], axis=1)
    return None


def _material(doc: GltfDocument, index: int | None) -> Material:
    if index is None:
        return Material()
    m = doc.gltf.materials[index]
    pbr = m.pbrMetallicRoughness or pygltflib.PbrMetallicRoughness()
    mat = Material(name=m.name if m.name is not None else f"material{index}",
                   base_color=tuple(pbr.baseColorFactor or (1, 1, 1, 1)),
                   double_sided=bool(m.doubleSided))
    tex = pbr.baseColorTexture
    if tex is not None:
        source = doc.gltf.textures[tex.index].source
        found = doc.image_bytes(source) if source is not None else None
        if found:
            mat.texture, mat.texture_mime = found
    return mat


def default_weights(node: Node, mesh: pygltflib.Mesh) -> list[float]:
    """A node's default morph weights: its own, else its mesh's (empty when neither has)."""
    return node.weights if node.weights is not None else mesh.weights or []


def _default_morph(doc: GltfDocument, node: Node, mesh: pygltflib.Mesh,
                   prim: pygltflib.Primitive) -> np.ndarray | float:
    """Displacement of a primitive's existing morph targets at the node's default weights,
    so that the rest shape is the one viewers show."""
    out: np.ndarray | float = 0.0
    for w, t in zip(default_weights(node, mesh), prim.targets or []):
        if w and t.POSITION is not None:
            out = out + w * doc.accessor(t.POSITION).astype(np.float64)
    return out


def _placed(doc: GltfDocument, node: Node, prim: pygltflib.Primitive, local: np.ndarray,
            world: np.ndarray, worlds: dict[int, np.ndarray]) -> np.ndarray:
    """A primitive's vertices where viewers show them: skinned by its joints where its node
    has a skin (the node's own transform is then ignored, as the specification says), else
    placed by the node's world matrix."""
    influence = primitive_skin(doc, prim) if node.skin is not None else None
    if influence is None:
        return local @ world[:3, :3].T + world[:3, 3]
    joints, weights = influence
    return skinned(local, joints, weights, skin_matrices(doc, node.skin, worlds)[None])[0]


def skinned_nodes(doc: GltfDocument) -> list[int]:
    """The scene's nodes whose mesh a skin moves."""
    nodes = doc.gltf.nodes
    return [i for i in sorted(world_matrices(doc)) if nodes[i].mesh is not None
            and nodes[i].skin is not None]


def load_gltf_parts(doc: GltfDocument) -> tuple[list[Part], list[str]]:
    """One part per (node, primitive) of the default scene, in world coordinates at rest."""
    warnings: list[str] = []
    parts = []
    nodes = doc.gltf.nodes
    worlds = world_matrices(doc)
    for ni, world in sorted(worlds.items()):
        node = nodes[ni]
        if node.mesh is None:
            continue
        mesh = doc.gltf.meshes[node.mesh]
        for pi, prim in enumerate(mesh.primitives):
            attrs = prim.attributes
            if attrs.POSITION is None:
                continue
            local = doc.accessor(attrs.POSITION).astype(np.float64)
            faces = _triangles(doc, prim, len(local))
            if faces is None:
                warnings.append(f"mesh {node.mesh} primitive {pi}: points/lines skipped")
                continue
            if not np.isfinite(local).all():  # before the arithmetic, which would warn
                raise InputError(f"{doc.path}: mesh {node.mesh} primitive {pi}: vertex "
                                 "coordinates contain NaN or infinity")
            # finite but huge numbers may overflow: mesh.validate reports what comes out
            with np.errstate(over="ignore", invalid="ignore"):
                local = local + _default_morph(doc, node, mesh, prim)
                vertices = _placed(doc, node, prim, local, world, worlds)
            parts.append(Part(
                name=mesh.name or node.name or f"mesh{node.mesh}",
                vertices=vertices, faces=faces,
                uvs=doc.accessor(attrs.TEXCOORD_0).astype(np.float32)
                if attrs.TEXCOORD_0 is not None else None,
                normals=doc.accessor(attrs.NORMAL).astype(np.float32)
                if attrs.NORMAL is not None else None,
                material=_material(doc, prim.material),
                node=ni, mesh=node.mesh, primitive=pi, matrix=world))
    return parts, warnings
