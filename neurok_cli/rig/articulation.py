"""Articulated objects read from assets: rigid parts and the joints that hang them together.

The pieces of an asset are its glTF nodes or OBJ groups or, in a file of one part, its
closed pieces (animate_rig.asset_pieces). Pieces that touch face to face are one rigid part
(a box's walls); then a part that meets another at an edge hangs from it by a hinge about
that edge, a part that sits in another and sticks out of it along one axis slides along
that axis, a part touching another over a patch any other way is one with it, and a piece
touching nothing rides on the part nearest to it. The part standing on the ground over the
largest area is the base; the others hang from it as a tree, each from the part it was
reached from.

A joint's position is 0 in the pose the asset is given in. A hinge's limits are where its
part, turned about the hinge, first meets its parent on either side (the nearer side is
shut, the positive direction opens; half a turn in all where it meets nothing); a slider
runs from pushed fully in to 90 % of its length out. ``parse_joint`` reads a joint given by
hand (``--joint lid:hinge:-1,0,0@0,0.5,-0.2``). Works in the physical frame (metres, +Y up)
on arrays; no file I/O. design.md (Articulated objects) has the measurements behind the
thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..scenario.joints import Joint

TOUCH = 0.01  # of the object's size: parts closer than this touch
LINE = 0.25  # where parts all but meet, a second spread under this share of the first: a line
EDGE = 0.3  # of the touching distance: a line at most this wide (std) is an edge
SWEEP_STEP = np.radians(2.0)
MAX_OPEN = np.pi  # rad a hinge may open at most
SAMPLES = 60_000  # surface points of the whole object the contacts are judged on
SNAP = np.radians(1.0)  # an inferred axis this near x, y or z is taken as it
BASE_REACH = 0.1  # of the size: pieces reaching this near the ground may be the base


@dataclass
class JointSpec:
    """A joint given by hand: the part's name, hinge or slide, the axis, and for a hinge a
    point on it (None: through the middle of where the part touches its parent)."""

    part: str
    kind: str
    axis: tuple[float, float, float]
    point: tuple[float, float, float] | None = None


@dataclass
class Rig:
    """Rigid parts and their joints. ``owner[i]`` is vertex i's part; part 0 is the base
    (``parent[0] == -1``, ``joints[0] is None``); ``found[p]`` says where a joint came from."""

    names: list[str]
    owner: np.ndarray
    parent: list[int]
    joints: list[Joint | None]
    found: list[str] = field(default_factory=list)
    merged: dict[str, tuple[str, str]] = field(default_factory=dict)  # piece -> the part
    # it is one with, and why

    @property
    def jointed(self) -> list[int]:
        return [p for p, j in enumerate(self.joints) if j is not None]

    def rows(self) -> list[dict]:
        """JSON-ready: each part, its parent and its joint."""
        out = []
        for p, name in enumerate(self.names):
            row = {"part": name, "vertices": int((self.owner == p).sum()),
                   "parent": self.names[self.parent[p]] if self.parent[p] >= 0 else None,
                   "found": self.found[p] if self.found else ""}
            j = self.joints[p]
            if j is not None:
                row["joint"] = {"kind": j.kind, "axis": [round(float(x), 4) for x in j.axis],
                                "anchor": [round(float(x), 4) for x in j.anchor],
                                "limits": [round(float(x), 4) for x in j.limits]}
            out.append(row)
        for piece, (part, why) in self.merged.items():  # after the parts: rows[p] is part p
            out.append({"part": piece, "parent": part, "found": f"one with it: {why}"})
        return out


def parse_joint(text: str) -> JointSpec:
    """``PART:hinge:AXIS[@POINT]`` or ``PART:slide:AXIS``, vectors as x,y,z in the file's
    frame (metres for a point in a glTF)."""
    bits = text.rsplit(":", 2)
    if len(bits) != 3 or not bits[0]:
        raise UsageError(f"«joint» {text!r}: expected PART:hinge:AXIS@POINT or "
                         "PART:slide:AXIS")
    part, kind, rest = bits
    if kind not in ("hinge", "slide"):
        raise UsageError(f"«joint» {text!r}: the kind must be hinge or slide, got {kind!r}")
    axis_text, _, point_text = rest.partition("@")
    if point_text and kind == "slide":
        raise UsageError(f"«joint» {text!r}: a slider takes no point")
    axis = np.asarray(_vector(axis_text, text), float)
    if not np.linalg.norm(axis) > 0:
        raise UsageError(f"«joint» {text!r}: the axis must not be zero")
    point = _vector(point_text, text) if point_text else None
    return JointSpec(part, kind, tuple(float(x) for x in axis / np.linalg.norm(axis)), point)


def _vector(part: str, text: str) -> tuple[float, float, float]:
    try:
        vals = tuple(float(t) for t in part.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 3 or not np.isfinite(vals).all():
        raise UsageError(f"«joint» {text!r}: {part!r} is not three numbers X,Y,Z")
    return vals  # type: ignore[return-value]


def connected_pieces(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Each vertex's connected piece of the surface (shared vertex indices, not positions)."""
    return merged(len(vertices), np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]]]))


@dataclass
class _Pieces:
    points: list[np.ndarray]  # surface samples of each piece
    trees: list  # cKDTree of each piece's samples
    size: float


def _sample(vertices: np.ndarray, faces: np.ndarray, owner: np.ndarray, count: int
            ) -> list[np.ndarray]:
    """Points on each piece's surface, area-weighted, with its vertices (deterministic)."""
    from ..data.geometry import sample_surface

    pts, face, _ = sample_surface(vertices, faces, count, np.random.default_rng(0))
    face_owner = owner[faces[face, 0]]
    return [np.concatenate([vertices[owner == p], pts[face_owner == p]])
            for p in range(int(owner.max()) + 1)]


def merged(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """(n,) the group of each of n things, those in a pair of ``pairs`` in one group."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    a = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    graph = sp.coo_matrix((np.ones(len(a)), (a[:, 0], a[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _contact(pieces: _Pieces, a: int, b: int, share: float = 1.0) -> np.ndarray:
    """The points of ``a`` and ``b`` that lie within ``share`` of touching distance of the
    other."""
    tol = share * TOUCH * pieces.size
    pa, pb = pieces.points[a], pieces.points[b]
    da = pieces.trees[b].query(pa, distance_upper_bound=tol)[0]
    db = pieces.trees[a].query(pb, distance_upper_bound=tol)[0]
    return np.concatenate([pa[np.isfinite(da)], pb[np.isfinite(db)]])


def _spread(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Singular values (3,) and directions (3, 3) of a point set about its mean."""
    _, s, vt = np.linalg.svd(points - points.mean(axis=0), full_matrices=False)
    return np.pad(s, (0, 3 - len(s))), vt


def _slide_axis(child: np.ndarray, parent: np.ndarray, tol: float) -> np.ndarray | None:
    """The axis (x, y or z, signed) a part sitting in its parent sticks out along the most;
    None if it does not sit in it so."""
    clo, chi = child.min(axis=0), child.max(axis=0)
    plo, phi = parent.min(axis=0), parent.max(axis=0)
    best, most = None, tol
    for k in range(3):
        others = [i for i in range(3) if i != k]
        inside = all(clo[i] >= plo[i] - tol and chi[i] <= phi[i] + tol for i in others)
        for sign in (1.0, -1.0):
            out = (chi[k] - phi[k]) if sign > 0 else (plo[k] - clo[k])
            # its back end inside the parent's span: in it, not standing on it
            sits = (plo[k] + tol < clo[k] < phi[k] - tol) if sign > 0 else \
                (plo[k] + tol < chi[k] < phi[k] - tol)
            if inside and sits and out > most:
                best, most = sign * np.eye(3)[k], out
    return best


def _rotate(points: np.ndarray, axis: np.ndarray, anchor: np.ndarray, angle: float
            ) -> np.ndarray:
    from ..scenario.joints import axis_rotation

    return (points - anchor) @ axis_rotation(axis, angle).T + anchor


def _hinge_limits(pieces: _Pieces, child: int, parent: int, axis: np.ndarray,
                  anchor: np.ndarray, keep_sign: bool = False
                  ) -> tuple[np.ndarray, tuple[float, float]]:
    """Turn the child about the hinge both ways until it meets its parent -> (the axis,
    signed so that opening is positive, and the (lower, upper) limits in rad). The nearer
    side is the shut one, unless ``keep_sign`` (the axis given opens). Only the child's far
    points are watched: by the hinge, two faces meeting in a V touch long before it shuts."""
    tol = TOUCH * pieces.size
    pts = pieces.points[child]
    rel = pts - anchor
    off_axis = np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1)
    pts = pts[off_axis > max(2 * tol, 0.25 * off_axis.max())]
    reach = []
    for sign in (1.0, -1.0):
        angle = 0.0
        while angle < MAX_OPEN:
            angle += SWEEP_STEP
            d = pieces.trees[parent].query(_rotate(pts, sign * axis, anchor, angle),
                                           distance_upper_bound=0.5 * tol)[0]
            if np.isfinite(d).any():
                angle -= SWEEP_STEP
                break
        reach.append(min(angle, MAX_OPEN))
    if reach[1] > reach[0] and not keep_sign:  # the positive way shuts first: turn round
        axis, reach = -axis, reach[::-1]
    opens, shuts = reach
    if opens >= MAX_OPEN > shuts:  # meets nothing one way: half a turn in all
        opens = MAX_OPEN - shuts
    elif shuts >= MAX_OPEN > opens:
        shuts = MAX_OPEN - opens
    return axis, (-shuts, opens)


def _joint_between(pieces: _Pieces, child: int, parent: int, spec: JointSpec | None
                   ) -> tuple[Joint | None, str]:
    """The joint that hangs ``child`` from ``parent`` and where it came from; None where
    they touch over a patch that no slider explains (one rigid part)."""
    tol = TOUCH * pieces.size
    if spec is not None:
        axis = np.asarray(spec.axis, float)
        if spec.kind == "slide":
            return _slider(pieces, child, parent, axis), "--joint"
        edge, touch = _edge(pieces, child, parent), _contact(pieces, child, parent)
        anchor = (np.asarray(spec.point, float) if spec.point is not None else
                  edge[1] if edge is not None else
                  touch.mean(axis=0) if len(touch) else pieces.points[child].mean(axis=0))
        axis, limits = _hinge_limits(pieces, child, parent, axis, anchor, keep_sign=True)
        return Joint("hinge", tuple(axis), tuple(anchor), limits, 0.0), "--joint"
    edge = _edge(pieces, child, parent)
    if edge is not None:
        axis, limits = _hinge_limits(pieces, child, parent, _snap(edge[0]), edge[1])
        return Joint("hinge", tuple(axis), tuple(edge[1]), limits, 0.0), "touches along a line"
    slide = _slide_axis(pieces.points[child], pieces.points[parent], tol)
    if slide is not None:
        return _slider(pieces, child, parent, slide), "sits in it"
    return None, "touches over a patch"


def _edge(pieces: _Pieces, child: int, parent: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Where two pieces all but meet (a fifth of the touching distance), if that is an edge
    a hinge can turn about -> (its direction, its middle). An edge is a line: under LINE as
    wide as long and narrower than EDGE x the touching distance (at a shared edge a few
    hundredths of it; where a wall stands on a floor, the wall's thickness)."""
    close = _contact(pieces, child, parent, 0.2)
    if len(close) < 3:
        return None
    s, vt = _spread(close)
    width = float(np.sqrt(np.mean(((close - close.mean(axis=0)) @ vt[1]) ** 2)))
    if s[1] < LINE * s[0] and width < EDGE * TOUCH * pieces.size:
        return vt[0], close.mean(axis=0)
    return None


def _snap(axis: np.ndarray) -> np.ndarray:
    """An axis within SNAP of the frame's x, y or z is taken as it: a model's hinges are
    mostly along its axes, and a hinge tilted by the sampling would swing under gravity."""
    k = int(np.argmax(np.abs(axis)))
    if abs(axis[k]) >= np.cos(SNAP):
        return np.sign(axis[k]) * np.eye(3)[k]
    return axis


def _slider(pieces: _Pieces, child: int, parent: int, axis: np.ndarray) -> Joint:
    """A slider along ``axis``: in as far as the parent lets it, out to 90 % of its length."""
    c, p = pieces.points[child] @ axis, pieces.points[parent] @ axis
    out = max(float(c.max() - p.max()), 0.0)
    length = float(np.ptp(c))
    return Joint("slide", tuple(float(x) for x in axis), tuple(pieces.points[child].mean(0)),
                 (-out, max(0.9 * length - out, 0.0)), 0.0)


def _touching(pieces: _Pieces) -> dict[tuple[int, int], int]:
    """Pairs of pieces that touch -> how many of their points do."""
    tol = TOUCH * pieces.size
    n = len(pieces.points)
    lo = np.array([p.min(axis=0) for p in pieces.points]) - tol
    hi = np.array([p.max(axis=0) for p in pieces.points]) + tol
    pairs = {}
    for a in range(n):
        for b in range(a + 1, n):
            if (lo[a] <= hi[b]).all() and (lo[b] <= hi[a]).all():
                k = len(_contact(pieces, a, b))
                if k >= 3:
                    pairs[(a, b)] = k
    return pairs


def _base(pieces: _Pieces, area: np.ndarray, footprint: np.ndarray) -> int:
    """The piece standing on the ground over the largest area (a laptop's base, not its
    screen touching it along the hinge); where none stands flat, the largest piece (by
    surface) of those reaching down to within BASE_REACH of the lowest point."""
    if footprint.max() > 0:
        return int(np.argmax(footprint))
    low = np.array([p[:, 1].min() for p in pieces.points])
    standing = np.flatnonzero(low <= low.min() + BASE_REACH * pieces.size)
    return int(standing[np.argmax(area[standing])])


def infer_rig(vertices: np.ndarray, faces: np.ndarray, piece: np.ndarray, names: list[str],
              given: list[JointSpec] | None = None) -> Rig:
    """Parts and joints of an object (metres, +Y up) made of pieces (``piece[i]``, named
    ``names``): see the module's notes. ``given`` joints take the place of inferred ones.
    Pieces that touch over a patch are joined first (a box's walls), so that a lid's hinge
    is judged against the whole box, not the corner of one wall."""
    given_by = {g.part: g for g in given or []}
    unknown = sorted(set(given_by) - set(names))
    if unknown:
        raise UsageError(f"«joint»: no part named {', '.join(map(repr, unknown))}; the parts "
                         f"are {', '.join(map(repr, names))} (neurok info lists them)")
    size = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    pts = _sample(vertices, faces, piece, SAMPLES)
    tri = vertices[faces]
    tri_area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]),
                                    axis=1)
    area = np.bincount(piece[faces[:, 0]], tri_area, minlength=len(names))
    flat = (tri[:, :, 1] <= vertices[:, 1].min() + TOUCH * size).all(axis=1)
    footprint = np.bincount(piece[faces[flat, 0]], tri_area[flat], minlength=len(names))
    group = _weld_patches(_pieces(pts, size), [n in given_by for n in names])
    big = [max(np.flatnonzero(group == g), key=lambda k: area[k])
           for g in range(int(group.max()) + 1)]  # a body is named after its largest piece
    bodies = _pieces([np.concatenate([pts[k] for k in np.flatnonzero(group == g)])
                      for g in range(len(big))], size)
    hung = _hang(bodies, [names[k] for k in big], np.bincount(group, area),
                 np.bincount(group, footprint), given_by)
    rig = _as_rig([names[k] for k in big], group[piece], *hung)
    rig.merged.update({names[k]: (names[big[group[k]]], "touches over a patch")
                       for k in range(len(names)) if k != big[group[k]]})
    return rig


def _pieces(points: list[np.ndarray], size: float) -> _Pieces:
    from scipy.spatial import cKDTree

    return _Pieces(points, [cKDTree(p) for p in points], size)


def _weld_patches(pieces: _Pieces, keep: list[bool]) -> np.ndarray:
    """Each piece's group: pieces that touch face to face (where they all but meet is no
    line a hinge could turn about) joined, but for those that sit in a neighbour as a
    slider would; ``keep`` pieces stay apart."""
    tol = TOUCH * pieces.size
    pairs = _touching(pieces)
    slides = set()  # pieces sitting in another as a slider would: a drawer beside a drawer
    for a, b in pairs:
        for c, p in ((a, b), (b, a)):
            if _slide_axis(pieces.points[c], pieces.points[p], tol) is not None:
                slides.add(c)
    return merged(len(pieces.points), [
        (a, b) for a, b in pairs if not (keep[a] or keep[b] or a in slides or b in slides)
        and _edge(pieces, a, b) is None])  # where they meet is no edge to turn about


def _hang(pieces: _Pieces, names: list[str], area: np.ndarray, footprint: np.ndarray,
          given: dict[str, JointSpec]):
    """Hang the pieces from the base, breadth first, each from the piece it was reached
    from -> (parent, joints, found, body, base); ``body[k]`` is k's rigid part."""
    pairs = _touching(pieces)
    n = len(names)
    parent, joints, found = [-1] * n, [None] * n, [""] * n
    base = _base(pieces, area, footprint)
    found[base] = "base"
    reached, frontier, body = {base}, [base], list(range(n))
    while frontier:
        a = frontier.pop(0)
        for b in sorted(range(n), key=lambda k: -pairs.get((min(a, k), max(a, k)), 0)):
            if b in reached or (min(a, b), max(a, b)) not in pairs:
                continue
            joint, how = _joint_between(pieces, b, a, given.get(names[b]))
            reached.add(b)
            frontier.append(b)
            parent[b], joints[b], found[b] = a, joint, how
            if joint is None:
                body[b] = body[a]  # the same rigid part as its parent
    for b in range(n):  # pieces touching nothing ride on the nearest reached one
        if b not in reached:
            d = [pieces.trees[a].query(pieces.points[b])[0].min() if a in reached else np.inf
                 for a in range(n)]
            body[b] = body[int(np.argmin(d))]
            parent[b], found[b] = int(np.argmin(d)), "touches nothing"
    return parent, joints, found, body, base


def _as_rig(names, piece, parent, joints, found, body, base) -> Rig:
    """Pieces merged into their rigid parts, the base first, parents before children."""
    def root(k):
        while body[k] != k:
            k = body[k]
        return k

    order = [base]
    for k in order:  # breadth first over the parts' tree
        order += [c for c in range(len(names)) if parent[c] == k and root(c) == c
                  and joints[c] is not None and c not in order]
        order += [c for c in range(len(names)) if parent[c] == k and c not in order
                  and root(c) != c]
    parts = [k for k in order if root(k) == k]
    index = {k: i for i, k in enumerate(parts)}
    owner = np.array([index[root(int(k))] for k in piece])

    def part_parent(k):
        p = parent[k]
        return -1 if p < 0 else index[root(p)]

    merged = {names[k]: (names[root(k)], found[k]) for k in range(len(names)) if root(k) != k}
    return Rig([names[k] for k in parts], owner, [part_parent(k) for k in parts],
               [joints[k] for k in parts], [found[k] for k in parts], merged)
