"""Where the ground is in the user's scene, shared by ``neurok animate`` and ``neurok simulate``.

Both run physics in metres, +Y up, with the ground plane at y = 0. The ground the user means is
where the asset stands in its file (its lowest point), or the height ``--ground-at`` gives in the
file's own numbers along its up axis. :func:`place_ground` finds that plane in the canonical
frame; :func:`physics_offsets` says how to move the surface into the physics frame (the start
``height`` above the ground) and how to move the frames back, so a dropped asset lands where the
user put the ground.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..io.asset import Asset
from ..io.mesh import CanonicalFrame, canonical_frame, check_scale, check_up, load_mesh
from ..limits import check_faces, check_size

MAX_GROUND_DISTANCE = 1000.0  # sizes: a ground further from the asset is almost surely a typo
LOWEST = "its lowest point"


@dataclass
class Ground:
    """The ground plane of a run, in the canonical frame and in the file."""

    height_m: float  # along +Y in metres, in the centred canonical frame (surface * size_m)
    at: float  # along the file's up axis, in the file's own units
    axis: str  # the file's up axis: "y" or "z"
    source: str  # LOWEST, "--ground-at", or where a continuation put it

    def json(self, start_m: float) -> dict:
        """The ``--json`` report's entry."""
        return {"axis": self.axis, "at": self.at, "from": self.source, "start_above_m": start_m}


def check_placement(path: Path, *, up: str | None, size: float | None, units: str | None,
                    ground_at: float | None) -> None:
    """Refuse placement options that cannot place ``path`` (an up axis, a size in metres,
    units, a ground height in the file's units), before any work: ``load_placed`` then
    meets only the file's own problems."""
    check_up(path, up)
    check_scale(size, units)
    if size is not None:
        check_size(size, given=True)
    if ground_at is not None and not np.isfinite(ground_at):
        raise UsageError(f"«ground at» must be a finite height in the file's units, not "
                         f"{ground_at:g}")


def place_ground(frame: CanonicalFrame, surface: np.ndarray, at: float | None = None,
                 source: str | None = None) -> Ground:
    """The ground of an asset.

    Args:
        frame: the asset's canonical frame (file <-> centred, +Y up, largest extent 1).
        surface: (N, 3) the welded surface in metres, canonical axes (to_canonical * size_m).
        at: the ground's height along the file's up axis in file units (``--ground-at``);
            None: the surface's lowest point.
        source: how to name a given ``at`` in the summary (default "--ground-at").
    Returns:
        the :class:`Ground`.
    """
    axis = 2 if frame.up == "z" else 1
    if at is None:
        height = float(surface[:, 1].min())
        return Ground(height, float(frame.center[axis] + height / frame.size_m * frame.extent),
                      frame.up, LOWEST)
    at = float(at)
    if not np.isfinite(at) or abs(at - frame.center[axis]) > MAX_GROUND_DISTANCE * frame.extent:
        raise UsageError(f"«ground at» must be a finite height within {MAX_GROUND_DISTANCE:g} "
                         f"sizes of the asset (its {frame.up} runs from "
                         f"{frame.center[axis] - frame.extent / 2:.4g} to about "
                         f"{frame.center[axis] + frame.extent / 2:.4g} in the file), not {at:g}")
    height = (at - frame.center[axis]) / frame.extent * frame.size_m
    return Ground(height, at, frame.up, source or "--ground-at")


def physics_offsets(surface: np.ndarray, ground: Ground, height_m: float, has_ground: bool
                    ) -> tuple[float, float]:
    """How far to raise the canonical surface into the physics frame, and how far to lower the
    frames back, both along +Y in metres.

    The physics frame has its ground at y = 0 and the surface's lowest point ``height_m``
    above it. With a ground, the frames go back so that y = 0 is the user's ground: a drop
    starts ``height_m`` above the ground and lands on it. Without one, they go back to where
    the asset stands in its file (the start height only placed an absent ground).

    Args:
        surface: (N, 3) welded surface, metres, canonical axes.
        ground: from :func:`place_ground`.
        height_m: start height of the lowest point above the ground, metres.
        has_ground: whether the run has a ground.
    Returns:
        (lift, back): physics = surface + lift; file-frame canonical = physics - back.
    """
    lift = height_m - float(surface[:, 1].min())  # the lowest point height_m above y = 0
    return lift, (-ground.height_m if has_ground else lift)


def ground_row(ground: dict | None) -> str:
    """The summary's words for a report's ground (:meth:`Ground.json`; None: no ground)."""
    if ground is None:
        return "none"
    start = ground["start_above_m"]
    return (f"{ground['axis']} = {ground['at']:.6g} in the file ({ground['from']})"
            + (f"; starts {start:.3g} m above" if start > 1e-9 else ""))


def load_placed(path: Path, *, up: str | None, size: float | None, units: str | None
                ) -> tuple[Asset, CanonicalFrame]:
    """The asset at ``path`` and its canonical frame (``size`` in metres, or ``units``), the
    object's size and triangle count within what a run can follow: the start of ``animate``
    and ``simulate`` alike."""
    asset = load_mesh(path, up=up)
    if asset.document is not None:
        from ..io.gltf.scene import skinned_nodes

        asset.warnings.extend(f"node {i} is skinned: read in its default pose, and its joints "
                              "do not move with the motion" for i in skinned_nodes(asset.document))
    frame = canonical_frame(asset, size=size, units=units)
    check_size(frame.size_m, given=size is not None)
    check_faces(len(asset.faces), str(path))
    return asset, frame
