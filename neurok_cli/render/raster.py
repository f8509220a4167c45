"""NumPy side of preview rendering: scene set-up (framing, key light, floor) and a fallback
rasterizer for machines without EGL.

``rasterize`` runs no Python loop per triangle: triangles are bucketed by the power-of-two
size of their screen bounding box, and each bucket tests all candidate pixels of all its
triangles at once as (B, ky, kx) arrays. The z-buffer is resolved by sorting fragments on
(pixel, depth) and keeping the first of each pixel. ``NumpyRenderer`` shades with the same
camera, lights and floor as the OpenGL backend in ``render.py``; shadows come from a shadow
map drawn by the same rasterizer from the key light's view.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..io.colors import linear_to_srgb, srgb_to_linear
from ..io.normals import vertex_normals

_MAX_CANDIDATES = 1 << 21  # candidate pixels per chunk: ~10 float32 arrays stay near 100 MB
_EDGE_EPS = -1e-5  # barycentric tolerance, so shared edges leave no cracks
SHADOW_OFFSET = (1.0, 2.0)  # normal offset of shadow lookups: a + b * (1 - n.l), in texels
SHADOW_BIAS = 1.5  # depth bias of shadow lookups, in texels


@dataclass(frozen=True)
class Lighting:
    """Linear-RGB light and material constants, shared by both backends."""

    key: tuple[float, float, float] = (0.78, 0.75, 0.70)  # directional key light (casts shadow)
    sky: tuple[float, float, float] = (0.34, 0.37, 0.42)  # hemisphere fill from above
    bounce: tuple[float, float, float] = (0.13, 0.12, 0.11)  # hemisphere fill from below
    background: tuple[float, float, float] = (0.74, 0.76, 0.80)
    ground_albedo: float = 0.80  # light grey floor
    checker: float = 0.04  # relative albedo contrast of the floor's checker
    specular: float = 0.15
    shininess: float = 40.0


@dataclass
class Scene:
    """Frame-independent view set-up (world units, +Y up), computed once per animation."""

    width: int
    height: int
    eye: np.ndarray  # (3,) camera position
    view_proj: np.ndarray  # (4, 4) world -> clip, OpenGL conventions
    light_dir: np.ndarray  # (3,) unit vector towards the key light
    light_vp: np.ndarray  # (4, 4) world -> light clip (orthographic)
    light_half: float  # half-width of the light's view, world units
    light_depth: float  # far - near of the light's view, world units
    center: np.ndarray  # (3,) centre of the animation's bounding box
    ground: bool  # draw the floor
    ground_y: float  # floor height
    checker: float  # floor checker cell size, world units
    fade: tuple[float, float]  # the floor fades into the background between these xz distances
    lighting: Lighting = field(default_factory=Lighting)


@dataclass
class PreparedPart:
    """A validated part, ready to draw."""

    faces: np.ndarray  # (F, 3) int64
    n_vertices: int  # N
    base_color: np.ndarray  # (3,) float32, linear RGB
    uvs: np.ndarray | None  # (N, 2) float32, only together with a texture
    texture: np.ndarray | None  # (H, W, 3) uint8 sRGB, only together with uvs
    groups: np.ndarray | None  # (N,) smooth-group ids in [0, N), or None: one per vertex

    def normals(self, positions: np.ndarray) -> np.ndarray:
        """Smooth unit vertex normals (N, 3) float32 of ``positions`` (N, 3)."""
        return vertex_normals(positions, self.faces, self.groups).astype(np.float32)


@dataclass
class Fragments:
    """Visible fragments: the nearest triangle at each covered pixel."""

    pixel: np.ndarray  # (P,) int64 flat index row * width + col, row 0 at the top
    face: np.ndarray  # (P,) int64 index into the faces given to ``rasterize``
    bary: np.ndarray  # (P, 3) float32 barycentrics (perspective-correct when inv_w given)
    depth: np.ndarray  # (P,) float32 interpolated depth


def frame_scene(frames: Sequence[np.ndarray], width: int, height: int, *, azimuth: float,
                elevation: float, fov_y: float, ground: bool = True) -> Scene:
    """Camera, key light and floor for positions ``frames`` (each (T, N, 3)), all frames seen.

    ``azimuth`` (degrees about +Y, 0 looks from +Z), ``elevation`` (degrees above the horizon)
    and ``fov_y`` (degrees) place a ``width`` x ``height`` pixel camera.

    The camera looks at the centre of the bounding box of every frame of every part from a
    distance where the bounding sphere fits both fields of view with a 10% margin, so a moving
    object stays in view and the camera does not jitter.
    """
    pts = [f.reshape(-1, 3) for f in frames if f.size]
    lo = np.min([p.min(0) for p in pts], axis=0) if pts else np.zeros(3)
    hi = np.max([p.max(0) for p in pts], axis=0) if pts else np.zeros(3)
    center = (lo + hi) / 2.0
    radius = float(np.linalg.norm(hi - lo)) / 2.0 or 1.0
    aspect = width / height
    half_y = math.radians(fov_y) / 2.0
    half_min = min(half_y, math.atan(math.tan(half_y) * aspect))
    dist = 1.1 * radius / math.sin(half_min)
    az = math.radians(azimuth)
    el = math.radians(float(np.clip(elevation, -89.0, 89.0)))
    toward_eye = np.array([math.sin(az) * math.cos(el), math.sin(el), math.cos(az) * math.cos(el)])
    eye = center + dist * toward_eye
    view = _look_at(eye, center, np.array([0.0, 1.0, 0.0]))
    proj = _perspective(fov_y, aspect, 0.05 * dist, dist + 40.0 * radius)
    # Key light from the viewer's upper left and slightly in front: the shadow falls to the
    # back right, where it is visible, whatever the azimuth.
    right = np.array([math.cos(az), 0.0, -math.sin(az)])
    toward_cam = np.array([math.sin(az), 0.0, math.cos(az)])
    light = -0.6 * right + 1.0 * np.array([0.0, 1.0, 0.0]) + 0.4 * toward_cam
    light /= np.linalg.norm(light)
    half, near = 1.05 * radius, 0.5 * radius
    far = 3.0 * radius + 4.0 * radius / max(light[1], 0.25)  # reaches the floor behind it
    light_view = _look_at(center + 2.0 * radius * light, center, np.array([0.0, 0.0, 1.0])
                          if abs(light[1]) > 0.99 else np.array([0.0, 1.0, 0.0]))
    ground_y = float(lo[1]) - 1e-3 * radius  # a hair below, so a resting sheet does not z-fight
    return Scene(width, height, eye, proj @ view, light,
                 _ortho(half, near, far) @ light_view, half, far - near, center,
                 bool(ground) and eye[1] > ground_y, ground_y, 0.5 * radius,
                 (4.0 * radius, 12.0 * radius))


def _look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray) -> np.ndarray:
    f = (target - eye) / np.linalg.norm(target - eye)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, np.cross(s, f), -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def _perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(math.radians(fov_y) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0], m[1, 1] = f / aspect, f
    m[2, 2], m[2, 3] = (far + near) / (near - far), 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def _ortho(half: float, near: float, far: float) -> np.ndarray:
    m = np.eye(4)
    m[0, 0] = m[1, 1] = 1.0 / half
    m[2, 2], m[2, 3] = -2.0 / (far - near), -(far + near) / (far - near)
    return m


def normalize(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` (K, 3) scaled to unit length, float32; (0, 1, 0) where zero."""
    length = np.linalg.norm(v, axis=1, keepdims=True)
    ok = length[:, 0] > 1e-30
    out = np.empty(v.shape, np.float32)
    out[ok] = v[ok] / length[ok]
    out[~ok] = (0.0, 1.0, 0.0)
    return out


def linear_to_srgb8(c: np.ndarray) -> np.ndarray:
    """Linear values -> sRGB uint8 (clamped to [0, 1] first)."""
    return np.round(linear_to_srgb(c) * 255.0).astype(np.uint8)


def rasterize(xy: np.ndarray, depth: np.ndarray, faces: np.ndarray, width: int, height: int,
              inv_w: np.ndarray | None = None) -> Fragments:
    """Nearest-triangle fragments of ``faces`` (F, 3) over a (height, width) pixel grid.

    ``xy`` (V, 2) are pixel coordinates (x right, y down; pixel (c, r) has its centre at
    (c + 0.5, r + 0.5)), ``depth`` (V,) is interpolated linearly in screen space and smaller is
    nearer, ``inv_w`` (V,) = 1 / clip w makes the barycentrics perspective-correct.
    """
    tri = xy[faces].astype(np.float32)  # (F, 3, 2)
    lo = np.maximum(np.ceil(tri.min(1) - 0.5), 0).astype(np.int64)  # first pixel in the box
    hi = np.minimum(np.floor(tri.max(1) - 0.5), [width - 1, height - 1]).astype(np.int64)
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    area = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
    live = np.nonzero((hi >= lo).all(1) & (np.abs(area) > 1e-12))[0]
    pow2 = 2 ** np.ceil(np.log2(hi[live] - lo[live] + 1)).astype(np.int64)  # (F', 2) box size
    key = pow2[:, 0] * (1 << 20) + pow2[:, 1]
    chunks = []
    for k in np.unique(key):
        members = live[key == k]
        kx, ky = int(k >> 20), int(k & ((1 << 20) - 1))
        step = max(1, _MAX_CANDIDATES // (kx * ky))
        for s in range(0, len(members), step):
            chunks.append(_candidates(members[s:s + step], tri, lo, hi, area, kx, ky, width))
    if not chunks:
        empty = np.zeros(0, np.int64)
        return Fragments(empty, empty, np.zeros((0, 3), np.float32), np.zeros(0, np.float32))
    pixel, face, bary = (np.concatenate(c) for c in zip(*chunks))
    corners = faces[face]  # (P, 3)
    z = np.einsum("pk,pk->p", bary, depth[corners]).astype(np.float32)
    order = np.lexsort((z, pixel))  # by pixel, then nearest first
    first = np.ones(len(order), bool)
    first[1:] = pixel[order[1:]] != pixel[order[:-1]]
    keep = order[first]
    bary = bary[keep]
    if inv_w is not None:
        bary = bary * inv_w[corners[keep]]
        bary /= bary.sum(1, keepdims=True)
    return Fragments(pixel[keep], face[keep], bary.astype(np.float32), z[keep])


def _candidates(idx: np.ndarray, tri: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                area: np.ndarray, kx: int, ky: int, width: int,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixels of triangles ``idx`` tested on a (ky, kx) grid at their box corners."""
    t, a = tri[idx], area[idx, None, None]
    gx = lo[idx, 0, None, None] + np.arange(kx)[None, None, :]  # (B, 1, kx)
    gy = lo[idx, 1, None, None] + np.arange(ky)[None, :, None]  # (B, ky, 1)
    px = (gx + 0.5 - t[:, 0, 0, None, None]).astype(np.float32)  # relative to vertex 0
    py = (gy + 0.5 - t[:, 0, 1, None, None]).astype(np.float32)
    e1 = (t[:, 1] - t[:, 0])[:, :, None, None]  # (B, 2, 1, 1)
    e2 = (t[:, 2] - t[:, 0])[:, :, None, None]
    l1 = (px * e2[:, 1] - e2[:, 0] * py) / a  # (B, ky, kx)
    l2 = (e1[:, 0] * py - px * e1[:, 1]) / a
    inside = ((l1 >= _EDGE_EPS) & (l2 >= _EDGE_EPS) & (l1 + l2 <= 1.0 - _EDGE_EPS)
              & (gx <= hi[idx, 0, None, None]) & (gy <= hi[idx, 1, None, None]))
    b, iy, ix = np.nonzero(inside)
    l1, l2 = l1[b, iy, ix], l2[b, iy, ix]
    pixel = (lo[idx[b], 1] + iy) * width + lo[idx[b], 0] + ix
    return pixel, idx[b], np.stack([1.0 - l1 - l2, l1, l2], axis=1)


def to_screen(points: np.ndarray, matrix: np.ndarray, width: int, height: int,
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Project world ``points`` (V, 3) by ``matrix`` (4, 4): pixel xy (V, 2), NDC z, 1 / w."""
    clip = points @ matrix[:3, :3].T + matrix[:3, 3]  # (V, 3)
    w = points @ matrix[3, :3] + matrix[3, 3]
    inv_w = 1.0 / np.where(np.abs(w) > 1e-12, w, 1e-12)
    ndc = clip * inv_w[:, None]
    xy = np.stack([(ndc[:, 0] + 1.0) * 0.5 * width, (1.0 - ndc[:, 1]) * 0.5 * height], axis=1)
    return xy, ndc[:, 2], inv_w


class NumpyRenderer:
    """Draws frames of ``parts`` in ``scene`` on the CPU; same look as the GL backend."""

    def __init__(self, scene: Scene, parts: list[PreparedPart], shadow_size: int = 512) -> None:
        self.scene, self.parts, self.shadow_size = scene, parts, shadow_size
        sizes = [p.n_vertices for p in parts]
        offsets = np.cumsum([0, *sizes])
        self._faces = np.concatenate([p.faces + o for p, o in zip(parts, offsets)]
                                     + [np.zeros((0, 3), np.int64)])
        owner = np.repeat(np.arange(len(parts)), [len(p.faces) for p in parts])
        self._face_part = owner
        self._face_start = np.cumsum([0] + [len(p.faces) for p in parts])
        self._albedo = np.float32([p.base_color[:3] for p in parts]).reshape(-1, 3)[owner]
        self._textures = {i: srgb_to_linear(p.texture / 255.0).astype(np.float32)
                          for i, p in enumerate(parts) if p.texture is not None}
        texel = 2.0 * scene.light_half / shadow_size
        self._offset = (SHADOW_OFFSET[0] * texel, SHADOW_OFFSET[1] * texel)
        self._bias = SHADOW_BIAS * texel / scene.light_depth
        self._ground = _ground_pixels(scene) if scene.ground else None

    def frame(self, positions: list[np.ndarray]) -> np.ndarray:
        """Image (H, W, 3) uint8 sRGB of parts at ``positions`` (one (N_p, 3) per part)."""
        s = self.scene
        pos = np.concatenate([*positions, np.zeros((0, 3))]).astype(np.float32)  # (V, 3)
        nrm = np.concatenate([*(p.normals(x) for p, x in zip(self.parts, positions)),
                              np.zeros((0, 3), np.float32)])
        smap = self._shadow_map(pos)
        img = np.empty((s.height * s.width, 3), np.float32)
        img[:] = s.lighting.background
        if self._ground is not None:
            pix, world, albedo, fade = self._ground
            up = np.broadcast_to(np.float32([0.0, 1.0, 0.0]), world.shape)
            color = self._shade(albedo, up, world, self._shadow(smap, world, up), False)
            img[pix] = color + (np.float32(s.lighting.background) - color) * fade[:, None]
        xy, z, inv_w = to_screen(pos, s.view_proj, s.width, s.height)
        kept = np.nonzero((inv_w[self._faces] > 0).all(1))[0]  # in front of the camera
        fr = rasterize(xy, z, self._faces[kept], s.width, s.height, inv_w)
        face = kept[fr.face]
        corners = self._faces[face]  # (P, 3)
        world = np.einsum("pk,pkc->pc", fr.bary, pos[corners])
        n = normalize(np.einsum("pk,pkc->pc", fr.bary, nrm[corners]))
        tri = pos[corners]
        geo = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        back = np.einsum("pc,pc->p", geo, s.eye - tri[:, 0]) < 0  # double-sided lighting
        n[back] *= -1.0
        albedo = self._sample_albedo(face, fr.bary)
        img[fr.pixel] = self._shade(albedo, n, world, self._shadow(smap, world, n), True)
        return linear_to_srgb8(img).reshape(s.height, s.width, 3)

    def _sample_albedo(self, face: np.ndarray, bary: np.ndarray) -> np.ndarray:
        albedo = self._albedo[face]
        for i, tex in self._textures.items():
            sel = np.nonzero(self._face_part[face] == i)[0]
            part = self.parts[i]
            local = face[sel] - self._face_start[i]
            uv = np.einsum("pk,pkc->pc", bary[sel], part.uvs[part.faces[local]])
            albedo[sel] *= _bilinear(tex, uv)
        return albedo

    def _shadow_map(self, pos: np.ndarray) -> np.ndarray:
        """Light-view depth (S, S) in [0, 1], rows top-first; 1 where nothing is drawn."""
        size = self.shadow_size
        xy, z, _ = to_screen(pos, self.scene.light_vp, size, size)
        fr = rasterize(xy, z * 0.5 + 0.5, self._faces, size, size)
        smap = np.ones(size * size, np.float32)
        smap[fr.pixel] = fr.depth
        return smap.reshape(size, size)

    def _shadow(self, smap: np.ndarray, world: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Fraction (K,) of the key light reaching points ``world`` (K, 3); 3x3 PCF."""
        size = self.shadow_size
        ndl = np.clip(n @ self.scene.light_dir, 0.0, 1.0)
        q = world + n * (self._offset[0] + self._offset[1] * (1.0 - ndl))[:, None]
        xy, z, _ = to_screen(q, self.scene.light_vp, size, size)
        ref = z * 0.5 + 0.5 - self._bias
        ix, iy = np.floor(xy[:, 0]).astype(np.int64), np.floor(xy[:, 1]).astype(np.int64)
        lit = np.zeros(len(world), np.float32)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                tap = smap[np.clip(iy + dy, 0, size - 1), np.clip(ix + dx, 0, size - 1)]
                lit += ref <= tap
        lit /= 9.0
        lit[ref > 1.0] = 1.0  # beyond the light's far plane: nothing there to cast
        return lit

    def _shade(self, albedo: np.ndarray, n: np.ndarray, world: np.ndarray, lit: np.ndarray,
               specular: bool) -> np.ndarray:
        """Linear RGB (K, 3): key light times shadow, hemisphere fill, optional Blinn-Phong."""
        lg, light = self.scene.lighting, self.scene.light_dir
        ndl = np.clip(n @ light, 0.0, None)
        bounce = np.float32(lg.bounce)
        hemi = bounce + (np.float32(lg.sky) - bounce) * (0.5 + 0.5 * n[:, 1:2])
        key = np.float32(lg.key)
        color = albedo * (key * (ndl * lit)[:, None] + hemi)
        if specular:
            h = normalize(normalize(self.scene.eye - world) + light)
            spec = np.clip(np.einsum("pc,pc->p", n, h), 0.0, None) ** lg.shininess
            color += lg.specular * key * (spec * lit * (ndl > 0))[:, None]
        return color


def _bilinear(tex: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Sample ``tex`` (H, W, 3) at ``uv`` (K, 2) (v = 0 at the top row), repeat wrap."""
    h, w = tex.shape[:2]
    x, y = uv[:, 0] * w - 0.5, uv[:, 1] * h - 0.5
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    x0, y0 = x0.astype(np.int64) % w, y0.astype(np.int64) % h
    x1, y1 = (x0 + 1) % w, (y0 + 1) % h
    top = tex[y0, x0] * (1 - fx) + tex[y0, x1] * fx
    bottom = tex[y1, x0] * (1 - fx) + tex[y1, x1] * fx
    return top * (1 - fy) + bottom * fy


def _ground_pixels(scene: Scene) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pixels whose view ray meets the floor: flat index, world point, albedo, fade to bg."""
    w, h = scene.width, scene.height
    cols, rows = np.meshgrid(np.arange(w), np.arange(h))
    ndc = np.stack([(cols.ravel() + 0.5) / w * 2 - 1, 1 - (rows.ravel() + 0.5) / h * 2], 1)
    inv = np.linalg.inv(scene.view_proj)
    ends = []
    for z in (-1.0, 1.0):
        p = np.concatenate([ndc, np.full((len(ndc), 1), z), np.ones((len(ndc), 1))], 1) @ inv.T
        ends.append(p[:, :3] / p[:, 3:])
    d = ends[1] - ends[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (scene.ground_y - ends[0][:, 1]) / d[:, 1]
    world = ends[0] + t[:, None] * d
    dist = np.linalg.norm(world[:, [0, 2]] - scene.center[[0, 2]], axis=1)
    pix = np.nonzero((d[:, 1] < 0) & (t > 0) & (dist < scene.fade[1]))[0]
    world, dist = world[pix].astype(np.float32), dist[pix]
    parity = np.mod(np.floor(world[:, 0] / scene.checker) + np.floor(world[:, 2] / scene.checker),
                    2.0)
    lg = scene.lighting
    albedo = lg.ground_albedo * (1.0 + lg.checker * (2.0 * parity - 1.0))
    x = np.clip((dist - scene.fade[0]) / (scene.fade[1] - scene.fade[0]), 0.0, 1.0)
    fade = x * x * (3.0 - 2.0 * x)  # smoothstep, as in GLSL
    albedo3 = np.repeat(albedo[:, None], 3, axis=1).astype(np.float32)
    return pix, world, albedo3, fade.astype(np.float32)
