"""Building a glTF document from parts of a unitless asset (OBJ, PLY, STL)."""

from __future__ import annotations

import numpy as np
import pygltflib

from ... import __version__
from ..asset import Asset, Material, Part
from ..mesh import Z_UP_TO_Y_UP
from ..normals import oriented_normals
from .codec import Node, Sampler
from .doc import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, GltfDocument

GENERATOR = f"neurok-cli {__version__}"


def _add_material(doc: GltfDocument, mat: Material | None, cache: dict[int, int]) -> int:
    mat = mat or Material()
    if id(mat) in cache:
        return cache[id(mat)]
    pbr = pygltflib.PbrMetallicRoughness(baseColorFactor=[float(c) for c in mat.base_color],
                                         metallicFactor=0.0, roughnessFactor=0.8)
    gltf = doc.gltf
    if mat.texture is not None:
        image = doc.add_image(mat.texture, mat.texture_mime or "image/png")
        gltf.samplers.append(Sampler(magFilter=9729, minFilter=9987, wrapS=10497, wrapT=10497))
        gltf.textures.append(pygltflib.Texture(sampler=len(gltf.samplers) - 1, source=image))
        pbr.baseColorTexture = pygltflib.TextureInfo(index=len(gltf.textures) - 1)
    gltf.materials.append(pygltflib.Material(
        name=mat.name, pbrMetallicRoughness=pbr, doubleSided=mat.double_sided,
        alphaMode="BLEND" if mat.base_color[3] < 1.0 else "OPAQUE"))
    cache[id(mat)] = len(gltf.materials) - 1
    return cache[id(mat)]


def part_normals(part: Part, groups: np.ndarray) -> np.ndarray:
    """The part's own normals, or smooth ones (shared across seams by ``groups``)."""
    if part.normals is not None and np.isfinite(part.normals).all():
        n = np.asarray(part.normals, np.float64)
        length = np.linalg.norm(n, axis=1, keepdims=True)
        ok = length[:, 0] > 1e-8
        if ok.all():
            return n / length
    return oriented_normals(part.vertices, part.faces, groups)


def root_of(asset: Asset, root_matrix: np.ndarray | None) -> np.ndarray:
    """The (4, 4) matrix on the root node above ``asset``'s parts: ``root_matrix``, or a Z-up
    asset's turn to +Y up, or the identity."""
    if root_matrix is not None:
        return np.asarray(root_matrix, np.float64)
    out = np.eye(4)
    if asset.up == "z":
        out[:3, :3] = Z_UP_TO_Y_UP
    return out


def build_document(asset: Asset, root_matrix: np.ndarray | None = None, *,
                   positions: list[np.ndarray] | None = None,
                   normals: list[np.ndarray] | None = None
                   ) -> tuple[GltfDocument, list[tuple[int, int, int]]]:
    """A new glTF document with one node and mesh per part, vertices as in the file.

    ``root_matrix`` (4, 4) goes on a root node so the file's frame and units can be shown +Y
    up and in metres without touching vertex data; None: a Z-up asset's turn to +Y up.
    Returns the document and, per part, its (node, mesh, primitive) there. ``positions``
    and ``normals`` (per part) replace the file's base vertex data when given.
    """
    root_matrix = root_of(asset, root_matrix)
    root = Node(name=asset.path.stem, children=[])
    if not np.allclose(root_matrix, np.eye(4)):
        root.matrix = [float(x) for x in root_matrix.T.reshape(-1)]
    gltf = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0", generator=GENERATOR), scene=0,
                           scenes=[pygltflib.Scene(nodes=[0])], nodes=[root])
    doc = GltfDocument(gltf=gltf)
    welded = asset.welded()
    cache: dict[int, int] = {}
    placements = []
    for pi, (part, off) in enumerate(zip(asset.parts, asset.offsets[:-1])):
        groups = welded.index[off: off + len(part.vertices)]
        pos = part.vertices if positions is None else positions[pi]
        nrm = part_normals(part, groups) if normals is None else normals[pi]
        attrs = pygltflib.Attributes(
            POSITION=doc.add_accessor(pos.astype(np.float32), target=ARRAY_BUFFER, minmax=True),
            NORMAL=doc.add_accessor(nrm.astype(np.float32), target=ARRAY_BUFFER))
        if part.uvs is not None:
            attrs.TEXCOORD_0 = doc.add_accessor(part.uvs.astype(np.float32), target=ARRAY_BUFFER)
        index_dtype = np.uint16 if len(part.vertices) < 65535 else np.uint32
        prim = pygltflib.Primitive(
            attributes=attrs, mode=pygltflib.TRIANGLES,
            indices=doc.add_accessor(part.faces.reshape(-1).astype(index_dtype),
                                     target=ELEMENT_ARRAY_BUFFER),
            material=_add_material(doc, part.material, cache))
        gltf.meshes.append(pygltflib.Mesh(name=part.name, primitives=[prim]))
        gltf.nodes.append(Node(name=part.name, mesh=pi))
        root.children.append(len(gltf.nodes) - 1)
        placements.append((len(gltf.nodes) - 1, pi, 0))
    return doc, placements
