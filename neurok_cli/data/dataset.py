"""Training pairs from a 4D dataset: (rest shape M0, deformed target) as the model sees them.

One item is one object and two frames of one of its sequences (DESIGN §2):

1. pick a category uniformly, then a sequence of that category uniformly: every category
   (soft, cloth, beam, ...) gets the same share of the batches however many sequences each has;
2. frame ``a`` (the rest shape M0) is frame 0, or with probability ``rest_frame_any`` a random
   frame (so M0 need not be undeformed); frame ``b`` (the target) is any other frame (b = a
   would only teach what the decoder already guarantees: decode(prior mean) = 0);
3. rigid motion is removed: frame b is Kabsch-aligned onto frame a (least squares over
   vertices). The dynamics model carries translation and rotation itself; the decoder learns
   deformation only;
4. both are put in frame a's canonical frame (centred on its bounding box, largest extent 1,
   +Y up), then augmented by one random rotation about +Y and one scale factor;
5. ``n_points`` area-uniform surface samples of frame a (points, face normals) and the same
   barycentric points on frame b give ``delta_points``; ``n_query`` vertices of frame a and
   their displacements give ``query`` / ``delta_query``;
6. with ``basis`` (a decoder trained into each object's own shape space, docs/design.md):
   the query vertices' rows of that space's basis, ``kron(w, [x, 1])`` for their handle
   weights w (from the sequence's first frame, ``PairDataset``'s ``weights``) at their
   positions x in frame a's canonical frame (the span of an affine handle's motions does
   not depend on the frame), zero-padded to BASIS_COLUMNS.

Query vertices are a seeded uniform random subset, not farthest-point samples: a fresh subset
each step covers every vertex over training, the displacement supervision is then unbiased
over the vertex distribution (which is what vertex errors measure), and it costs nothing,
whereas per-item FPS costs O(N·Q) and a per-sequence precomputed FPS would supervise the same
few vertices forever.

Randomness: item ``j`` of step ``s`` draws everything from
``numpy.random.default_rng([seed, stream, s, j])``, so a batch is a pure function of
(seed, step) — resuming replays it exactly, and under DDP rank ``r`` of ``w`` takes items
``j = r, r + w, ...`` of the same global batch, which is therefore independent of the number of
processes. No DataLoader workers or global RNGs are involved.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

from ..errors import InputError, UsageError
from .format import SPLITS, load_sequence, sequence_files
from .geometry import barycentric_points, face_normals, kabsch, sample_surface

TRAIN_STREAM = 0  # RNG stream of training batches
FIXED_STREAM = 1  # RNG stream of fixed (validation) pairs
PAIR_KEYS = ("points", "normals", "delta_points", "query", "delta_query")
BASIS_COLUMNS = 512  # an item's basis rows are padded to this many columns (4 x 128 handles)


@dataclass
class SamplingConfig:
    """How training pairs are drawn (written into every bundle's training record)."""

    n_points: int = 1024  # P: surface samples of frame a (the encoders' input)
    n_query: int = 512  # Q: vertices of frame a where the displacement is supervised
    rotate_up: bool = True  # augment with a random rotation about +Y
    scale_range: tuple[float, float] = (0.8, 1.25)  # augment: uniform factor on canonical units
    rest_frame_any: float = 0.25  # probability that M0 is a random frame instead of frame 0
    seed: int = 0  # with the step and item index, the only source of randomness
    basis: bool = False  # items carry their query vertices' rows of the object's own basis

    def __post_init__(self) -> None:
        self.scale_range = tuple(float(s) for s in self.scale_range)  # JSON gives a list
        if self.n_points < 1 or self.n_query < 1:
            raise UsageError("sampling: n_points and n_query must be positive")
        lo, hi = self.scale_range if len(self.scale_range) == 2 else (0.0, -1.0)
        if not 0 < lo <= hi:
            raise UsageError(f"sampling: scale_range must be [low, high] with 0 < low <= high, "
                             f"got {list(self.scale_range)}")
        if not 0.0 <= self.rest_frame_any <= 1.0:
            raise UsageError(f"sampling: rest_frame_any is a probability in [0, 1], got "
                             f"{self.rest_frame_any}")

    def without_augmentation(self) -> SamplingConfig:
        """The same sampling with M0 = frame 0, no rotation and no scaling (for validation)."""
        return SamplingConfig(n_points=self.n_points, n_query=self.n_query, rotate_up=False,
                              scale_range=(1.0, 1.0), rest_frame_any=0.0, seed=self.seed,
                              basis=self.basis)


@dataclass
class _Entry:
    frames: np.ndarray  # (T, N, 3) float32, metres
    faces: np.ndarray  # (F, 3) int64


def _category(path: Path) -> str:
    """``meta["category"]`` of a sequence file, reading only its small ``meta`` member."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise InputError(f"{path}: cannot read sequence ({e.__class__.__name__}: {e}); "
                         "check it with `neurok dataset info --validate`") from e
    return str(meta.get("category", "unknown")) if isinstance(meta, dict) else "unknown"


def _rotation_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def canonical_transform(vertices: np.ndarray) -> tuple[np.ndarray, float]:
    """``(centre (3,), scale)`` mapping ``vertices (N, 3)`` to ``(v - centre) * scale``:
    centred on the bounding box, largest extent 1."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    extent = float((hi - lo).max())
    return (lo + hi) / 2.0, (1.0 / extent if extent > 0 else 1.0)


class PairDataset(Dataset):
    """Pairs of frames of the sequences in one split of a 4D dataset.

    Sequences are loaded lazily and, with ``cache=True``, kept in memory (float32 frames).
    ``dataset[i]`` is a fixed pair of sequence ``i``; training uses :meth:`sample_batch`.
    ``weights(vertices, faces, category)``: the handle weights (N, H) of an object's own
    basis at its first frame's vertices, which items read with ``cfg.basis``.
    """

    def __init__(self, folder: str | Path, split: str, cfg: SamplingConfig, *,
                 cache: bool = True, weights: Callable | None = None) -> None:
        self.folder, self.split, self.cfg, self.cache = Path(folder), split, cfg, cache
        if cfg.basis and weights is None:
            raise UsageError("sampling: basis needs the objects' own handle weights")
        self.weights, self._weights = weights, {}
        if not self.folder.is_dir():
            raise InputError(f"{folder}: no such dataset folder; make one with "
                             "`neurok dataset generate` or `neurok dataset import`")
        if split not in SPLITS:
            raise UsageError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        self.files = sequence_files(self.folder, split)
        if not self.files:
            raise InputError(f"{self.folder / split}: no sequences (.npz files) in this split; "
                             "generate or import some first")
        self.category_of = [_category(p) for p in self.files]  # per sequence
        self.categories = sorted(set(self.category_of))  # names; index = "category" in items
        self._members = [np.array([i for i, c in enumerate(self.category_of) if c == name])
                         for name in self.categories]
        self._cache: dict[int, _Entry] = {}

    def __len__(self) -> int:
        return len(self.files)

    def summary(self) -> dict:
        """JSON-ready facts: folder, split, sequence count per category."""
        counts = {c: int(len(m)) for c, m in zip(self.categories, self._members)}
        return {"folder": str(self.folder), "split": self.split, "sequences": len(self.files),
                "categories": counts}

    def sequence(self, index: int) -> _Entry:
        """Frames ``(T, N, 3)`` and faces ``(F, 3)`` of sequence ``index`` (cached)."""
        entry = self._cache.get(index)
        if entry is None:
            seq = load_sequence(self.files[index])
            entry = _Entry(frames=np.ascontiguousarray(seq.frames, np.float32),
                           faces=np.asarray(seq.faces, np.int64))
            if self.cache:
                self._cache[index] = entry
        return entry

    def choose(self, rng: np.random.Generator) -> int:
        """A sequence index: a uniform category, then a uniform sequence of it."""
        members = self._members[int(rng.integers(len(self._members)))]
        return int(members[rng.integers(len(members))])

    def item(self, index: int, rng: np.random.Generator, *, cfg: SamplingConfig | None = None
             ) -> dict[str, np.ndarray]:
        """One pair from sequence ``index``, every random choice drawn from ``rng``.

        Returns float32 ``points, normals, delta_points (P, 3)``, ``query, delta_query (Q, 3)``
        (canonical units: frame a centred, largest extent 1, times the augmentation scale) and
        metadata: ``seq, category, frame_a, frame_b`` (int64 scalars) and ``scale`` (float32:
        canonical units per metre).
        """
        cfg = cfg or self.cfg
        entry = self.sequence(index)
        frames = entry.frames
        # every draw happens whatever the config, so configs differ only where they must
        t = len(frames)
        any_rest, a_any, b_step = rng.random(), int(rng.integers(t)), int(rng.integers(
            max(t - 1, 1)))
        a = a_any if any_rest < cfg.rest_frame_any else 0
        b = (a + 1 + b_step) % t if t > 1 else a  # never a itself: that pair teaches nothing
        va, vb = frames[a].astype(np.float64), frames[b].astype(np.float64)
        rot, shift = kabsch(vb, va)  # rigid motion of b onto a, least squares
        vb = vb @ rot.T + shift
        centre, scale = canonical_transform(va)
        angle = float(rng.uniform(0.0, 2.0 * np.pi)) * cfg.rotate_up
        factor = float(rng.uniform(*cfg.scale_range))
        m = factor * scale * _rotation_y(angle)  # (3, 3) canonical frame + augmentation
        va, vb = (va - centre) @ m.T, (vb - centre) @ m.T
        points, face_idx, bary = sample_surface(va, entry.faces, cfg.n_points, rng)
        target = barycentric_points(vb, entry.faces, face_idx, bary)
        normals = face_normals(va, entry.faces)[face_idx]
        n = len(va)
        query = rng.choice(n, size=cfg.n_query, replace=n < cfg.n_query)
        f32 = np.float32
        more = {"basis": self.basis_rows(index, va[query], query).astype(f32)} \
            if cfg.basis else {}
        return {**more, "points": points.astype(f32), "normals": normals.astype(f32),
                "delta_points": (target - points).astype(f32), "query": va[query].astype(f32),
                "delta_query": (vb[query] - va[query]).astype(f32),
                "seq": np.int64(index), "category": np.int64(self.categories.index(
                    self.category_of[index])), "frame_a": np.int64(a), "frame_b": np.int64(b),
                "scale": f32(factor * scale)}

    def basis_rows(self, index: int, x: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        """(n, BASIS_COLUMNS) the own basis's rows of sequence ``index``'s ``vertices`` at
        positions ``x`` (n, 3): ``kron(w, [x, 1])``, zero-padded."""
        w = self._weights.get(index)
        if w is None:
            entry = self.sequence(index)
            w = np.asarray(self.weights(entry.frames[0].astype(np.float64), entry.faces,
                                        self.category_of[index]).todense())
            if 4 * w.shape[1] > BASIS_COLUMNS:
                raise UsageError(f"{self.files[index].name}: {w.shape[1]} handles, more than "
                                 f"{BASIS_COLUMNS // 4} an item's basis rows hold")
            self._weights[index] = w
        rows = np.zeros((len(x), BASIS_COLUMNS))
        h = w.shape[1]
        wq = w[vertices]
        rows[:, :4 * h] = (wq[:, :, None] * np.concatenate([x, np.ones((len(x), 1))], axis=1)
                           [:, None, :]).reshape(len(x), 4 * h)
        return rows

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        """A fixed (seeded by ``cfg.seed`` and ``index``) pair of sequence ``index``."""
        rng = np.random.default_rng([self.cfg.seed, FIXED_STREAM, 0, index])
        return {k: torch.as_tensor(v) for k, v in self.item(index, rng).items()}

    def sample_batch(self, batch_size: int, step: int, *, rank: int = 0,
                     world_size: int = 1) -> dict[str, torch.Tensor]:
        """This rank's share of the global batch of training step ``step``.

        Item ``j`` (``j = rank, rank + world_size, ... < batch_size``) is drawn from
        ``default_rng([seed, TRAIN_STREAM, step, j])``: a category-balanced sequence, then a
        pair of it. Returns stacked tensors, ``(B, P, 3)``/``(B, Q, 3)`` pairs and ``(B,)``
        metadata with ``B = batch_size / world_size``.
        """
        if batch_size % world_size:
            raise UsageError(f"batch {batch_size} must be a multiple of the {world_size} "
                             "processes; change «batch»")
        items = []
        for j in range(rank, batch_size, world_size):
            rng = np.random.default_rng([self.cfg.seed, TRAIN_STREAM, step, j])
            items.append(self.item(self.choose(rng), rng))
        return collate(items)

    def fixed_pairs(self, count: int, *, cfg: SamplingConfig | None = None
                    ) -> list[dict[str, np.ndarray]]:
        """``count`` pairs that depend only on the seed (a validation set), drawn with ``cfg``
        (e.g. :meth:`SamplingConfig.without_augmentation`). Pair ``j`` comes from category
        ``j mod C`` (stratified: every category is measured once ``count >= C``)."""
        out = []
        for j in range(count):
            rng = np.random.default_rng([self.cfg.seed, FIXED_STREAM, 1, j])
            members = self._members[j % len(self._members)]
            out.append(self.item(int(members[rng.integers(len(members))]), rng, cfg=cfg))
        return out


def collate(items: list[dict[str, np.ndarray]]) -> dict[str, torch.Tensor]:
    """Stack per-item arrays into a batch of tensors (leading dimension B)."""
    return {k: torch.from_numpy(np.stack([it[k] for it in items])) for k in items[0]}
