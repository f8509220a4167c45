"""Preview rendering of animated meshes: the public API and the OpenGL backend.

``render_frames`` frames the camera on the whole animation, lights the scene (one shadowed key
light, a hemisphere fill, a ground plane) and yields sRGB images. The ``gl`` backend draws with
moderngl (the ``gl`` extra) in a headless EGL context (4x MSAA, PCF shadow map); the ``numpy``
backend (``raster.py``) is a pure-NumPy rasterizer with the same camera and lighting, for
machines without EGL or moderngl. Both read the frame-independent set-up from one ``Scene``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DependencyError, InputError, UsageError
from ..extras import require
from .raster import (
    SHADOW_BIAS,
    SHADOW_OFFSET,
    NumpyRenderer,
    PreparedPart,
    Scene,
    frame_scene,
    linear_to_srgb8,
)


@dataclass
class RenderPart:
    """One drawable piece of a scene (a glTF primitive instance, an OBJ group)."""

    faces: np.ndarray  # (F, 3) int32 indices into this part's vertices
    base_color: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)  # linear RGBA in [0, 1]
    uvs: np.ndarray | None = None  # (N, 2) float32, glTF convention (v = 0 at the image top)
    texture: np.ndarray | None = None  # (H, W, 3|4) uint8 base-color image, sRGB
    # (N,) int: vertices with equal ids share one smooth normal (welded position id), so UV
    # seams do not show as creases; None = use the vertex index.
    smooth_groups: np.ndarray | None = None


@dataclass
class Camera:
    """Camera options; the camera always looks at the centre of the animation's bounding box."""

    width: int = 640  # image width, pixels
    height: int = 480  # image height, pixels
    azimuth: float = 30.0  # degrees about +Y; 0 looks from +Z towards -Z
    elevation: float = 20.0  # degrees above the horizon
    fov_y: float = 35.0  # vertical field of view, degrees


Backend = Callable[[Scene, list[PreparedPart], Sequence[np.ndarray], list[int]],
                   Iterator[np.ndarray]]


def render_frames(parts: Sequence[RenderPart], positions: Sequence[np.ndarray],
                  camera: Camera | None = None, *, backend: str = "auto",
                  ground: bool = True, select: Sequence[int] | None = None
                  ) -> Iterator[np.ndarray]:
    """Render an animation frame by frame.

    ``positions[p]`` is (T, N_p, 3) float32 world positions of part ``p`` over T frames
    (+Y up, any units). ``backend`` is "auto" (gl when an EGL context can be made, else numpy),
    "gl" or "numpy". ``select``: the frames to draw (default all), framed as the whole
    animation is, so a still matches the video's view. Inputs are checked and the backend
    chosen at call time; frames are rendered lazily. Yields one image (H, W, 3) uint8 sRGB
    per frame drawn, top row first.
    """
    camera = camera or Camera()
    if camera.width < 1 or camera.height < 1 or not 0.0 < camera.fov_y < 180.0:
        raise UsageError("camera: width and height must be >= 1 and fov_y between 0 and 180")
    name = choose_backend(backend)
    prepared, frames, everything, n_frames = _check_inputs(parts, positions)
    order = list(range(n_frames)) if select is None else [int(t) for t in select]
    if any(not 0 <= t < n_frames for t in order):
        raise UsageError(f"render: frames {order} asked of an animation of {n_frames}")
    scene = frame_scene(everything, camera.width, camera.height, azimuth=camera.azimuth,
                        elevation=camera.elevation, fov_y=camera.fov_y, ground=ground)
    return _BACKENDS[name](scene, prepared, frames, order)


def available_backends() -> list[str]:
    """Backends usable on this machine, best first, e.g. ["gl", "numpy"]."""
    try:
        _gl_state()
    except DependencyError:
        return ["numpy"]
    return ["gl", "numpy"]


def choose_backend(backend: str) -> str:
    """The backend "auto", "gl" or "numpy" names on this machine ("auto": gl when an EGL
    context can be made, else numpy); UsageError for another name, DependencyError when gl
    is asked for and cannot be had. Call it before the work, so that a renderer this machine
    lacks fails at once."""
    if backend not in ("auto", *_BACKENDS):
        raise UsageError(f"unknown renderer {backend!r}; choose one of: auto, "
                         + ", ".join(_BACKENDS))
    if backend == "auto":
        return available_backends()[0]
    if backend == "gl":
        _gl_state()
    return backend


def _check_inputs(parts: Sequence[RenderPart], positions: Sequence[np.ndarray],
                  ) -> tuple[list[PreparedPart], list[np.ndarray], list[np.ndarray], int]:
    """Validate shapes; returns drawable parts, their (T, N, 3) arrays, all arrays and T."""
    if len(parts) != len(positions):
        raise InputError(f"render: {len(parts)} parts but {len(positions)} position arrays; "
                         "give one (T, N, 3) array per part")
    if not parts:
        raise InputError("render: nothing to draw; give at least one part")
    frames = [np.asarray(p) for p in positions]
    counts = {f.shape[0] if f.ndim == 3 else -1 for f in frames}
    if any(f.ndim != 3 or f.shape[2] != 3 for f in frames) or len(counts) != 1:
        raise InputError("render: positions must be (T, N, 3) arrays with the same T for "
                         "every part")
    prepared, kept = [], []
    for i, (part, pos) in enumerate(zip(parts, frames)):
        faces = np.asarray(part.faces, dtype=np.int64).reshape(-1, 3)
        n = pos.shape[1]
        if len(faces) and (faces.min() < 0 or faces.max() >= n):
            raise InputError(f"render: part {i} has face indices outside its {n} vertices; "
                             "give one position per vertex the faces use")
        if len(faces) == 0:
            continue
        groups = None
        if part.smooth_groups is not None:
            groups = np.asarray(part.smooth_groups).reshape(-1)
            if groups.shape != (n,):
                raise InputError(f"render: part {i} smooth_groups must have one id per vertex")
            groups = np.unique(groups, return_inverse=True)[1].reshape(-1)  # ids in [0, N)
        uvs, tex = _texture_inputs(part, n, i)
        color = np.asarray(part.base_color, np.float32)[:3]
        prepared.append(PreparedPart(faces, n, color, uvs, tex, groups))
        kept.append(pos)
    return prepared, kept, frames, counts.pop()


def _texture_inputs(part: RenderPart, n: int, i: int,
                    ) -> tuple[np.ndarray | None, np.ndarray | None]:
    if part.uvs is None or part.texture is None:
        return None, None
    uvs = np.asarray(part.uvs, np.float32)
    if uvs.shape != (n, 2):
        raise InputError(f"render: part {i} uvs have shape {uvs.shape}; expected ({n}, 2)")
    tex = np.asarray(part.texture)
    if tex.ndim == 2:
        tex = tex[:, :, None]
    if tex.dtype != np.uint8 or tex.ndim != 3 or tex.shape[2] not in (1, 2, 3, 4):
        raise InputError(f"render: part {i} texture must be an (H, W, 3|4) uint8 image")
    rgb = tex[:, :, :3] if tex.shape[2] >= 3 else np.repeat(tex[:, :, :1], 3, axis=2)
    return uvs, np.ascontiguousarray(rgb)


def _numpy_frames(scene: Scene, parts: list[PreparedPart], frames: Sequence[np.ndarray],
                  order: list[int]) -> Iterator[np.ndarray]:
    renderer = NumpyRenderer(scene, parts)
    for t in order:
        yield renderer.frame([np.asarray(f[t], np.float32) for f in frames])




def _gl_frames(scene: Scene, parts: list[PreparedPart], frames: Sequence[np.ndarray],
               order: list[int]) -> Iterator[np.ndarray]:
    renderer = _GLRenderer(_gl_state(), scene, parts)
    try:
        for t in order:
            yield renderer.frame([np.asarray(f[t], np.float32) for f in frames])
    finally:
        renderer.release()


_BACKENDS: dict[str, Backend] = {"gl": _gl_frames, "numpy": _numpy_frames}

# ---------------------------------------------------------------------------------------------
# OpenGL backend (moderngl, headless EGL)

_GL_SAMPLES = 4  # MSAA samples of the colour and depth renderbuffers
_GL_SHADOW_SIZE = 2048  # shadow map resolution, texels per side

_SHADOW_VS = """#version 330
uniform mat4 u_light_vp;
in vec3 in_position;
void main() { gl_Position = u_light_vp * vec4(in_position, 1.0); }
"""
_SHADOW_FS = "#version 330\nvoid main() {}\n"
_MAIN_VS = """#version 330
uniform mat4 u_view_proj;
in vec3 in_position;
in vec3 in_normal;
in vec2 in_uv;
out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;
void main() {
    v_world = in_position;
    v_normal = in_normal;
    v_uv = in_uv;
    gl_Position = u_view_proj * vec4(in_position, 1.0);
}
"""
# Same lighting as raster.NumpyRenderer._shade: keep the two in step.
_MAIN_FS = """#version 330
uniform vec3 u_eye, u_light_dir, u_key, u_sky, u_bounce, u_background, u_albedo;
uniform float u_specular, u_shininess, u_checker, u_checker_contrast, u_shadow_bias, u_texel;
uniform vec2 u_center, u_fade, u_shadow_offset;
uniform bool u_use_texture, u_is_ground;
uniform sampler2D u_texture;
uniform sampler2DShadow u_shadow;
uniform mat4 u_light_vp;
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv;
out vec4 f_color;

vec3 to_linear(vec3 c) {
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}
vec3 to_srgb(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));
}
float lit_fraction(vec3 n, float ndl) {  // 3x3 PCF, normal offset against acne
    vec3 q = v_world + n * (u_shadow_offset.x + u_shadow_offset.y * (1.0 - ndl));
    vec3 c = (u_light_vp * vec4(q, 1.0)).xyz * 0.5 + 0.5;
    float ref = c.z - u_shadow_bias;
    if (ref > 1.0) return 1.0;
    float s = 0.0;
    for (int y = -1; y <= 1; y++)
        for (int x = -1; x <= 1; x++)
            s += texture(u_shadow, vec3(c.xy + vec2(x, y) * u_texel, ref));
    return s / 9.0;
}
void main() {
    vec3 n = vec3(0.0, 1.0, 0.0);
    vec3 albedo = u_albedo;
    if (u_is_ground) {
        float parity = mod(floor(v_world.x / u_checker) + floor(v_world.z / u_checker), 2.0);
        albedo *= 1.0 + u_checker_contrast * (2.0 * parity - 1.0);
    } else {
        float len = length(v_normal);
        if (len > 1e-12) n = v_normal / len;
        if (!gl_FrontFacing) n = -n;  // double-sided: open meshes, inconsistent winding
    }
    if (u_use_texture) albedo *= to_linear(texture(u_texture, v_uv).rgb);
    float ndl = max(dot(n, u_light_dir), 0.0);
    float lit = lit_fraction(n, ndl);
    vec3 color = albedo * (u_key * ndl * lit + mix(u_bounce, u_sky, 0.5 + 0.5 * n.y));
    if (u_is_ground) {
        float d = length(v_world.xz - u_center);
        color = mix(color, u_background, smoothstep(u_fade.x, u_fade.y, d));
    } else if (ndl > 0.0) {
        vec3 h = normalize(normalize(u_eye - v_world) + u_light_dir);
        color += u_specular * u_key * pow(max(dot(n, h), 0.0), u_shininess) * lit;
    }
    f_color = vec4(to_srgb(color), 1.0);
}
"""


@dataclass
class _GLState:
    """The process-wide context and its compiled programs."""

    ctx: Any  # moderngl.Context
    main: Any  # moderngl.Program
    shadow: Any  # moderngl.Program


# One EGL context per process: creating contexts repeatedly leaks and eventually fails.
_GL: _GLState | None = None
_GL_ERROR: str | None = None


def _gl_state() -> _GLState:
    """The cached GL context, created on first use; DependencyError if it cannot be made:
    without moderngl (the ``gl`` extra) one naming the extra, else one saying why."""
    global _GL, _GL_ERROR
    if _GL is None:
        moderngl = require("moderngl", "gl")  # each time: cheap once imported
    if _GL is None and _GL_ERROR is None:
        try:
            ctx = moderngl.create_standalone_context(require=330, backend="egl")
            _GL = _GLState(ctx, ctx.program(vertex_shader=_MAIN_VS, fragment_shader=_MAIN_FS),
                           ctx.program(vertex_shader=_SHADOW_VS, fragment_shader=_SHADOW_FS))
        except Exception as exc:  # no EGL, no GL 3.3: both mean "no GL here"
            _GL_ERROR = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if _GL is None:
        raise DependencyError(f"OpenGL rendering is unavailable ({_GL_ERROR}); use «renderer» "
                              "numpy or install Mesa EGL (libegl1, libgl1-mesa-dri)")
    return _GL


def _uniform(program: Any, name: str, value: Any) -> None:
    """Set a uniform if the compiler kept it; matrices are (4, 4) row-major arrays."""
    target = program.get(name, None)
    if target is None:
        return
    if isinstance(value, np.ndarray) and value.shape == (4, 4):
        target.write(np.ascontiguousarray(value.T, np.float32).tobytes())  # column-major
    else:
        target.value = value


@dataclass
class _GLPart:
    positions: Any  # moderngl.Buffer, (N, 3) float32 rewritten each frame
    normals: Any  # moderngl.Buffer, (N, 3) float32 rewritten each frame
    vao: Any  # main pass
    shadow_vao: Any  # depth-only pass from the light
    texture: Any  # moderngl.Texture or None
    part: PreparedPart


class _GLRenderer:
    """Offscreen drawing of one animation with the shared context; ``release`` frees it."""

    def __init__(self, state: _GLState, scene: Scene, parts: list[PreparedPart]) -> None:
        moderngl = require("moderngl", "gl")

        ctx, w, h = state.ctx, scene.width, scene.height
        self.state, self.scene, self._owned = state, scene, []
        samples = min(_GL_SAMPLES, ctx.max_samples)
        self.msaa = self._own(ctx.framebuffer(
            color_attachments=[self._own(ctx.renderbuffer((w, h), 4, samples=samples))],
            depth_attachment=self._own(ctx.depth_renderbuffer((w, h), samples=samples))))
        self.resolved = self._own(ctx.framebuffer(
            color_attachments=[self._own(ctx.renderbuffer((w, h), 4))]))
        self.shadow_map = self._own(ctx.depth_texture((_GL_SHADOW_SIZE, _GL_SHADOW_SIZE)))
        self.shadow_map.compare_func = "<="  # sampler2DShadow: 1 where lit
        self.shadow_map.filter = (moderngl.LINEAR, moderngl.LINEAR)  # 2x2 PCF per tap
        self.shadow_map.repeat_x = self.shadow_map.repeat_y = False
        self.shadow_fbo = self._own(ctx.framebuffer(depth_attachment=self.shadow_map))
        self.parts = [self._upload(p) for p in parts]
        self.ground = self._ground() if scene.ground else None

    def _own(self, obj: Any) -> Any:
        self._owned.append(obj)
        return obj

    def _upload(self, part: PreparedPart) -> _GLPart:
        """Faces, uvs and texture go up once; positions and normals are rewritten per frame."""
        ctx, n = self.state.ctx, part.n_vertices
        pos = self._own(ctx.buffer(reserve=max(n, 1) * 12))
        nrm = self._own(ctx.buffer(reserve=max(n, 1) * 12))
        ibo = self._own(ctx.buffer(np.ascontiguousarray(part.faces, np.int32).tobytes()))
        content = [(pos, "3f", "in_position"), (nrm, "3f", "in_normal")]
        texture = None
        if part.texture is not None:
            uv = self._own(ctx.buffer(np.ascontiguousarray(part.uvs, np.float32).tobytes()))
            content.append((uv, "2f", "in_uv"))
            th, tw = part.texture.shape[:2]
            texture = self._own(ctx.texture((tw, th), 3, part.texture.tobytes(), alignment=1))
            texture.build_mipmaps()
        vao = self._own(ctx.vertex_array(self.state.main, content, index_buffer=ibo,
                                         index_element_size=4))
        shadow_vao = self._own(ctx.vertex_array(self.state.shadow, [(pos, "3f", "in_position")],
                                                index_buffer=ibo, index_element_size=4))
        return _GLPart(pos, nrm, vao, shadow_vao, texture, part)

    def _ground(self) -> Any:
        """A square floor quad as wide as the fade-out distance."""
        s, ctx = self.scene, self.state.ctx
        e, (cx, cz) = 1.05 * s.fade[1], s.center[[0, 2]]
        quad = np.array([[cx - e, s.ground_y, cz - e], [cx + e, s.ground_y, cz - e],
                         [cx + e, s.ground_y, cz + e], [cx - e, s.ground_y, cz + e]], np.float32)
        up = np.tile(np.float32([0.0, 1.0, 0.0]), (4, 1))
        pos, nrm = self._own(ctx.buffer(quad.tobytes())), self._own(ctx.buffer(up.tobytes()))
        ibo = self._own(ctx.buffer(np.int32([0, 1, 2, 0, 2, 3]).tobytes()))
        return self._own(ctx.vertex_array(
            self.state.main, [(pos, "3f", "in_position"), (nrm, "3f", "in_normal")],
            index_buffer=ibo, index_element_size=4))

    def _scene_uniforms(self) -> None:
        s, lg, prog = self.scene, self.scene.lighting, self.state.main
        texel = 2.0 * s.light_half / _GL_SHADOW_SIZE
        values = {
            "u_view_proj": s.view_proj, "u_light_vp": s.light_vp, "u_eye": tuple(s.eye),
            "u_light_dir": tuple(s.light_dir), "u_key": lg.key, "u_sky": lg.sky,
            "u_bounce": lg.bounce, "u_background": lg.background, "u_specular": lg.specular,
            "u_shininess": lg.shininess, "u_checker": s.checker,
            "u_checker_contrast": lg.checker, "u_center": tuple(s.center[[0, 2]]),
            "u_fade": s.fade, "u_shadow_offset": (SHADOW_OFFSET[0] * texel,
                                                  SHADOW_OFFSET[1] * texel),
            "u_shadow_bias": SHADOW_BIAS * texel / s.light_depth,
            "u_texel": 1.0 / _GL_SHADOW_SIZE, "u_texture": 0, "u_shadow": 1,
        }
        for name, value in values.items():
            _uniform(prog, name, value)
        _uniform(self.state.shadow, "u_light_vp", s.light_vp)

    def frame(self, positions: list[np.ndarray]) -> np.ndarray:
        """Image (H, W, 3) uint8 sRGB of the parts at ``positions`` (one (N_p, 3) each)."""
        moderngl = require("moderngl", "gl")

        ctx, prog, s = self.state.ctx, self.state.main, self.scene
        for gp, x in zip(self.parts, positions):
            gp.positions.write(np.ascontiguousarray(x, np.float32).tobytes())
            gp.normals.write(gp.part.normals(x).tobytes())
        self._scene_uniforms()
        ctx.enable(moderngl.DEPTH_TEST)
        self.shadow_fbo.use()
        self.shadow_fbo.clear(depth=1.0)
        for gp in self.parts:
            gp.shadow_vao.render()
        self.msaa.use()
        bg = linear_to_srgb8(np.float32(s.lighting.background)) / 255.0
        self.msaa.clear(*bg, 1.0, depth=1.0)
        self.shadow_map.use(location=1)
        for gp in self.parts:
            _uniform(prog, "u_is_ground", False)
            _uniform(prog, "u_albedo", tuple(gp.part.base_color))
            _uniform(prog, "u_use_texture", gp.texture is not None)
            if gp.texture is not None:
                gp.texture.use(location=0)
            gp.vao.render()
        if self.ground is not None:
            _uniform(prog, "u_is_ground", True)
            _uniform(prog, "u_use_texture", False)
            _uniform(prog, "u_albedo", (s.lighting.ground_albedo,) * 3)
            self.ground.render()
        ctx.copy_framebuffer(self.resolved, self.msaa)
        data = self.resolved.read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(s.height, s.width, 3)[::-1].copy()

    def release(self) -> None:
        """Free this animation's buffers and framebuffers; the context stays for reuse."""
        for obj in reversed(self._owned):
            obj.release()
        self._owned.clear()
