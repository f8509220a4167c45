"""``neurok dataset ...``: make, import and inspect 4D datasets.

Each command copies its options into one library call and prints the result; the library is
imported inside the command so that ``neurok --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ._checks import FRAMES_NOTE, ranged
from ._common import guarded, out, print_json, progress_bar, warn
from ._options import Opt, choices

dataset_app = typer.Typer(help="Make, import and inspect 4D datasets.", no_args_is_help=True)


# --- neurok dataset generate ----------------------------------------------------------------
@dataset_app.command("generate")
@guarded
def generate_cmd(
    out_dir: Annotated[Path, typer.Argument(metavar="OUT", help="Dataset folder to fill.")],
    count: Annotated[int, Opt(metavar="N",
                              help=ranged("Sequences to simulate (all shards).", "count"))] = 100,
    seed: Annotated[int, Opt(
        metavar="N", help=ranged("Seed: the same seed makes the same arrays.", "seed"))] = 0,
    categories: Annotated[str, Opt(
        metavar="LIST",
        help="Comma-separated: soft, cloth, beam (the default), articulated.")
                          ] = "soft,cloth,beam",
    shapes: Annotated[Path | None, Opt(
        metavar="DIR", show_default="none",
        help="Folder of extra closed meshes to simulate as soft bodies (train split).")] = None,
    workers: Annotated[int, Opt(metavar="N", help=ranged("Parallel processes.", "workers"))
                       ] = 1,
    shard: Annotated[str, Opt(metavar="I/N", help="Make only jobs with index % N == I.")
                     ] = "0/1",
    splits: Annotated[str, Opt(metavar="LIST",
        help="Comma-separated splits to make now: train, val, test (e.g. test alone to "
             "evaluate; the others can follow into the same folder).")] = "train,val,test",
    seconds: Annotated[float, Opt(
        metavar="SECONDS",
        help=ranged(f"Length of each sequence; {FRAMES_NOTE}.", "seconds"))] = 2.0,
    fps: Annotated[float, Opt(
        metavar="FPS", help=ranged(f"Frames per second; {FRAMES_NOTE}.", "fps"))] = 30.0,
    interior_pins: Annotated[float, Opt(metavar="SHARE",
        help=ranged("Share of pinned sheets held by a patch inside them rather than by an "
                    "edge or corners.", "interior_pins"))] = 0.0,
    solids: Annotated[str, Opt(metavar=choices("cage", "lattice"),
        help="Soft bodies as a shell in a cage of cells (corpus-v1), or as tetrahedra that "
             "fill the solid, stiff to squashy by their weight (corpus-v2).")] = "cage",
    families: Annotated[str, Opt(metavar=choices("base", "wide"),
        help="Training shapes: corpus-v1's families, or those and nine more (lathe, banana, "
             "stack, prism; pennant, cutout, curl; taper, arc). The test split is the same "
             "either way.")] = "base",
    json_out: Annotated[bool, Opt("--json", metavar="", help="Print the header as JSON.")
                        ] = False,
) -> None:
    """Simulate a 4D dataset with MuJoCo.

    Varied shapes, materials and conditions. Resumable (finished sequences are skipped)
    and deterministic for a seed; unstable runs are rejected and counted by reason. The test
    split holds shape families never seen in train.

    Example:

      neurok dataset generate work/corpus --count 300 --workers 2
    """
    from dataclasses import asdict

    from ..errors import UsageError
    from ..sim.generate import GenerateConfig, generate

    try:
        i, n = (int(x) for x in shard.split("/"))
    except ValueError:
        raise UsageError(f"--shard must look like i/n (e.g. 0/4), not {shard!r}") from None
    cfg = GenerateConfig(out=out_dir, count=count, seed=seed,
                         categories=tuple(c.strip() for c in categories.split(",") if c.strip()),
                         shapes=shapes, workers=workers, shard=(i, n), seconds=seconds, fps=fps,
                         interior_pins=interior_pins, solids=solids, families=families,
                         splits=tuple(x.strip() for x in splits.split(",") if x.strip()))
    with progress_bar("simulating") as update:
        header = generate(cfg, progress=lambda k, total, tally: update(
            k, total, ", ".join(f"{v} {r}" for r, v in sorted(tally.items()))))
    if json_out:
        print_json(asdict(header))
        return
    table = Table(title=f"{out_dir}", show_lines=False)
    table.add_column("split")
    for c in cfg.categories:
        table.add_column(c, justify="right")
    for split, by_cat in header.counts.items():
        table.add_row(split, *(str(by_cat.get(c, 0)) for c in cfg.categories))
    out.print(table)
    rejected = ", ".join(f"{k}: {v}" for k, v in header.rejected.items()) or "none"
    out.print(f"rejected runs: {rejected}")


# --- neurok dataset import ------------------------------------------------------------------
@dataset_app.command("import")
@guarded
def import_cmd(
    src: Annotated[Path, typer.Argument(
        metavar="SRC", help="Animated glTF/GLB, DeformingThings4D .anime file, folder of "
                            "numbered OBJ/PLY frames, or a folder holding many of these.")],
    out_dir: Annotated[Path, typer.Argument(
        metavar="OUT", help="Dataset folder to create or add to.")],
    split: Annotated[str, Opt(metavar=choices("train", "val", "test"),
                              help="Split to add to.")] = "train",
    category: Annotated[str | None, Opt(
        metavar="NAME", show_default="imported",
        help="Category recorded in each sequence.")] = None,
    fps: Annotated[float | None, Opt(
        metavar="FPS", show_default="glTF keyframe rate if even, frames.json's, else 30",
        help="Frames per second.")] = None,
    up: Annotated[str | None, Opt(
        metavar=choices("y", "z"), show_default="a frame folder's frames.json, else y",
        help="Up axis of OBJ/PLY/.anime input.")] = None,
    size: Annotated[float | None, Opt(
        metavar="METRES", show_default="the file's units as metres",
        help="Largest extent of OBJ/PLY/.anime rest meshes.")] = None,
    json_out: Annotated[bool, Opt("--json", metavar="", help="Print the report as JSON.")
                        ] = False,
) -> None:
    """Import external 4D data into a dataset.

    glTF animations, DeformingThings4D .anime files and OBJ/PLY frame folders become
    sequences of the dataset; re-running skips what is there.

    Example:

      neurok dataset import clips/ work/corpus --split train --category soft
    """
    from ..data.imports import import_path

    with progress_bar("importing") as update:
        report = import_path(src, out_dir, split=split, category=category, fps=fps, up=up,
                             size=size, progress=update)
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    out.print(f"imported [bold]{report.imported}[/] sequences into "
              f"[bold]{report.out / report.split}[/] ({report.skipped} already there, skipped) "
              f"from {len(report.sources)} source{'s' if len(report.sources) != 1 else ''}")


# --- neurok dataset info --------------------------------------------------------------------
def _describe_header(header: dict) -> str:
    gen = header["generator"].get("command", "?") if header["generator"] else "?"
    engine = header["engine"]
    eng = " ".join(str(engine[k]) for k in ("name", "version") if k in engine) or "none"
    return f"{header['format']} v{header['version']}, made by `{gen}`, engine: {eng}"


@dataset_app.command("info")
@guarded
def info_cmd(
    folder: Annotated[Path, typer.Argument(metavar="DIR",
                                           help="Dataset folder (holds dataset.json).")],
    json_out: Annotated[bool, Opt("--json", metavar="", help="Print JSON instead of tables.")
                        ] = False,
    validate: Annotated[bool, Opt(
        "--validate/--no-validate", metavar="", help="Load and check every file (slower).")
    ] = True,
) -> None:
    """Sequences, sizes and materials of a dataset.

    Per category and split, with rejections and invalid files.

    Example:

      neurok dataset info work/corpus --no-validate
    """
    from ..data.summary import summarize, summary_tables
    from ..errors import InputError

    with progress_bar("reading" if not validate else "validating") as update:
        summary = summarize(folder, validate=validate, progress=update)
    if json_out:
        print_json(summary)
    else:
        out.print(f"[bold]{folder}[/]: {summary['sequences']} sequences; "
                  + _describe_header(summary["header"]))
        for t in summary_tables(summary):
            table = Table(title=t.title, title_justify="left")
            for i, name in enumerate(t.columns):
                table.add_column(name, justify="left" if i == 0 or t.title == "Invalid files"
                                 else "right")
            for row in t.rows:
                table.add_row(*row)
            out.print(table)
        if not summary["counts_match_header"] and not summary["invalid"]:
            warn(["the counts in dataset.json differ from the files found (an interrupted "
                  "run, or files added or removed by hand)"])
    bad = summary["invalid"]
    if bad:
        raise InputError(f"{folder}: {len(bad)} of {summary['files']} sequence files are "
                         "invalid (listed above); remove or regenerate them")
