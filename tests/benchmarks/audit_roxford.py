"""The audit against a re-annotation: ``irviewer audit`` on the untouched Oxford5k, judged by the
revisited Oxford ground truth (rOxford, Radenovic et al., CVPR 2018), which re-judged every
pair of the same query images.

Run from the repository root (a script, not a test; ``audit_recall.py`` runs it too):

    python tests/benchmarks/audit_roxford.py

Data (``../shared/samples``, never copied here): the Oxford5k gt_files, the 128-d CaffeNet fc7
descriptors (``oxford_features.fvecs``, rows in sorted name order, read with ``--row-names``)
and rOxford's ``gnd_roxford5k.pkl`` (the judge; the audit never reads it).

The judge. A (query, image) pair is *changed* when Oxford's label (good/ok = positive, else
negative) and rOxford's (easy/hard = positive, else negative) differ; a pair is *unjudged* when
either side calls it junk, or when rOxford does not have the image (it took its 70 query images
out of its database). The issue's count of 330 "positives that are negatives" also counts
those 325 pairs of dropped query images (the queries' own 55 included) as negatives: the
"issue's count" column shows what that judge would say; it is not a re-judgement.

Methods compared, on the first 100 distinct (query, image) pair suspects:

* the audit (``irviewer audit gt_files -d oxford_features.fvecs --row-names ...``);
* the naive baseline: a negative by how near the top it ranks, a positive by how near the
  bottom (rank percentile, averaged over the methods);
* the simple set-level baseline: the share of the item's 10 nearest gallery images that are
  positives of the query; a negative by that share, a positive by one minus it (no pooling
  over queries, no calibration; ties by the rank percentile);
* a ceiling, not a method: per landmark, a logistic regression on the descriptor trained on
  rOxford's own labels (5-fold cross-validation within the landmark), ranking Oxford's
  negatives by its out-of-fold score — what the descriptor could tell with the judge's labels.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from irviewer.core.audit import DUPLICATE, NEG_POS, POS_NEG, audit  # noqa: E402
from irviewer.core.dataset import Dataset  # noqa: E402
from irviewer.core.evaluation import query_roles  # noqa: E402
from irviewer.formats.base import ReadOptions  # noqa: E402
from irviewer.formats.registry import read_dataset  # noqa: E402
from irviewer.opening.opener import Opened, open_now  # noqa: E402
from irviewer.opening.request import OpenRequest  # noqa: E402

SAMPLES = ROOT.parent / "shared" / "samples"
GT = SAMPLES / "oxford5k-gt"
FC7 = SAMPLES / "oxford5k-lopq-fc7-features"
FVECS = FC7 / "oxford_features.fvecs"
NAMES = FC7 / "oxford5k_imlist_sorted.txt"
ROXFORD = SAMPLES / "revisited-oxford-paris-gnd" / "gnd_roxford5k.pkl"
POSITIVE = ("good", "ok")
KS = (25, 50, 100)
N2P, P2N, SAME, UNJUDGED, DROPPED = "neg->pos", "pos->neg", "same", "unjudged", "dropped"


def available() -> bool:
    """Return True when the shared Oxford5k samples and rOxford's ground truth are present."""
    return GT.is_dir() and FVECS.is_file() and NAMES.is_file() and ROXFORD.is_file()


@dataclass(frozen=True)
class Judge:
    """rOxford's verdict on Oxford5k's pairs: per Oxford query, rOxford's positives and junk
    (gallery indices of the Oxford dataset) and the images rOxford has."""

    dataset: Dataset
    rox_pos: tuple[frozenset[int], ...]
    rox_junk: tuple[frozenset[int], ...]
    in_rox: frozenset[int]

    def verdict(self, q: int, g: int) -> str:
        """Return ``neg->pos`` / ``pos->neg`` (rOxford changed the pair), ``same``,
        ``unjudged`` (junk on either side), or ``dropped`` (an Oxford pair whose image rOxford
        took out of its database)."""
        query = self.dataset.queries[q]
        ox_pos = any(g in set(query.group(n).tolist()) for n in POSITIVE)
        if g in set(query.group("junk").tolist()) or g in self.rox_junk[q]:
            return UNJUDGED
        if g not in self.in_rox:
            return DROPPED
        rox = g in self.rox_pos[q]
        if rox == ox_pos:
            return SAME
        return N2P if rox else P2N


def build_judge(dataset: Dataset) -> Judge:
    """Return the :class:`Judge` of the Oxford5k ``dataset`` (queries matched by image)."""
    rox = read_dataset(ROXFORD, None)
    index = dataset.gallery_index()
    to_ox = np.array([index[n] for n in rox.gallery])
    by_image = {q.image: q for q in rox.queries}
    pos, junk = [], []
    for query in dataset.queries:
        r = by_image[query.image]
        pos.append(frozenset(to_ox[np.concatenate([r.group("easy"), r.group("hard")])]
                             .tolist()))
        junk.append(frozenset(to_ox[r.group("junk")].tolist()))
    return Judge(dataset, tuple(pos), tuple(junk), frozenset(to_ox.tolist()))


def changed_counts(judge: Judge) -> Counter:
    """Return how many labelled pairs (the query's own image aside) fall in each verdict, and
    under ``dropped positive`` / ``dropped self`` the Oxford positives whose image rOxford
    dropped, without and with the queries' own images (the issue counted the latter)."""
    ds = judge.dataset
    counts: Counter = Counter()
    for q, query in enumerate(ds.queries):
        positives = set(np.concatenate([query.group(n) for n in POSITIVE]).tolist())
        for g in range(ds.n_gallery):
            if g in positives and g not in judge.in_rox:
                counts["dropped self" if g == query.self_index else "dropped positive"] += 1
            if g != query.self_index:
                counts[judge.verdict(q, g)] += 1
    return counts


# -- the methods ---------------------------------------------------------------------------

def open_fc7(second: Path | None = None) -> Opened:
    """Open the untouched Oxford5k with the fc7 descriptors (and a second descriptor file)."""
    files = (FVECS,) if second is None else (FVECS, second)
    return open_now(OpenRequest(GT, descriptors=files, options=ReadOptions(row_names=NAMES),
                                k=200))


def write_pcaw64(folder: Path) -> Path:
    """Write the fc7 descriptors PCA-whitened to 64-d (a second method made from the first)."""
    raw = np.fromfile(FVECS, dtype=np.float32).reshape(-1, 129)[:, 1:]
    names = NAMES.read_text().split()
    x = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    x = x - x.mean(axis=0)
    _u, s, vt = np.linalg.svd(x, full_matrices=False)
    path = folder / "fc7_pcaw64.npz"
    np.savez(path, features=((x @ vt[:64].T) / s[:64]).astype(np.float32),
             names=np.array(names))
    return path


def audit_pairs(opened: Opened) -> tuple[list[tuple[int, int]], list]:
    """Return the audit's distinct (query, image) pair suspects in order (an entry naming the
    queries sharing a list expanded to its queries), and its suspects."""
    ds = opened.dataset
    result = audit(ds, {k: m.ranking for k, m in opened.methods.items()})
    index, seen, pairs = ds.gallery_index(), set(), []
    for s in result.suspects:
        if s.query is None or s.kind not in (NEG_POS, POS_NEG, DUPLICATE):
            continue
        for name in s.queries or (s.query,):
            pair = (ds.query_by_name(name), index[s.item])
            if pair not in seen:
                seen.add(pair)
                pairs.append(pair)
    return pairs, list(result.suspects)


def rank_percentiles(opened: Opened, protocol: str) -> dict[tuple[int, int], float]:
    """Return the naive score of every ranked negative in the top 100 and every positive: how
    near the top (a negative) or the bottom (a positive) it ranks, averaged over the methods."""
    ds = opened.dataset
    scores: dict[tuple[int, int], list[float]] = {}
    for m in opened.methods.values():
        ev = m.evaluations[protocol]
        mask = np.zeros(ds.n_gallery, dtype=bool)
        mask[ds.global_ignored] = True
        n = m.ranking.n_ranked
        for q, query in enumerate(ds.queries):
            pos, ign = query_roles(query, ev.protocol, mask)
            for r, g in enumerate(m.ranking.top_indices[q][:100].tolist()):
                if g >= 0 and g not in pos and g not in ign and g != query.self_index:
                    scores.setdefault((q, g), []).append(1 - r / n)
            for g, r in zip(pos.tolist(), m.ranking.rank_items(q, pos).tolist(), strict=True):
                if g != query.self_index:
                    scores.setdefault((q, g), []).append(1.0 if r < 0 else r / n)
    k = len(opened.methods)
    return {pair: sum(v) / k for pair, v in scores.items()}


def naive_pairs(opened: Opened, protocol: str) -> list[tuple[int, int]]:
    """Return the naive baseline's pairs, most suspicious first (ties: query, image)."""
    scores = rank_percentiles(opened, protocol)
    return sorted(scores, key=lambda p: (-scores[p], p))


def nearest_gallery(vectors: np.ndarray, k: int = 10, block: int = 1024) -> np.ndarray:
    """Return each gallery image's k most similar other gallery images (cosine), in blocks."""
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    out = np.empty((len(x), k), dtype=np.int64)
    for a in range(0, len(x), block):
        s = x[a:a + block] @ x.T
        s[np.arange(len(s)), np.arange(a, a + len(s))] = -np.inf
        top = np.argpartition(-s, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(s, top, axis=1), axis=1, kind="stable")
        out[a:a + block] = np.take_along_axis(top, order, axis=1)
    return out


def set_level_pairs(opened: Opened, protocol: str, k: int = 10) -> list[tuple[int, int]]:
    """Return the simple set-level baseline's pairs: the share of the item's k nearest gallery
    images that are positives of the query (a negative by it, a positive by one minus it),
    averaged over the methods; ties by the naive score."""
    ds = opened.dataset
    naive = rank_percentiles(opened, protocol)
    shares: dict[tuple[int, int], float] = {}
    for m in opened.methods.values():
        aligned = m.ranking.descriptors
        assert aligned is not None
        rows = np.arange(ds.n_gallery) if aligned.gallery_rows is None else aligned.gallery_rows
        nn = nearest_gallery(np.asarray(aligned.gallery[rows], dtype=np.float32), k)
        mask = np.zeros(ds.n_gallery, dtype=bool)
        mask[ds.global_ignored] = True
        for q, query in enumerate(ds.queries):
            pos, ign = query_roles(query, m.evaluations[protocol].protocol, mask)
            is_pos = np.zeros(ds.n_gallery, dtype=bool)
            is_pos[pos] = True
            share = is_pos[nn].mean(axis=1)
            labelled = np.ones(ds.n_gallery, dtype=bool)
            labelled[ign] = False
            labelled[query.self_index] = False
            for g in np.flatnonzero(labelled).tolist():
                value = 1 - share[g] if is_pos[g] else share[g]
                shares[(q, g)] = shares.get((q, g), 0.0) + value / len(opened.methods)
    return sorted(shares, key=lambda p: (-shares[p], -naive.get(p, 0.0), p))


def logistic_fit(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return the weights of an L2-regularised logistic regression of ``y`` on the rows of
    ``a`` (its last column the intercept, not regularised), fitted by L-BFGS."""
    from scipy.optimize import minimize

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-(a @ w)))
        reg = np.r_[w[:-1], 0.0]
        value = -(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)).sum()
        return float(value + reg @ reg), a.T @ (p - y) + 2 * reg

    return minimize(loss, np.zeros(a.shape[1]), jac=True, method="L-BFGS-B").x


def ceiling_pairs(opened: Opened, judge: Judge, folds: int = 5,
                  seed: int = 0) -> list[tuple[int, int]]:
    """Return Oxford's negatives ranked by an out-of-fold logistic regression per landmark,
    trained on rOxford's labels of that landmark (a ceiling for the descriptor, not a method:
    it reads the judge). Each image once per landmark, expanded to the landmark's queries."""
    ds = opened.dataset
    aligned = next(iter(opened.methods.values())).ranking.descriptors
    assert aligned is not None
    rows = np.arange(ds.n_gallery) if aligned.gallery_rows is None else aligned.gallery_rows
    x = np.asarray(aligned.gallery[rows], dtype=np.float64)
    x = 10 * x / np.linalg.norm(x, axis=1, keepdims=True)
    xb = np.c_[x, np.ones(len(x))]

    rng = np.random.default_rng(seed)
    landmarks: dict[str, list[int]] = {}
    for q, query in enumerate(ds.queries):
        landmarks.setdefault(query.name.rsplit("_", 1)[0], []).append(q)
    scored: list[tuple[float, int, int]] = []
    for qs in landmarks.values():
        q0 = qs[0]
        judged = np.array([g for g in judge.in_rox if g not in judge.rox_junk[q0]])
        y = np.array([g in judge.rox_pos[q0] for g in judged], dtype=np.float64)
        out = np.full(ds.n_gallery, -np.inf)
        fold = rng.integers(0, folds, len(judged))
        for f in range(folds):
            w = logistic_fit(xb[judged[fold != f]], y[fold != f])
            out[judged[fold == f]] = xb[judged[fold == f]] @ w
        ox = set(np.concatenate([ds.queries[q0].group(n) for n in (*POSITIVE, "junk")]).tolist())
        for g in np.flatnonzero(np.isfinite(out)).tolist():
            if g not in ox:
                scored += [(float(out[g]), q, g) for q in qs]
    scored.sort(key=lambda t: (-t[0], t[2], t[1]))
    return [(q, g) for _, q, g in scored]


# -- the tables -----------------------------------------------------------------------------

def precision_cells(pairs: list[tuple[int, int]], judge: Judge,
                    issue_count: bool = False) -> list[str]:
    """Return one cell per k: precision (changed pairs among the first k), and how many went
    each way. With ``issue_count`` a dropped Oxford positive counts as a positive that is
    negative (the issue's count, not a re-judgement)."""
    cells = []
    verdicts = [judge.verdict(q, g) for q, g in pairs[:max(KS)]]
    if issue_count:
        verdicts = [P2N if v == DROPPED else v for v in verdicts]
    for k in KS:
        c = Counter(verdicts[:k])
        cells.append(f"{(c[N2P] + c[P2N]) / k:.2f} ({c[N2P]} / {c[P2N]})")
    c = Counter(verdicts[:max(KS)])
    cells.append(f"{c[UNJUDGED] + c[DROPPED]}")
    return cells


def print_precision(rows: list[tuple[str, list[tuple[int, int]]]], judge: Judge,
                    issue_count: bool) -> None:
    """Print the precision table (markdown)."""
    print("| method | P@25 (neg->pos / pos->neg) | P@50 | P@100 | unjudged in the first 100 |")
    print("|---|---|---|---|---|")
    for name, pairs in rows:
        print(f"| {name} | " + " | ".join(precision_cells(pairs, judge, issue_count)) + " |")


def print_examples(suspects: list, judge: Judge, wanted: tuple[str, ...], title: str,
                   n: int = 10) -> None:
    """Print the first ``n`` distinct (landmark, image) pair suspects whose verdict is one of
    ``wanted``, with their position in the list, queries, ranks and evidence."""
    ds = judge.dataset
    index = ds.gallery_index()
    shown: dict[tuple[str, str], list] = {}
    for pos, s in enumerate(suspects, 1):
        if s.query is None or s.kind not in (NEG_POS, POS_NEG, DUPLICATE):
            continue
        v = judge.verdict(ds.query_by_name(s.query), index[s.item])
        key = (s.query.rsplit("_", 1)[0], s.item)
        numbers = [name.rsplit("_", 1)[1] for name in s.queries or (s.query,)]
        if key in shown:
            shown[key][2].extend(numbers)
        elif v in wanted and len(shown) < n:
            shown[key] = [pos, s, numbers, v]
    print(f"\n{title}:")
    for (landmark, item), (pos, s, qs, v) in shown.items():
        ranks = ", ".join(f"{r if r is not None else '-'}" for _, r in s.ranks)
        print(f"- #{pos} `{item}` for {landmark}_{'/'.join(qs)} ({s.labelled} -> "
              f"{s.suggested}, score {s.score:.2f}, rank {ranks}; rOxford: {v}): "
              f"{s.evidence}")


def report() -> None:
    """Print the precision tables, by direction, and the first confirmed and unconfirmed."""
    if not available():
        print("(c) skipped: the shared Oxford5k samples or rOxford's ground truth are absent")
        return
    opened = open_fc7()
    ds = opened.dataset
    judge = build_judge(ds)
    counts = changed_counts(judge)
    fc7_map = next(iter(opened.methods.values())).evaluations["oxford"].summary["mAP"] * 100
    print(f"(c) untouched Oxford5k ({ds.n_queries} queries, {ds.n_gallery} images), fc7 128-d "
          f"(mAP {fc7_map:.1f}), judged by rOxford: {counts[N2P]} negatives it calls positive and "
          f"{counts[P2N]} positives it calls negative (base rate "
          f"{100 * (counts[N2P] + counts[P2N]) / (counts[N2P] + counts[P2N] + counts[SAME]):.2f}"
          f" %); {counts[UNJUDGED]:,} pairs junk on either side; rOxford dropped its 70 query "
          f"images from its database, {counts['dropped positive']} Oxford positives among "
          f"them ({counts['dropped positive'] + counts['dropped self']} with the queries' own "
          "images: the issue's count took them for positives that are negatives)")
    pairs, suspects = audit_pairs(opened)
    rows = [("audit", pairs), ("naive baseline (rank percentile)", naive_pairs(opened, "oxford")),
            ("simple set-level baseline (10-NN positive share)",
             set_level_pairs(opened, "oxford")),
            ("ceiling: logistic regression trained on rOxford's labels (not a method)",
             ceiling_pairs(opened, judge))]
    print("\nPrecision of the first k distinct (query, image) suspects, rOxford's verdict:\n")
    print_precision(rows, judge, issue_count=False)
    print("\nThe same under the issue's count (dropped query images counted as positives that "
          "are negatives):\n")
    print_precision(rows[:3], judge, issue_count=True)
    with tempfile.TemporaryDirectory() as tmp:
        both = open_fc7(write_pcaw64(Path(tmp)))
        both_rows = [("audit, fc7 + its PCA-whitened 64-d", audit_pairs(both)[0]),
                     ("naive baseline, both", naive_pairs(both, "oxford")),
                     ("simple set-level baseline, both", set_level_pairs(both, "oxford"))]
    print("\nTwo methods (the second made from the first):\n")
    print_precision(both_rows, judge, issue_count=False)
    print_examples(suspects, judge, (N2P, P2N), "The audit's first ten confirmed suspects "
                   "(rOxford changed the pair), one line per image, its queries folded")
    print_examples(suspects, judge, (SAME,), "The audit's first ten unconfirmed suspects "
                   "(rOxford keeps Oxford's label)")


if __name__ == "__main__":
    report()
