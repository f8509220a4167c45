"""The motion as a skin: joints animated by translation and rotation, and at most four
weights per vertex (io/skinning.py decomposes the frames), where players of every kind read
it natively.

The layout keeps the Khronos validator and Blender's importer content:

- the joints are siblings below one parent, none below another, so no chain of them can
  shear; each rests at its vertices' weighted centre and turns about it;
- a skinned mesh's node is a scene root without a transform of its own (players ignore
  both, and the validator warns of them): a deformed node of the input moves up to the
  scene's roots, its placement kept in the inverse bind matrices; one with children or an
  animated transform keeps them, and its mesh moves to a new root node beside it, which
  the file's own morph weight tracks then drive;
- each skinned node has a skin of its own over the shared joints, so that its inverse bind
  matrices carry its own placement.

In a new document (an OBJ, PLY or STL) the joints' parent is the root node that turns the
file's frame into glTF's, so the vertex data stays in the file's frame as with morph
targets; in a glTF input it is a new scene root, ``neurok_skeleton``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pygltflib

from ..asset import Asset
from ..skinning import Skin
from .codec import Node
from .doc import ARRAY_BUFFER, GltfDocument

SKELETON = "neurok_skeleton"
KEY_ERROR = 2e-5  # a joint's keys are dropped where interpolation stays this close: x the
# joints' span for translations, radians (quaternion components) for rotations
REACH = 64  # frames one key may span at most
SHARED = 0.7  # a track keeping more of its frames than this keeps them all (shared times)


def add_skin(doc: GltfDocument, asset: Asset, placements: list[tuple], skin: Skin,
             rows: np.ndarray, *, parent: int | None, to_asset: Sequence[np.ndarray]
             ) -> tuple[list[int], dict[int, int]]:
    """Write ``skin`` (over the asset's vertices ``rows``, in order) into ``doc``: the joints,
    one skin per deformed node and the primitives' JOINTS_0 and WEIGHTS_0. ``parent``: the
    joints' parent node (None: a new scene root); ``to_asset[p]`` (4, 4): part p's local
    frame to the joints' parent's. Returns the joint nodes and {node: the new scene root
    that took its mesh} (see :func:`retarget_weights`)."""
    gltf = doc.gltf
    if parent is None:
        gltf.nodes.append(Node(name=SKELETON, children=[]))
        parent = len(gltf.nodes) - 1
        _scene(doc).append(parent)
    first = len(gltf.nodes)
    for j in range(skin.bones):
        gltf.nodes.append(Node(name=f"neurok_joint_{j:02d}",
                               translation=[float(x) for x in skin.translations[0, j]],
                               rotation=[float(x) for x in skin.rotations[0, j]]))
    joints = list(range(first, first + skin.bones))
    gltf.nodes[parent].children = list(gltf.nodes[parent].children or []) + joints
    where = np.full(len(asset.vertices), -1, np.int64)
    where[rows] = np.arange(len(rows))
    offs = asset.offsets
    by_node: dict[int, int] = {}
    moved: dict[int, int] = {}
    for pi, (node_i, mesh_i, prim_i, _) in enumerate(placements):
        if mesh_i is None:  # a rider: its node carries it (gltf_parts.py)
            continue
        if node_i not in by_node:
            bind = np.linalg.inv(_joint_rest(skin.centres))  # (B, 4, 4)
            ibm = (bind @ to_asset[pi]).transpose(0, 2, 1).reshape(-1, 16)  # column-major
            gltf.skins.append(pygltflib.Skin(
                name=f"neurok_{gltf.nodes[node_i].name or node_i}", joints=joints,
                inverseBindMatrices=doc.add_accessor(ibm.astype(np.float32))))
            by_node[node_i] = _skinned_root(doc, node_i, moved)
            gltf.nodes[by_node[node_i]].skin = len(gltf.skins) - 1
        at = where[offs[pi]:offs[pi + 1]]
        prim = gltf.meshes[mesh_i].primitives[prim_i]
        prim.attributes.JOINTS_0 = doc.add_accessor(skin.joints[at], target=ARRAY_BUFFER)
        prim.attributes.WEIGHTS_0 = doc.add_accessor(skin.weights[at], target=ARRAY_BUFFER)
    return joints, moved


def _joint_rest(centres: np.ndarray) -> np.ndarray:
    m = np.tile(np.eye(4), (len(centres), 1, 1))
    m[:, :3, 3] = centres
    return m


def _scene(doc: GltfDocument) -> list[int]:
    gltf = doc.gltf
    scene = gltf.scenes[gltf.scene or 0]
    if scene.nodes is None:
        scene.nodes = []
    return scene.nodes


def _skinned_root(doc: GltfDocument, node_i: int, moved: dict[int, int]) -> int:
    """The node that carries ``node_i``'s mesh with a skin, a scene root without a transform:
    the node itself where nothing hangs below it and no animation moves it (taken from its
    parent; its placement is in the inverse bind matrices), else a new scene root that takes
    its mesh and default morph weights (``moved``; the file's weight tracks of it follow,
    see :func:`retarget_weights`)."""
    gltf = doc.gltf
    node = gltf.nodes[node_i]
    roots = _scene(doc)
    driven = {ch.target.node for a in gltf.animations for ch in a.channels
              if ch.target.path in ("translation", "rotation", "scale")}
    if not node.children and node_i not in driven:
        for other in gltf.nodes:
            if other.children and node_i in other.children:
                other.children = [c for c in other.children if c != node_i]
        if node_i not in roots:
            roots.append(node_i)
        node.matrix = node.translation = node.rotation = node.scale = None
        return node_i
    gltf.nodes.append(Node(name=node.name, mesh=node.mesh, weights=node.weights))
    node.mesh, node.weights = None, None
    roots.append(len(gltf.nodes) - 1)
    moved[node_i] = len(gltf.nodes) - 1
    return moved[node_i]


def retarget_weights(doc: GltfDocument, moved: dict[int, int]) -> None:
    """Point the file's morph weight tracks of each moved mesh's old node at its new one."""
    for anim in doc.gltf.animations:
        for ch in anim.channels:
            if ch.target.path == "weights" and ch.target.node in moved:
                ch.target.node = moved[ch.target.node]


def joint_animations(doc: GltfDocument, joints: list[int], skin: Skin, lengths: list[int],
                     fps: float, names: Sequence[str] | None) -> list[pygltflib.Animation]:
    """One animation per motion (``lengths`` frames each, the skin's frames in order): every
    joint's translation and rotation, LINEAR, at the keys linear interpolation needs
    (:func:`needed_keys`). Appended to the document and returned."""
    size = float(np.linalg.norm(np.ptp(skin.centres, axis=0))) or 1.0
    anims, start, added = doc.gltf.animations, 0, []
    for i, t in enumerate(lengths):
        inputs: dict[bytes, int] = {}  # key frames -> their times' accessor, shared
        samplers, channels = [], []
        for j, node in enumerate(joints):
            for path, values, tol in (
                    ("translation", skin.translations[start:start + t, j], KEY_ERROR * size),
                    ("rotation", skin.rotations[start:start + t, j], KEY_ERROR)):
                keys = needed_keys(values, tol)
                if len(keys) > SHARED * t:  # its own times would cost more than they save
                    keys = np.arange(t)
                if keys.tobytes() not in inputs:
                    inputs[keys.tobytes()] = doc.add_accessor((keys / fps).astype(np.float32),
                                                              minmax=True)
                samplers.append(pygltflib.AnimationSampler(
                    input=inputs[keys.tobytes()], interpolation="LINEAR",
                    output=_track(doc, values[keys], path)))
                channels.append(pygltflib.AnimationChannel(
                    sampler=len(samplers) - 1,
                    target=pygltflib.AnimationChannelTarget(node=node, path=path)))
        start += t
        anims.append(pygltflib.Animation(name=animation_name(names, i, len(lengths)),
                                         samplers=samplers, channels=channels))
        added.append(anims[-1])
    return added


def _track(doc: GltfDocument, values: np.ndarray, path: str) -> int:
    """A track's values as an accessor: translations as float32, rotations as normalized
    int16 (the core specification allows it for rotations: 1/32767 a component, a turn of
    about 6e-5 rad at most, against float32's 16 bytes a key; the flag's 128 joints: 0.60
    MB -> 0.48 MB)."""
    if path != "rotation":
        return doc.add_accessor(values.astype(np.float32))
    index = doc.add_accessor(np.round(np.clip(values, -1.0, 1.0) * 32767).astype(np.int16))
    doc.gltf.accessors[index].normalized = True
    return index


def animation_name(names: Sequence[str] | None, i: int, count: int) -> str:
    """Our i-th of ``count`` animations' name: the one given, else ``neurok`` (one) or
    ``neurok_<i>`` (gltf/anim.is_ours knows them by it)."""
    if names:
        return names[i]
    return "neurok" if count == 1 else f"neurok_{i}"


def hold_weights(doc: GltfDocument, anims: list[pygltflib.Animation], node: int,
                 weights: Sequence[float], lengths: list[int], fps: float) -> None:
    """Add to each of ``anims`` (``lengths`` frames each) a ``weights`` channel holding
    ``node``'s morph weights at ``weights`` from its first frame to its last."""
    values = doc.add_accessor(np.tile(np.asarray(weights, np.float32), 2))
    for anim, t in zip(anims, lengths):
        times = doc.add_accessor(np.array([0.0, max(t - 1, 1) / fps], np.float32), minmax=True)
        anim.samplers.append(pygltflib.AnimationSampler(input=times, interpolation="LINEAR",
                                                        output=values))
        anim.channels.append(pygltflib.AnimationChannel(
            sampler=len(anim.samplers) - 1,
            target=pygltflib.AnimationChannelTarget(node=node, path="weights")))


def needed_keys(values: np.ndarray, tolerance: float) -> np.ndarray:
    """The frames of a track (T, C) to keep so that linear interpolation between them gives
    every frame within ``tolerance`` (per component): greedily, each key reaching as far as
    it can, REACH frames at most (so a long still track costs linear time, not quadratic).
    The first and last frames are always kept (a body at rest after a landing keeps
    two keys where it had dozens)."""
    t = len(values)
    keys, i = [0], 0
    while i < t - 1:
        j = i + 1
        while j + 1 < min(t, i + REACH + 1):
            span = np.arange(i + 1, j + 1)
            u = ((span - i) / (j + 1 - i))[:, None]
            line = (1 - u) * values[i] + u * values[j + 1]
            if np.abs(line - values[i + 1:j + 1]).max() > tolerance:
                break
            j += 1
        keys.append(j)
        i = j
    return np.asarray(keys, np.int64)


def inverse_binds(doc: GltfDocument, skin_index: int) -> np.ndarray:
    """(J, 4, 4) a skin's inverse bind matrices (the identity where it has none)."""
    skin = doc.gltf.skins[skin_index]
    count = len(skin.joints or [])
    if skin.inverseBindMatrices is None:
        return np.tile(np.eye(4), (count, 1, 1))
    ibm = doc.accessor(skin.inverseBindMatrices).astype(np.float64).reshape(-1, 4, 4)
    return ibm.transpose(0, 2, 1)[:count]  # column-major in the file


def skin_matrices(doc: GltfDocument, skin_index: int, world: dict[int, np.ndarray],
                  binds: np.ndarray | None = None) -> np.ndarray:
    """(J, 4, 4) a skin's joint matrices: each joint's world matrix times its inverse bind
    matrix (``binds``, read from the file when not given)."""
    joints = doc.gltf.skins[skin_index].joints or []
    binds = inverse_binds(doc, skin_index) if binds is None else binds
    return np.stack([world.get(j, np.eye(4)) for j in joints]) @ binds


def primitive_skin(doc: GltfDocument, prim: pygltflib.Primitive
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """(joints (n, 4) int64, weights (n, 4) float64) of a primitive's first influence set,
    or None where it has none."""
    a = prim.attributes
    if a.JOINTS_0 is None or a.WEIGHTS_0 is None:
        return None
    return (doc.accessor(a.JOINTS_0).astype(np.int64),
            doc.accessor(a.WEIGHTS_0).astype(np.float64))
