"""The clip as one web page (``-o clip.html``): its GLB played by three.js, offline.

Everything is in the file: Chromium refuses module scripts and fetches from ``file://``, so
three.js (r181, vendored in ``web/`` with its MIT licence, which the page repeats, and
meshoptimizer's decoder that ships with it, MIT) goes in as ``data:`` modules named by an
import map, the GLB as base64, meshopt-compressed (io/gltf/meshopt.py: the milk truck's page
4.7 MB where it was 7.3), and the page's own module (``web/page.js``) inline, with our other
modules (``OWN``: the reduced model's steps, the live object) as ``data:`` modules too. The
two imports that name a sibling file (three.js's core, the glTF loader's geometry utilities)
are renamed to import-map names as the page is written, and so are our modules' imports of
each other (``./reduced_step.js``: relative, so that node runs them from ``web/`` as they are,
tools/reduced_run.mjs).

The framing is ``neurok preview``'s (``raster.frame_scene``: every frame in view, the floor
at the clip's lowest point) and so are the lights' colours (``raster.Lighting``); the camera
orbits with the mouse or a finger. Play, pause, reset and a time slider; the caption says
what the clip is. docs/design.md#the-page says what the page holds and what it does not yet.
"""

from __future__ import annotations

import base64
import html
import json
import re
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..io.asset import Asset
from ..io.atomic import atomic_path
from ..io.reduced import ReducedModel, pack

WEB = Path(__file__).parent / "web"
VENDORED = {  # import-map name -> vendored file
    "three": "three.module.min.js",
    "three/core": "three.core.min.js",
    "three/addons/loaders/GLTFLoader.js": "GLTFLoader.js",
    "three/addons/utils/BufferGeometryUtils.js": "BufferGeometryUtils.js",
    "three/addons/controls/OrbitControls.js": "OrbitControls.js",
    "three/addons/libs/meshopt_decoder.module.js": "meshopt_decoder.module.js",
}
OWN = {  # import-map name -> our module (page.js, the page's entry, goes in inline)
    "neurok/reduced": "reduced.js",  # the reduced model's own steps: a run, the bones
    "neurok/reduced/model": "reduced_model.js",  # reading the model's bytes
    "neurok/reduced/step": "reduced_step.js",  # the Stepper: its state, one step, the hand
    "neurok/reduced/elastic": "reduced_elastic.js",  # the elements' operator, rest Hessian
    "neurok/reduced/potential": "reduced_potential.js",  # forces, the incremental potential
    "neurok/reduced/contact": "reduced_contact.js",  # the ground and friction
    "neurok/reduced/precondition": "reduced_precondition.js",  # the Cholesky preconditioner
    "neurok/reduced/minimize": "reduced_minimize.js",  # L-BFGS
    "neurok/reduced/material": "reduced_material.js",  # Neo-Hookean, membrane, patches
    "neurok/reduced/sparse": "reduced_sparse.js",  # CSR rows and products
    "neurok/reduced/dense": "reduced_dense.js",  # Cholesky, small solves, 3x3 eigen, polar
    "neurok/page/data": "page_data.js",  # the page's embedded bytes
    "neurok/page/live": "page_live.js",  # the live object: skinned meshes, pointer, controls
    "neurok/cloth": "cloth.js",  # a cloth's own steps: projective dynamics, the hand, a run
    "neurok/cloth/fabric": "cloth_fabric.js",  # its projections and its air
    "neurok/cloth/band": "cloth_band.js",  # its global step's banded Cholesky factor, solves
    "neurok/cloth/carry": "cloth_carry.js",  # the simulation mesh to the welded surface
    "neurok/cloth/live": "cloth_live.js",  # a cloth's live object: plain meshes' positions
    "neurok/cloth/repel": "cloth_repel.js",  # the live cloth's cheap self-repulsion
    "neurok/cloth/sweep": "cloth_sweep.js",  # its broad phase: a grid over the vertices' sweeps
}
MODULES = {**VENDORED, **OWN}  # the page's import map
MOST_LIVE_HANDLES = 128  # a page steps at most this many handles live (a factor of 1,536
# unknowns: about a second's stall in a browser; more, and it plays the clip only)
RENAMES = {  # sibling imports, as three.js 0.181 writes them, -> import-map names
    "three.module.min.js": ('from"./three.core.min.js"', 'from"three/core"'),
    "GLTFLoader.js": ("from '../utils/BufferGeometryUtils.js'",
                      "from 'three/addons/utils/BufferGeometryUtils.js'"),
}
RELATIVE = re.compile(r"""\b(from|import)(\s*)(["'])(\.{1,2}/[^"'\s]*)\3""")  # "./x.js"


def _source(file: str) -> str:
    """A module's text as the page holds it: its sibling imports renamed to import-map names
    (a ``data:`` module, or the page's inline one, resolves no relative path)."""
    text = (WEB / file).read_text(encoding="utf-8")
    if file in RENAMES:
        old, new = RENAMES[file]
        if old not in text:  # a three.js update moved it: the page would not load
            raise RuntimeError(f"render/web/{file}: no {old!r} to rename")
        text = text.replace(old, new)
    if file in VENDORED.values():
        return text
    names = {f"./{own}": name for name, own in OWN.items()}

    def rename(m: re.Match) -> str:
        if m.group(4) not in names:  # a module OWN does not list: the page would not load
            raise RuntimeError(f"render/web/{file}: imports {m.group(4)!r}, not in page.OWN")
        return f'{m.group(1)}{m.group(2)}"{names[m.group(4)]}"'

    return RELATIVE.sub(rename, text)


def _module(file: str) -> str:
    """A module as a ``data:`` URL, its sibling imports renamed."""
    text = _source(file)
    return "data:text/javascript;base64," + base64.b64encode(text.encode()).decode()


def _framing(frames: np.ndarray) -> dict:
    """``neurok preview``'s camera target, size and floor for world frames (T, N, 3)."""
    from .raster import Lighting, frame_scene
    from .renderer import Camera

    cam = Camera()
    scene = frame_scene([frames], cam.width, cam.height, azimuth=cam.azimuth,
                        elevation=cam.elevation, fov_y=cam.fov_y)
    light = Lighting()
    lo, hi = frames.reshape(-1, 3).min(axis=0), frames.reshape(-1, 3).max(axis=0)
    return {"centre": [float(x) for x in scene.center],
            "radius": float(np.linalg.norm(hi - lo)) / 2.0 or 1.0,
            "ground": scene.ground_y if scene.ground else None,
            "azimuth": cam.azimuth, "elevation": cam.elevation, "fov": cam.fov_y,
            "lighting": {**{k: v for k, v in asdict(light).items()
                            if k in ("key", "sky", "bounce", "background")},
                         "ground": light.ground_albedo}}


def _inline_json(value) -> str:
    """``value`` as JSON safe inside a <script> element: every '<' written as \\u003c, so
    that neither '</script', '<!--' nor '<script' in a name (a file's, a caption's) ends the
    element or sends an HTML parser into the script's escaped states."""
    return json.dumps(value).replace("<", "\\u003c")


def page_html(glb: bytes, frames: np.ndarray, *, title: str, caption: str,
              live: bytes | None = None) -> str:
    """The page for the GLB ``glb`` whose played clip has world frames ``frames`` (T, N, 3);
    ``live``: the reduced model the page steps itself (deflated, see :func:`live_model`)."""
    imports = {name: _module(file) for name, file in MODULES.items()}
    config = _inline_json({**_framing(frames), "caption": caption, "live": live is not None})
    live_tag = ("" if live is None else '<script type="text/plain" id="neurok-live">'
                f"{base64.b64encode(live).decode()}</script>\n")
    script = _source("page.js")
    licence = (WEB / "THREE_LICENSE").read_text(encoding="utf-8").replace("--", "- -")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
html, body {{ margin: 0; height: 100%; overflow: hidden; font: 14px system-ui, sans-serif; }}
#view {{ position: fixed; inset: 0; touch-action: none; }}
#bar {{ position: fixed; left: 0; right: 0; bottom: 0; display: flex; gap: 10px;
  align-items: center; padding: 8px 12px; background: rgba(255, 255, 255, 0.8); }}
#time {{ flex: 1; min-width: 80px; }}
#clock {{ font-variant-numeric: tabular-nums; white-space: nowrap; }}
#live {{ display: flex; gap: 10px; align-items: center; white-space: nowrap; }}
#live[hidden] {{ display: none; }}
#live input[type=range] {{ width: 90px; }}
#caption {{ color: #333; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
</style>
<script type="importmap">{_inline_json({"imports": imports})}</script>
</head>
<body>
<div id="view"></div>
<div id="bar"><button id="play">Pause</button><button id="reset">Reset</button>
<input id="time" type="range" min="0" max="1" step="0.001" value="0" aria-label="time">
<span id="clock"></span>
<span id="live" hidden><label title="scale on the material's Young's modulus">stiffness
<input id="stiffness" type="range" min="-1" max="1" step="0.05" value="0"></label>
<label><input id="gravity" type="checkbox" checked>gravity</label>
<label>wind <input id="wind" type="range" min="0" max="20" step="0.5" value="0"></label></span>
<span id="caption">{html.escape(caption)}</span></div>
<script type="application/json" id="neurok-config">{config}</script>
<script type="text/plain" id="neurok-model">{base64.b64encode(glb).decode()}</script>
{live_tag}<script type="module">
{script}
</script>
<!-- three.js r181 (https://threejs.org), inlined above:
{licence}
meshoptimizer's decoder (https://github.com/zeux/meshoptimizer), inlined above, is MIT
licensed too: Copyright (c) 2016-2024 Arseny Kapoulkine. -->
</body>
</html>
"""


def live_model(model: ReducedModel, index: np.ndarray, to_file: np.ndarray,
               root: np.ndarray, played: np.ndarray) -> bytes | None:
    """The reduced model with the page's binding, packed and deflated: ``page_vertex`` (N,)
    the model's vertex under each of the page's (``index``: the asset's vertices, which the
    page's meshes list in order) and ``page_from_model`` (4, 3): world = [x, 1] @ it, the
    model's frame to the file's (``to_file`` (4, 3), alike) and the file's to the page's
    world (``root`` (4, 4), the GLB's root node). None where that does not put the model's
    rest where the page shows the clip's first frame, ``played`` (N, 3), vertex by vertex
    (meshes listed in another order; a file whose own animation moves it at the start);
    or where the model has more handles than a page steps live (MOST_LIVE_HANDLES)."""
    index = np.asarray(index)
    if len(index) != len(played) or model.values["handles"] > MOST_LIVE_HANDLES:
        return None
    A = np.vstack([to_file[:3] @ root[:3, :3].T, to_file[3] @ root[:3, :3].T + root[:3, 3]])
    rest = np.concatenate([model.arrays["rest"][index], np.ones((len(index), 1))], axis=1)
    diag = float(np.linalg.norm(np.ptp(played, axis=0))) or 1.0
    if np.abs(rest @ A - played).max() > 1e-3 * diag:  # (the clip's encoding: 1e-3)
        return None
    arrays = {**model.arrays, "page_vertex": index.astype(np.int32), "page_from_model": A}
    return zlib.compress(pack(ReducedModel(arrays, model.values)), 9)


def write_page(asset: Asset, motions: Sequence[np.ndarray], path: str | Path, *, fps: float,
               caption: str,
               live: tuple[ReducedModel, np.ndarray, np.ndarray] | None = None,
               **gltf) -> tuple[int, dict]:
    """Write ``motions[0]`` ((T, N, 3) file-frame positions of ``asset.vertices``) as a page
    at ``path`` (atomically); ``gltf``: write_animated's options for the GLB inside; ``live``:
    the reduced model that moved it, the model's vertex under each of the asset's and the
    model's frame to the file's ((4, 3): file = [x, 1] @ it), for the page to step itself.
    Returns the page's size in bytes and the GLB writer's details."""
    from ..io.gltf import read_animated, write_animated
    from ..io.gltf.build import root_of

    with tempfile.TemporaryDirectory() as tmp:
        glb = Path(tmp) / "clip.glb"
        rep = write_animated(asset, list(motions[:1]), glb, fps=fps, meshopt=True, **gltf)
        played = read_animated(glb, fps=fps, animations=[0]).frames
        blob = None if live is None else live_model(
            *live, root_of(asset, gltf.get("root_matrix")), played[0])
        text = page_html(glb.read_bytes(), played, title=f"{Path(path).stem} (neurok)",
                         caption=caption, live=blob)
    with atomic_path(path) as out:
        out.write_text(text, encoding="utf-8")
    return Path(path).stat().st_size, {"targets": rep.targets, "encoding": rep.encoding,
                                       "max_error": rep.max_error, "live": blob is not None}
