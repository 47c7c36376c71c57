"""``irviewer search``: which gallery images look like these photos? ("which painting is this?")"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from irviewer.core.acceptance import DEFAULT_STRICTNESS, SHORTLIST, STRICTNESS
from irviewer.core.errors import InputError
from irviewer.io.atomic import atomic_write_text
from irviewer.opening.options import READER, add_options, at_most_one, read_options

NAME = "search"
INTERMIXED = True  # DATASET -d F PHOTO ...: the photos come after the options
HELP = "say which artwork each photo shows, or that it is not in the collection"
DESCRIPTION = ("Describe each photo with the extractor that made the descriptor file (its "
               "'extractor' member, or --extractor NAME), rank the gallery by cosine "
               "similarity, verify the best matches geometrically (local features and a "
               "homography), and say which artwork the photo shows — or that it is not in "
               "the collection — with the top K matches and their evidence.")
EPILOG = """examples:
  irviewer search --demo my_photo.jpg
  irviewer search set.csv -d vectors.npz --extractor my-net --top 10 --json out.json a.jpg b.jpg

A photo that cannot be used (not an image, truncated, a decompression bomb) gets one line on
stderr; the other photos are still searched, and the exit code is then 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``irviewer search``'s arguments to ``p``."""
    p.add_argument("paths", type=Path, nargs="*", metavar="DATASET PHOTO",
                   help="the dataset (not with --demo), then one or more photos")
    add_options(p, "demo", "descriptors", one_per_flag=True, help={
        "demo": "search the built-in museum demo (its strong descriptor file)",
        "descriptors": "the gallery's descriptor file (.npz, .npy, .fvecs, .mat, .h5)"})
    p.add_argument("--extractor", metavar="NAME",
                   help="extractor that describes the photos (default: the one the "
                   "descriptor file names)")
    p.add_argument("--top", type=int, default=5, metavar="K",
                   help="number of matches per photo (default 5)")
    p.add_argument("--strictness", choices=STRICTNESS, default=DEFAULT_STRICTNESS,
                   help="how much evidence names an artwork: stricter names fewer (and "
                   "fewer wrongly), looser more (default: %(default)s; docs/search.md)")
    p.add_argument("--json", type=Path, metavar="OUT",
                   help="write the answers and matches as JSON")
    add_options(p, *READER, "threads", one_per_flag=True)  # the photos follow the options


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check ``args`` and search; return the exit code."""
    from irviewer.opening.request import default_methods, demo_paths

    paths = list(args.paths)
    descriptors: Path | None
    at_most_one(args, ("descriptors",), "gallery descriptor file")
    if args.demo:
        if args.descriptors:
            parser.error("--demo searches the demo's own descriptor file; drop -d")
        dataset, descriptors = demo_paths()
    else:
        if not paths:
            parser.error("give a DATASET and photos (or --demo and photos)")
        dataset = paths.pop(0)
        descriptors = args.descriptors[0] if args.descriptors else None
        if descriptors is None and not default_methods(dataset):
            parser.error("give the gallery's descriptor file with -d FILE (a collection "
                         "made by irviewer index needs none)")
    if not paths:
        parser.error("give at least one photo")
    if args.top < 1:
        parser.error(f"--top must be at least 1, not {args.top}")
    return run_search(dataset, descriptors, paths, args)


def run_search(dataset: Path, descriptors: Path | None, photos: list[Path],
               args: argparse.Namespace) -> int:
    """Search every photo, print the matches, write the JSON; return the exit code. The
    process keeps the memory one photo frees for the next (a batch describes photo after
    photo: :func:`irviewer.io.allocator.keep_freed_memory`; 12 photos 2.27 -> 2.05 s)."""
    from irviewer.collection.answer import answer_json
    from irviewer.collection.photo_search import open_searcher
    from irviewer.io.allocator import keep_freed_memory
    from irviewer.version import __version__

    keep_freed_memory()
    searcher = open_searcher(dataset, descriptors, extractor=args.extractor,
                             format=args.format, options=read_options(args))
    method, ds = searcher.method, searcher.dataset
    print(f"search: {ds.label()} ({ds.n_gallery:,} gallery images) with {method.path.name} "
          f"(extractor {searcher.extractor.name}, {searcher.extractor.dim:,}-d); "
          f"top {args.top} by cosine similarity (the photo whole and its centre, each "
          "the better of as taken and with the light's colour divided out); the first "
          f"{SHORTLIST} verified by local features and a homography, an artwork named "
          f"with at least {searcher.verifier.calibration.threshold(args.strictness)} "
          f"inliers ({args.strictness}; "
          + ("calibrated on the collection)" if searcher.verifier.calibration.calibrated
             else "not calibrated on this gallery: the default rule)"))
    results: list[dict[str, object]] = []
    failed = 0
    for photo in photos:
        try:
            answer = searcher.answer(photo, args.top, args.strictness)
        except InputError as e:
            print(f"irviewer: error: {e}", file=sys.stderr)
            failed += 1
            results.append({"photo": str(photo), "error": str(e), "answer": None,
                            "matches": []})
            continue
        print(f"\n{photo}: {answer.sentence()}\n    {answer.evidence()}")
        for m in answer.matches:
            details = " · ".join(f"{label} {value}" for label, value in m.details)
            inliers = "       -" if m.inliers is None else f"{m.inliers:8d}"
            print(f"  {m.rank:3d}  {m.score:7.4f} {inliers}  {m.instance or '-'}  "
                  f"{m.title or '-'}  " + (f"[{details}]  " if details else "")
                  + f"({m.item})")
        results.append(answer_json(answer))
    if args.json is not None:
        report = {"irviewer_version": __version__, "dataset": str(ds.path or ds.name),
                  "descriptors": {"path": str(method.path), "sha256": method.sha256},
                  "extractor": searcher.extractor.name, "results": results}
        atomic_write_text(args.json, json.dumps(report, indent=1, ensure_ascii=False,
                                                allow_nan=False) + "\n")
    if failed:
        print(f"irviewer: {failed} of {len(photos)} photos could not be searched",
              file=sys.stderr)
        return 2
    return 0
