"""Write the results section of docs/results.md from the benchmarks' JSON files.

    python benchmarks/results.py --from DIR [--readme docs/results.md] [--check]

Reads ``bench_animate.json`` from DIR, renders it as a Markdown table and replaces what lies
between the ``<!-- results:begin -->`` and ``<!-- results:end -->`` lines of docs/results.md.
``--check`` prints the section instead of writing it.

    python benchmarks/results.py --summary PLAUSIBILITY.json [--weights neurok-base]
        [--bones BENCH_BONES.json] [--speed BENCH_ANIMATE.json] [--page BENCH_PAGE.json]
        [--fit BENCH_FIT.json]

writes README's compact table instead (between ``<!-- summary:begin -->`` and
``<!-- summary:end -->``): the bundle's test-split figures from its ``config.json`` (what
`neurok eval` measured), the rows of `python benchmarks/plausibility.py --json FILE` and,
with ``--bones``, the penguin's clip in each glTF encoding (`python benchmarks/bench_bones.py
--json FILE`), with ``--speed`` the whole commands' times (`python
benchmarks/bench_animate.py --json FILE`) in place of the plausibility run's, with
``--page`` the 10k sphere's web page (`python benchmarks/bench_page.py --json FILE`), with
``--fit`` `neurok fit` in the object's own space beside the learned one (`python
benchmarks/bench_fit.py DATA --json FILE`).

The run that fills DIR (about ten minutes on a 2-core CPU; one benchmark at a time: two
processes on 2 cores slow each other down):

    python benchmarks/bench_animate.py --json DIR/bench_animate.json

The inverse-kinematics and rollout tables beside it in docs/results.md came from
bench_fit.py and bench_accuracy.py, finished experiments taken out of benchmarks/ (the
scripts are in commits 8bb475c and 9f8f6ac, with the version of this script that wrote them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
SUMMARY = "<!-- summary:begin -->", "<!-- summary:end -->"
ROOT = Path(__file__).resolve().parents[1]


def animate_table(d: dict) -> list[str]:
    """docs/results.md's speed table from bench_animate.py's JSON."""
    out = ["**Speed**, whole commands (start-up to a written GLB) with each command's defaults "
           "(a soft drop, 4 s at 30 fps): `animate` cold (the first run after installing, on a "
           "new mesh: numba's code and the shape-space cache empty) and warm (again, the same "
           "mesh), and `simulate`, in turns, medians of "
           f"{d['repeat']}; the warm run's stages", "",
           "| asset | vertices | animate cold, s | animate warm, s | simulate, s | "
           "simulate / warm | load, shape space, integration, writing (s) | load average |",
           "|---|---|---|---|---|---|---|---|"]
    for r in d["rows"] + d.get("durations", []):
        st = r["warm"]["stages"]
        name = r["asset"] + (f", {r['seconds']:g} s" if r["seconds"] != 4.0 else "")
        out.append(f"| {name} | {r['vertices']:,} | {r['cold']['wall_s']:.1f} | "
                   f"{r['warm']['wall_s']:.1f} | {r['simulate']['wall_s']:.1f} | "
                   f"{r['ratio_warm']:.1f}x | {st['load']:.2f}, {st['fit']:.2f}, "
                   f"{st['integrate']:.2f}, {st['export']:.2f} | {r['load']:.1f} |")
    su = d["start_up"]
    out += ["", f"`neurok --help` {su['help_s']:.2f} s, a missing file's one-line error "
            f"{su['error_s']:.2f} s (medians of 5); {d['date']}, {d['cpus']} cores."]
    return out


def section(folder: Path) -> str:
    path = folder / "bench_animate.json"
    if not path.is_file():
        sys.exit(f"no bench_animate.json in {folder}")
    return "\n".join(animate_table(json.loads(path.read_text())))


def summary_table(metrics: dict, plaus: list[dict], bones: list[dict] | None = None,
                  speed: dict | None = None, page: dict | None = None,
                  fit: dict | None = None, cloth: dict | None = None) -> list[str]:
    """README's table: the own space's fits, the bundle's test-split figures, then each
    plausibility run against the engine."""
    ik, ro = metrics["test"]["inverse_kinematics"], metrics["test"]["rollout"]
    cmd = f"`{metrics['measured_by']}`"
    out = ["| what | neurok | reference | command |", "|---|---|---|---|", *_fit_row(fit),
           "| learned model: shape recovery on unseen shape families (`fit --space learned`; "
           "Chamfer-L1, × diagonal) | "
           f"{ik['chamfer']['all']:.4f} | rest pose {ik['rest_chamfer']['all']:.4f} | {cmd} |",
           "| learned model: 2 s motion vs the physics engine (mean vertex error, × diagonal) | "
           f"{ro['error']['all']:.3f} | rest pose {ro['rest_error']['all']:.3f} | "
           "same, `--only rollout` |", *_articulated_row(metrics.get("articulated"))]
    for i, r in enumerate(plaus):
        a, e = r["animate"], r["engine"]
        same = "`python benchmarks/plausibility.py`" if i == 0 else "same"
        vol = (f"{a['volume_min']:.3f} / " if a["volume_min"] is not None else "")
        evol = (f"{e['volume_min']:.3f} / " if e["volume_min"] is not None else "")
        what = "smallest volume / crumple (rad)" if vol else "crumple (rad)"
        out.append(f"| {r['asset']} {r['preset']}: {what} / end tilt (°) | {vol}"
                   f"{a['crumple']:.3f} / {a['tilt_deg']:.0f} | engine {evol}"
                   f"{e['crumple']:.3f} / {e['tilt_deg']:.0f} | {same} |")
    if speed:
        out += _speed_rows(speed)
    elif plaus:
        r = plaus[0]
        out.append(f"| {r['asset']} {r['preset']}, in one process (loading to written GLB) | "
                   f"{r['animate_s']:.1f} s | `neurok simulate` {r['simulate_s']:.1f} s | same |")
    return out + _cloth_rows(cloth) + _bones_row(bones or []) + _page_row(page)


def _cloth_rows(d: dict | None) -> list[str]:
    """README's row from bench_cloth.py: each case's stretch in its written file (the worst
    frame's mean and 99th percentile of |l / l0 - 1|) and intersecting frames, and the
    whole commands' time beside `neurok simulate` of the same jobs."""
    rows = (d or {}).get("rows", [])
    if not rows:
        return []
    names = " / ".join(r["case"] for r in rows)
    stretch = " / ".join(f"{r['mean_max']:.3f}, {r['p99_max']:.3f}" for r in rows)
    hits = " / ".join(str(r["intersecting"]) for r in rows)
    ours = " / ".join(f"{r['animate_s']:.0f}" for r in rows)
    theirs = " / ".join(f"{r['simulate_s']:.0f}" for r in rows if "simulate_s" in r)
    return [f"| cloth, {names}: stretch in the written file (worst frame's mean, p99); "
            f"intersecting frames; whole command (s) | {stretch}; {hits}; {ours} | "
            f"`neurok simulate` {theirs or '-'} s | `python benchmarks/bench_cloth.py --engine` |"]


def _fit_row(d: dict | None) -> list[str]:
    """README's row from bench_fit.py: `neurok fit` of the test split's sequences in the
    object's own space, beside the learned space and the rest pose (means over the
    sequences)."""
    if not d:
        return []
    rows = d["rows"]
    mean = lambda space, key: sum(r[space][key] for r in rows) / len(rows)  # noqa: E731
    return [f"| object's own space: shape recovery of unseen sequences (`neurok fit`, the "
            f"rest's mesh; Chamfer-L1, × diagonal) | {mean('handles', 'chamfer'):.4f} in "
            f"{mean('handles', 'seconds'):.1f} s | learned {mean('learned', 'chamfer'):.4f} "
            f"in {mean('learned', 'seconds'):.1f} s, rest pose "
            f"{mean('handles', 'rest_chamfer'):.4f} | `python benchmarks/bench_fit.py "
            f"work/corpus3` |"]


def _page_row(d: dict | None) -> list[str]:
    """README's row from bench_page.py: the 10k sphere's page, its size and the page's own
    steps (in node) against the motion each step covers."""
    rows = [r for r in (d or {}).get("rows", []) if r["asset"].startswith("sphere 9")
            and r["mode"] == "live"]
    if not rows:
        return []
    r = rows[0]
    return [f"| web page (`-o x.html`) of a {r['asset'][7:]}-vertex sphere: size / the page's "
            f"own step, the object live | {r['page_mb']:.2f} MB / {r['node_step_ms']:.1f} ms | "
            f"aim 5 MB / the step's {r['step_ms']:.1f} ms of motion | "
            "`python benchmarks/bench_page.py` |"]


def _speed_rows(d: dict) -> list[str]:
    """README's rows from bench_animate.py: the warm 4 s drops against simulate, and the
    first run after installing."""
    rows = {r["asset"]: r for r in d["rows"]}
    names = [n for n in ("penguin", "sphere10k", "sphere100k") if n in rows]
    label = {"penguin": "penguin", "sphere10k": "10k sphere", "sphere100k": "100k sphere"}
    out = [f"| 4 s drop, whole command: {' / '.join(label[n] for n in names)} | "
           + " / ".join(f"{rows[n]['warm']['wall_s']:.1f}" for n in names) + " s | "
           "`neurok simulate` " + " / ".join(f"{rows[n]['simulate']['wall_s']:.1f}"
                                              for n in names)
           + " s | `python benchmarks/bench_animate.py` |"]
    if "blob" in rows:
        out.append(f"| first run after installing (`examples/blob.obj`, a new mesh) / "
                   f"`neurok --help` | {rows['blob']['cold']['wall_s']:.1f} s / "
                   f"{d['start_up']['help_s']:.2f} s | warm {rows['blob']['warm']['wall_s']:.1f}"
                   " s | same |")
    return out


def _bones_row(rows: list[dict]) -> list[str]:
    """README's row for the penguin's default clip: bones and compressed morph targets
    against plain morph targets (size, and mean error against the exact clip)."""
    pick = {(r["encoding"], r["meshopt"], r.get("asked")): r for r in rows
            if r["asset"] == "penguin"}
    try:
        bones, packed = pick["bones", False, None], pick["compact", True, None]
        plain = pick["compact", False, None]
    except KeyError:
        return []
    cell = lambda r: f"{r['mb']:.2f} MB ({100 * r['mean']:.3f} %)"  # noqa: E731
    return [f"| penguin's 4 s drop as glTF: `--encoding bones` / `--meshopt` (mean error, × "
            f"diagonal) | {cell(bones)} / {cell(packed)} | morph targets {cell(plain)} | "
            "`python benchmarks/bench_bones.py` |"]


def _articulated_row(art: dict | None) -> list[str]:
    """README's row for the bundle's figures on the articulated test split, where it has
    them (``python -m neurok_cli.evaluate.card ... --articulated REPORT``)."""
    if not art:
        return []
    ch = art["inverse_kinematics"]["chamfer"]["all"]
    rest = art["inverse_kinematics"]["rest_chamfer"]["all"]
    return ["| learned model: shape recovery, parts on hinges: unseen laptops and lamps "
            f"(Chamfer-L1, × diagonal) | {ch:.4f} | rest pose {rest:.4f} | "
            f"`{art['measured_by']}` |"]


def replace_block(path: Path, marks: tuple[str, str], body: str) -> None:
    """Put ``body`` between the two marker lines of the Markdown file at ``path``."""
    text = path.read_text()
    if marks[0] not in text or marks[1] not in text:
        sys.exit(f"{path}: no {marks[0]} ... {marks[1]} block")
    head, rest = text.split(marks[0], 1)
    _, tail = rest.split(marks[1], 1)
    path.write_text(f"{head}{marks[0]}\n{body}\n{marks[1]}{tail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="folder", type=Path)
    ap.add_argument("--summary", type=Path, help="plausibility.py's JSON: write README's table")
    ap.add_argument("--weights", default="neurok-base", help="the bundle whose figures to show")
    ap.add_argument("--bones", type=Path, help="bench_bones.py's JSON: the encodings' row")
    ap.add_argument("--speed", type=Path, help="bench_animate.py's JSON: the speed rows")
    ap.add_argument("--page", type=Path, help="bench_page.py's JSON: the web page's row")
    ap.add_argument("--fit", type=Path, help="bench_fit.py's JSON: the own space's fit row")
    ap.add_argument("--cloth", type=Path, help="bench_cloth.py's JSON: cloth's rows")
    ap.add_argument("--readme", type=Path, default=None,
                    help="the Markdown file holding the block (default: docs/results.md, or "
                    "README.md with --summary)")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if (args.folder is None) == (args.summary is None):
        ap.error("give --from DIR or --summary PLAUSIBILITY.json")
    if args.summary:
        config = ROOT / "neurok_cli" / "weights" / args.weights / "config.json"
        metrics = json.loads(config.read_text())["metrics"]
        bones = json.loads(args.bones.read_text()) if args.bones else None
        speed = json.loads(args.speed.read_text()) if args.speed else None
        page = json.loads(args.page.read_text()) if args.page else None
        fit = json.loads(args.fit.read_text()) if args.fit else None
        cloth = json.loads(args.cloth.read_text()) if args.cloth else None
        body = "\n".join(summary_table(metrics, json.loads(args.summary.read_text()), bones,
                                        speed, page, fit, cloth))
        target, marks = args.readme or ROOT / "README.md", SUMMARY
    else:
        body = section(args.folder)
        target, marks = args.readme or ROOT / "docs" / "results.md", (BEGIN, END)
    if args.check:
        sys.stdout.write(body + "\n")
        return
    replace_block(target, marks, body)


if __name__ == "__main__":
    main()
