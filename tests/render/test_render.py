"""Preview rendering (both backends) and video encoding."""

from __future__ import annotations

import imageio.v2 as iio
import numpy as np
import pytest
import trimesh
from PIL import Image

from neurok_cli.errors import DependencyError, InputError, OutputError, UsageError
from neurok_cli.render import renderer as render
from neurok_cli.render.renderer import Camera, RenderPart, available_backends, render_frames
from neurok_cli.render.video import write_video

SMALL = Camera(width=160, height=120)


@pytest.fixture(params=["numpy", "gl"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param not in available_backends():
        pytest.skip("no EGL context on this machine (install libegl1 and libgl1-mesa-dri)")
    return request.param


def _sphere(subdivisions: int = 2) -> tuple[np.ndarray, np.ndarray]:
    mesh = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.asarray(mesh.vertices, np.float32), np.asarray(mesh.faces, np.int32)


def _object_mask(image: np.ndarray) -> np.ndarray:
    """(H, W) bool: pixels that differ from the background (the top-left corner colour)."""
    return np.abs(image.astype(int) - image[0, 0].astype(int)).max(-1) > 12


def _render(parts: list[RenderPart], positions: list[np.ndarray], backend: str,
            camera: Camera = SMALL, ground: bool = True) -> list[np.ndarray]:
    return list(render_frames(parts, positions, camera, backend=backend, ground=ground))


def test_frames_have_requested_size(backend: str) -> None:
    v, f = _sphere()
    frames = _render([RenderPart(f)], [np.stack([v, v * 1.1])], backend, Camera(161, 97))
    assert len(frames) == 2
    for frame in frames:
        assert frame.shape == (97, 161, 3) and frame.dtype == np.uint8


def test_framing_keeps_object_in_view(backend: str) -> None:
    v, f = _sphere()
    far_away = v * 1000.0 + np.float32([5e4, -3e4, 2e4])  # units and position do not matter
    (image,) = _render([RenderPart(f)], [far_away[None]], backend, ground=False)
    mask = _object_mask(image)
    assert 0.05 < mask.mean() < 0.6
    rows, cols = np.nonzero(mask)
    assert abs(rows.mean() - 60) < 10 and abs(cols.mean() - 80) < 10
    assert not mask[0].any() and not mask[-1].any()  # margin around the object


def test_moving_mesh_changes_static_mesh_does_not(backend: str) -> None:
    v, f = _sphere()
    static = _render([RenderPart(f)], [np.stack([v] * 3)], backend)
    assert all(np.array_equal(static[0], s) for s in static[1:])
    moving = np.stack([v + np.float32([0.5 * t, 0.3 * t, 0.0]) for t in range(3)])
    frames = _render([RenderPart(f)], [moving], backend)
    assert not np.array_equal(frames[0], frames[1])
    assert not np.array_equal(frames[1], frames[2])


def test_selected_frames_are_the_animations_own(backend: str) -> None:
    """A still is the frame the whole animation would draw there: same camera framing."""
    v, f = _sphere()
    moving = np.stack([v + np.float32([0.5 * t, 0.3 * t, 0.0]) for t in range(3)])
    frames = _render([RenderPart(f)], [moving], backend)
    (still,) = render_frames([RenderPart(f)], [moving], SMALL, backend=backend, select=[2])
    assert np.array_equal(still, frames[2])
    with pytest.raises(UsageError, match="frames"):
        render_frames([RenderPart(f)], [moving], SMALL, backend=backend, select=[3])


def test_degenerate_meshes_render(backend: str) -> None:
    xs, zs = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
    sheet = np.stack([xs.ravel(), np.zeros(25), zs.ravel()], 1).astype(np.float32)
    corners = [r * 5 + c for r in range(4) for c in range(4)]
    quads = np.array([[i, i + 5, i + 1] for i in corners] + [[i + 1, i + 5, i + 6] for i in corners]
                     + [[0, 0, 1], [2, 2, 2]], np.int32)  # two zero-area triangles
    triangle = np.float32([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    point = np.zeros((3, 3), np.float32)  # every triangle degenerate, zero-size box
    cases = [(quads, sheet), (np.int32([[0, 1, 2]]), triangle), (np.int32([[0, 1, 2]]), point)]
    for faces, verts in cases:
        for ground in (True, False):
            (image,) = _render([RenderPart(faces)], [verts[None]], backend, ground=ground)
            assert image.shape == (120, 160, 3)
    red = RenderPart(quads, base_color=(0.8, 0.1, 0.1, 1.0))  # grey would match the backdrop
    (image,) = _render([red], [sheet[None]], backend, ground=False)
    assert _object_mask(image).mean() > 0.05  # a flat sheet seen from above is visible


def test_backends_agree() -> None:
    if "gl" not in available_backends():
        pytest.skip("no EGL context on this machine")
    v, f = _sphere(3)
    pos = np.stack([v, v + np.float32([0.3, 0.2, 0.0])])
    gl = _render([RenderPart(f, base_color=(0.2, 0.5, 0.8, 1.0))], [pos], "gl", ground=False)
    cpu = _render([RenderPart(f, base_color=(0.2, 0.5, 0.8, 1.0))], [pos], "numpy",
                  ground=False)
    for a, b in zip(gl, cpu):
        ma, mb = _object_mask(a), _object_mask(b)
        assert (ma & mb).sum() / (ma | mb).sum() > 0.8
        inner = ma & mb
        assert np.abs(a[inner].astype(int) - b[inner].astype(int)).mean() < 10
    with_floor = [_render([RenderPart(f)], [pos[:1]], name)[0] for name in ("gl", "numpy")]
    assert np.abs(with_floor[0].astype(int) - with_floor[1].astype(int)).mean() < 8


def test_texture_shows_both_colours_top_row_first(backend: str) -> None:
    quad = np.float32([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]])
    uvs = np.float32([[0, 1], [1, 1], [1, 0], [0, 0]])  # glTF: v = 0 at the image top
    texture = np.zeros((64, 64, 3), np.uint8)
    texture[:32] = (255, 0, 0)  # top half red
    texture[32:] = (0, 0, 255)  # bottom half blue
    part = RenderPart(np.int32([[0, 1, 2], [0, 2, 3]]), base_color=(1.0, 1.0, 1.0, 1.0),
                      uvs=uvs, texture=texture)
    camera = Camera(160, 120, azimuth=0.0, elevation=0.0)
    (image,) = _render([part], [quad[None]], backend, camera, ground=False)
    rgb = image.astype(int)
    red = (rgb[..., 0] > 2 * rgb[..., 2] + 30)
    blue = (rgb[..., 2] > 2 * rgb[..., 0] + 30)
    assert red.sum() > 500 and blue.sum() > 500
    assert np.nonzero(red)[0].mean() < np.nonzero(blue)[0].mean()


def test_bad_backend_and_inputs() -> None:
    v, f = _sphere(1)
    with pytest.raises(UsageError, match="numpy"):
        render_frames([RenderPart(f)], [v[None]], backend="vulkan")
    with pytest.raises(InputError):
        render_frames([RenderPart(f)], [v[None], v[None]])
    with pytest.raises(InputError):
        render_frames([RenderPart(f + 1000)], [v[None]])


def test_missing_gl_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "_GL", None)
    monkeypatch.setattr(render, "_GL_ERROR", "EGL not found")
    v, f = _sphere(1)
    assert available_backends() == ["numpy"]
    with pytest.raises(DependencyError, match="renderer numpy"):
        render_frames([RenderPart(f)], [v[None]], backend="gl")
    (image,) = render_frames([RenderPart(f)], [v[None]], SMALL, backend="auto")
    assert image.shape == (120, 160, 3)


def _moving_square(n: int, h: int = 71, w: int = 97) -> list[np.ndarray]:
    frames = []
    for t in range(n):
        img = np.full((h, w, 3), 230, np.uint8)
        img[20:50, 5 + 8 * t:35 + 8 * t] = (200, 40, 30)
        frames.append(img)
    return frames


def test_write_mp4_is_h264_and_changes(tmp_path) -> None:
    out, calls = tmp_path / "preview.mp4", []
    assert write_video(_moving_square(8), out, fps=12, progress=calls.append) == 8
    assert calls == list(range(1, 9))
    assert [p.name for p in tmp_path.iterdir()] == ["preview.mp4"]
    reader = iio.get_reader(out)
    try:
        assert reader.get_meta_data()["codec"] == "h264"
        frames = [np.asarray(fr) for fr in reader]
    finally:
        reader.close()
    assert len(frames) == 8 and frames[0].shape == (72, 98, 3)  # padded to even sizes
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean() > 2


def test_write_gif(tmp_path) -> None:
    out = tmp_path / "preview.gif"
    assert write_video(_moving_square(5), out, fps=10) == 5
    with Image.open(out) as gif:
        assert gif.n_frames == 5 and gif.size == (97, 71)
        assert gif.info.get("loop") == 0 and gif.info.get("duration") == 100


@pytest.mark.parametrize("name", ["preview.avi", "preview"])
def test_unknown_extension_writes_nothing(tmp_path, name: str) -> None:
    with pytest.raises(OutputError, match=r"\.mp4, \.gif"):
        write_video(_moving_square(2), tmp_path / name, fps=10)
    assert list(tmp_path.iterdir()) == []


def test_no_frames_writes_nothing(tmp_path) -> None:
    with pytest.raises(OutputError, match="no frames"):
        write_video([], tmp_path / "empty.mp4", fps=10)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_failing_frames_leave_no_file(tmp_path, suffix: str) -> None:
    def frames():
        yield from _moving_square(3)
        raise RuntimeError("simulation diverged")

    with pytest.raises(RuntimeError, match="diverged"):
        write_video(frames(), tmp_path / f"preview{suffix}", fps=10)
    assert list(tmp_path.iterdir()) == []
