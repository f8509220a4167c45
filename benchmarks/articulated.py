"""Do articulated objects move on their joints as the engine moves them? `neurok animate`
and `neurok simulate` of the example chest and cabinet, preset by preset, side by side.

    python benchmarks/articulated.py [--examples chest cabinet] [--presets open close swing
        drop] [--seconds 2] [--json out.json] [--sheet out.png]

Both commands find the same rig (rig/articulation.py) and start it the same way; animate moves
it in its joint coordinates (rig/linkage.py), the engine as rigid bodies on hinges and sliders
with the base free on the ground (MuJoCo). Per run: the largest difference over the clip of
each jointed part's turn relative to the base (degrees), the largest edge strain inside any
part (rigid parts: 0), the parts' end turn, and each command's wall time (one process,
after a first warm-up run). Prints a table, writes JSON, and a PNG contact sheet (four
frames of animate's, then four of the engine's, per run).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.deform.animate import AnimateConfig, animate
from neurok_cli.io.mesh import load_mesh
from neurok_cli.rig.animate import asset_pieces
from neurok_cli.sim.simulate import SimulateConfig, simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plausibility import _frames, report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {"chest": ROOT / "examples" / "chest.glb", "cabinet": ROOT / "examples" / "cabinet.glb"}


def _turns(frames: np.ndarray, piece: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """(T, P) each piece's turn (degrees) relative to piece 0's, from the rest pose: the
    best rotation of its vertices (Kabsch), composed with the base's."""
    P = int(piece.max()) + 1
    out = np.zeros((len(frames), P))
    for t, x in enumerate(frames):
        R = []
        for p in range(P):
            a, b = rest[piece == p], x[piece == p]
            H = (a - a.mean(0)).T @ (b - b.mean(0))
            U, _, Vt = np.linalg.svd(H)
            d = np.sign(np.linalg.det(Vt.T @ U.T))
            R.append(Vt.T @ np.diag([1, 1, d]) @ U.T)
        for p in range(P):
            rel = R[0].T @ R[p]
            out[t, p] = np.degrees(np.arccos(np.clip((np.trace(rel) - 1) / 2, -1, 1)))
    return out


def _strain(frames: np.ndarray, faces: np.ndarray, piece: np.ndarray) -> float:
    """Largest |l / l0 - 1| over the edges inside a piece and the frames."""
    e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    e = e[piece[e[:, 0]] == piece[e[:, 1]]]
    l0 = np.linalg.norm(frames[0, e[:, 0]] - frames[0, e[:, 1]], axis=1)
    keep = l0 > 1e-9
    lt = np.linalg.norm(frames[:, e[keep, 0]] - frames[:, e[keep, 1]], axis=2)
    return float(np.abs(lt / l0[keep] - 1).max())


def run(name: str, preset: str, seconds: float, tmp: Path) -> tuple[dict, dict]:
    src = EXAMPLES[name]
    pieces = asset_pieces(load_mesh(src))
    piece = pieces.piece[pieces.index]  # of each file vertex
    material = "articulated"
    a_out, s_out = tmp / f"{name}-{preset}-a.glb", tmp / f"{name}-{preset}-s.glb"
    t0 = time.perf_counter()
    rep = animate(AnimateConfig(input=src, output=a_out, seconds=seconds, preset=preset,
                                material=material))
    t1 = time.perf_counter()
    sim = simulate(SimulateConfig(input=src, output=s_out, seconds=seconds, preset=preset,
                                  material=material))
    t2 = time.perf_counter()
    fa, faces = _frames(a_out)
    fs, _ = _frames(s_out)
    rest = fa[0]
    ta, ts = _turns(fa, piece, rest), _turns(fs, piece, rest)
    moving = list(range(1, ta.shape[1]))
    row = {"example": name, "preset": preset, "parts": len(rep.rig), "mass_kg": rep.mass_kg,
           "turn_diff_deg": float(np.abs(ta[:, moving] - ts[:, moving]).max()),
           "turn_end_deg": {"animate": ta[-1, moving].tolist(),
                            "engine": ts[-1, moving].tolist()},
           "strain_max": {"animate": _strain(fa, faces, piece),
                          "engine": _strain(fs, faces, piece)},
           "animate_s": t1 - t0, "simulate_s": t2 - t1,
           "engine_wall_s": sim.sim_wall_s,
           "integrate_s": rep.timings["integrate"], "rig_s": rep.timings["rig"]}
    return row, {"animate": (fa, faces), "engine": (fs, faces)}


def table(rows: list[dict]) -> str:
    lines = ["| example | preset | turn diff (deg) | end turn animate / engine (deg) | "
             "strain max animate / engine | animate s | simulate s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        end = " / ".join(", ".join(f"{x:.1f}" for x in r["turn_end_deg"][k])
                         for k in ("animate", "engine"))
        lines.append(f"| {r['example']} | {r['preset']} | {r['turn_diff_deg']:.2f} | {end} | "
                     f"{r['strain_max']['animate']:.1e} / {r['strain_max']['engine']:.1e} | "
                     f"{r['animate_s']:.2f} | {r['simulate_s']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", nargs="+", default=list(EXAMPLES), choices=sorted(EXAMPLES))
    ap.add_argument("--presets", nargs="+", default=["open", "close", "swing", "drop"])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--sheet", type=Path, default=None)
    args = ap.parse_args()
    rows, sheet = [], []
    with tempfile.TemporaryDirectory() as tmp:
        run(args.examples[0], args.presets[0], 0.2, Path(tmp))  # imports and caches, once
        for name in args.examples:
            for preset in args.presets:
                row, clips = run(name, preset, args.seconds, Path(tmp))
                rows.append(row)
                sheet.append((f"{name} {preset}", clips))
    report(table(rows), rows, sheet, args.json, args.sheet)


if __name__ == "__main__":
    main()
