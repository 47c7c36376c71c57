"""Protocols: the metric conventions of each benchmark family, by name.

A :class:`Protocol` says which relevance groups of a :class:`~irviewer.core.dataset.Dataset`
count as positive, which are removed from the ranking, how AP is integrated, whether the
query's own image stays in the ranking, and which extra metrics the family reports. Every
field can be overridden by name (``protocol.override(ap=FINITE)``). ``docs/metrics.md``
gives every protocol and convention below with its formula, its source (paper and reference
code), its default and when to switch it; :func:`conventions` is the one place the sentences
naming them for the user are written (the eval table, its JSON, the window).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from irviewer.core.convention_names import (
    ALL_POSITIVES,
    AP_DEFINITIONS,
    AP_DENOMINATORS,
    AP_RULES,
    DEPTH_DENOMINATORS,
    FINITE,
    KEEP,
    LISTED_POSITIVES,
    REMOVE,
    SELF_MATCH_RULES,
    TRAPEZOID,
    APDenominator,
    APRule,
    SelfMatch,
    one_of,
)
from irviewer.core.errors import InputError

CMCRule = Literal["none", "market", "cuhk03"]

#: The tie rule every ranking follows, as the output names it (see
#: :mod:`irviewer.core.ranking.settle`; a ranking file's scores are its order as written).
TIES = ("stable: equal scores keep gallery order; computed scores nearer than float32 "
        "rounding can order are ordered by their exact value (exact dot products), the same "
        "on every machine")
#: Why a query with no positive left is out of the means (unless its protocol says why).
SKIP_REASON = "no positive left after the protocol's removals"
#: The summary key of DISC21's headline, micro-average precision over every predicted pair.
MICRO_AP = "microAP"



@dataclass(frozen=True)
class Protocol:
    """The conventions one evaluation uses; every field is validated and named in the output.

    Attributes:
        name: registry name, e.g. ``oxford`` or ``revisited-medium``.
        family: benchmark family (``instance``, ``oxford``, ``revisited``, ``reid``,
            ``hpatches``, ``holidays``).
        positive: relevance groups counted as positive.
        ignored: relevance groups removed from the ranking before ranks are counted.
        ap: ``finite`` (mean of P@rank over positives) or ``trapezoid`` (Oxford compute_ap).
        self_match: ``remove`` takes the query's own gallery image out of the ranking;
            ``keep`` leaves it where the ground truth puts it.
        ks: cut-offs for P@k (true P@k, always divided by k).
        revisitop_pk: also report revisitop's mP@k, divided by min(k, rank of last positive).
        cmc: ``market`` (first match, Market-1501), ``cuhk03`` (single-gallery-shot) or ``none``.
        cmc_ks: cut-offs reported for CMC.
        cmc_repeats / seed: the CUHK03 sampler's repeat count and seed.
        inp: report mINP (Ye et al., TPAMI 2021).
        list_depth: score only the first N results after removals (HPatches: 50).
        map_at_r: report MAP@R (Musgrave et al. ECCV 2020, as pytorch-metric-learning's
            AccuracyCalculator computes it; :mod:`irviewer.core.learning_metrics`).
        recall_ks: cut-offs of metric learning's Recall@K (a same-label result within the
            first K; none when empty).
        ap_positives: AP's denominator: ``all`` positives of the query (trec_eval), only
            those ``retrieved`` within the list (VLFeat ``vl_pr`` as HPatches uses it; 0 when
            none is retrieved), ``depth``: min(positives, list depth) (delf's mAP@100 of
            Google Landmarks v2), or ``list``: the list depth itself.
        first_position: also report the 1-based position of the first positive within the
            list (list depth + 1 when none), its mean and median (delf
            ``MeanMedianPosition``).
        family_note: what is said of a query with no positive under this protocol (None: it
            is skipped, :data:`SKIP_REASON`): a Google Landmarks
            query of the other Usage, a copy-detection query with no copy.
        headline: the summary key a paper of this family cites first.
        source: where the conventions come from, for citing.
    """

    name: str
    family: str
    positive: tuple[str, ...]
    ignored: tuple[str, ...] = ()
    ap: APRule = FINITE
    self_match: SelfMatch = REMOVE
    ks: tuple[int, ...] = (1, 5, 10)
    revisitop_pk: bool = False
    cmc: CMCRule = "none"
    cmc_ks: tuple[int, ...] = (1, 5, 10, 20)
    cmc_repeats: int = 10
    seed: int = 0
    inp: bool = False
    list_depth: int | None = None
    ap_positives: APDenominator = ALL_POSITIVES
    first_position: bool = False
    family_note: str | None = None
    map_at_r: bool = False
    recall_ks: tuple[int, ...] = ()
    headline: str = "mAP"
    source: str = ""

    def __post_init__(self) -> None:
        if self.ap not in AP_RULES:
            raise InputError(f"unknown AP rule {self.ap!r}: use {one_of(AP_RULES)}")
        if self.self_match not in SELF_MATCH_RULES:
            raise InputError(f"unknown self-match rule {self.self_match!r}: use "
                             f"{one_of(SELF_MATCH_RULES)}")
        if self.cmc not in ("none", "market", "cuhk03"):
            raise InputError(f"unknown CMC rule {self.cmc!r}: use none, market or cuhk03")
        if not self.positive:
            raise InputError(f"protocol {self.name}: no relevance group is positive")
        overlap = set(self.positive) & set(self.ignored)
        if overlap:
            raise InputError(f"protocol {self.name}: group(s) {', '.join(sorted(overlap))} "
                             "cannot be both positive and ignored")
        if any(k < 1 for k in (*self.ks, *self.cmc_ks, *self.recall_ks)):
            raise InputError(f"protocol {self.name}: cut-offs k must be at least 1")
        if self.ap_positives not in AP_DENOMINATORS:
            raise InputError(f"unknown AP denominator {self.ap_positives!r}: use "
                             f"{one_of(AP_DENOMINATORS)}")
        if self.list_depth is not None and self.list_depth < 1:
            raise InputError(f"protocol {self.name}: the list depth must be at least 1")
        if self.list_depth is None and (self.ap_positives in DEPTH_DENOMINATORS
                                        or self.first_position):
            raise InputError(f"protocol {self.name}: AP over min(positives, depth), over the "
                             "depth, and the first position need a list depth")
        if self.cmc_repeats < 1:
            raise InputError(f"protocol {self.name}: the CMC repeat count must be at least 1")

    @property
    def skip_reason(self) -> str:
        """Return why a query without positives is out of this protocol's means: its
        ``family_note`` (a test image of another Usage, a query with no copy), else
        :data:`SKIP_REASON`."""
        return self.family_note or SKIP_REASON

    def override(self, **changes: Any) -> Protocol:
        """Return a copy with the named fields changed (None leaves a field as it is);
        InputError for an unknown field or a value :meth:`__post_init__` refuses (the
        values come from users, so their types are checked there, at run time)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise InputError(f"protocol {self.name}: no option called {', '.join(unknown)} "
                             f"(options: {', '.join(sorted(known))})")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def describe(self) -> dict[str, object]:
        """Return the conventions as the JSON object ``irviewer eval --json`` writes."""
        return {
            "name": self.name,
            "family": self.family,
            "ap": self.ap,
            "ap_definition": AP_DEFINITIONS[self.ap],
            "ties": TIES,
            "self_match": self.self_match,
            "positive": list(self.positive),
            "ignored": list(self.ignored),
            "ks": list(self.ks),
            "revisitop_pk": self.revisitop_pk,
            "cmc": self.cmc,
            "cmc_ks": list(self.cmc_ks),
            **({"cmc_repeats": self.cmc_repeats, "seed": self.seed}
               if self.cmc == "cuhk03" else {}),
            "inp": self.inp,
            "list_depth": self.list_depth,
            "ap_positives": self.ap_positives,
            **({"first_position": True} if self.first_position else {}),
            **({"family_note": self.family_note} if self.family_note else {}),
            "map_at_r": self.map_at_r,
            "recall_ks": list(self.recall_ks),
            "headline": self.headline,
            "source": self.source,
        }


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("instance", "instance", positive=("positive",), ignored=("junk",), ap=FINITE,
             self_match=REMOVE, headline="mP@1",
             source="instance sets (CLICIDE, GaRoFou): same instance label is positive, "
                    "the query's own image is removed; mean P@1 is the headline"),
    Protocol("oxford", "oxford", positive=("good", "ok"), ignored=("junk",), ap=TRAPEZOID,
             self_match=KEEP,
             source="Oxford5k/Paris6k (Philbin et al. CVPR 2007, compute_ap.cpp): good+ok "
                    "positive, junk ignored, the query image stays in the ranking"),
    *(Protocol(f"revisited-{level}", "revisited", positive=pos, ignored=ign, ap=TRAPEZOID,
               self_match=KEEP, revisitop_pk=True,
               source="revisited Oxford/Paris (Radenovic et al. CVPR 2018, revisitop "
                      f"compute_map): {level.capitalize()} protocol")
      for level, pos, ign in (("easy", ("easy",), ("junk", "hard")),
                              ("medium", ("easy", "hard"), ("junk",)),
                              ("hard", ("hard",), ("junk", "easy")))),
    Protocol("market1501", "reid", positive=("positive",), ignored=("same_camera",),
             ap=FINITE, self_match=REMOVE, cmc="market", inp=True, headline="CMC@1",
             source="Market-1501 (Zheng et al. ICCV 2015) as torchreid/fast-reid report it: "
                    "same id on another camera is positive, same id and camera removed, "
                    "id -1 junk removed; CMC by first match"),
    Protocol("cuhk03", "reid", positive=("positive",), ignored=("same_camera",),
             ap=FINITE, self_match=REMOVE, cmc="cuhk03", inp=True, headline="CMC@1",
             source="CUHK03 (Li et al. CVPR 2014) single-gallery-shot CMC as torchreid "
                    "eval_cuhk03 defines it, with a seeded sampler"),
    Protocol("hpatches-patch", "hpatches", positive=("same_patch",), ap=FINITE,
             self_match=REMOVE, list_depth=50, ap_positives=LISTED_POSITIVES,
             source="HPatches patch retrieval (Balntas et al. CVPR 2017; hpatches-benchmark "
                    "retrieval_eval.m with VLFeat vl_pr): the corresponding patches are "
                    "positive; AP over the 50 results after the query patch, divided by the "
                    "positives among them (0 when none)"),
    Protocol("hpatches-image", "hpatches", positive=("same_image",), ap=FINITE,
             self_match=REMOVE, list_depth=50, ap_positives=LISTED_POSITIVES,
             source="HPatches image retrieval (hpatches-benchmark retrieval_eval.m): any patch "
                    "of an image of the query's cluster is positive; AP as the patch task"),
    *(Protocol(f"hpatches-retrieval-{noise}", "hpatches", positive=(noise,),
               ignored=("same_sequence", *(o for o in ("easy", "hard", "tough") if o != noise)),
               ap=FINITE, self_match=KEEP,
               source=f"HPatches retrieval task, {noise} geometric noise (Balntas et al. CVPR "
                      "2017; hpatches-benchmark matlab/+bench/+retrieval/eval.m): the query's "
                      f"5 corresponding {noise} patches are positive among the split's "
                      "distractors, distractors of the query's own sequence are ignored, "
                      "scores are negative squared L2, AP over the 5 positives")
      for noise in ("easy", "hard", "tough")),
    Protocol("holidays", "holidays", positive=("positive",), ap=TRAPEZOID,
             self_match=REMOVE, ks=(1, 5, 10),
             source="INRIA Holidays (Jegou et al. ECCV 2008, eval_holidays): same group is "
                    "positive, the query image is removed from its own results"),
    *(Protocol(f"gldv2-{usage}", "gldv2", positive=(usage,), ap=FINITE, self_match=KEEP,
               ks=(1, 5, 10, 100), list_depth=100, ap_positives="depth", first_position=True,
               family_note=f"a test image of another Usage: scored under gldv2-{other}",
               source=f"Google Landmarks v2 retrieval, {usage.capitalize()} test images "
                      "(Weyand et al. CVPR 2020; tensorflow/models delf "
                      "google_landmarks_dataset/metrics.py MeanAveragePrecision, "
                      "MeanPrecisions, MeanMedianPosition with max_predictions=100): the "
                      "solution's index images are positive; the first 100 results count, a "
                      "repeated one keeps its place but scores nothing; AP divided by "
                      "min(positives, 100); every test image of the Usage counts, one "
                      "without predictions as 0")
      for usage, other in (("public", "private"), ("private", "public"))),
    Protocol("disc21", "copy-detection", positive=("copy",), ap=FINITE, self_match=KEEP,
             ks=(1, 10), headline=MICRO_AP,
             family_note="no copy among the references: its answers are false positives "
                         "in microAP",
             source="DISC21 copy detection (Douze et al., The 2021 Image Similarity Dataset "
                    "and Challenge; facebookresearch/isc2021 isc/metrics.py evaluate): "
                    "microAP over every predicted (query, reference, score) pair, tied "
                    "scores in the worst order, every ground-truth pair in the denominator; "
                    "recall at precision 90 % and at rank 1 and 10"),
    *(Protocol(name, "instance", positive=("positive",), ignored=("junk",), ap=FINITE,
               self_match=REMOVE, ks=(1,), map_at_r=True, recall_ks=cutoffs,
               headline="Recall@1",
               source=f"{what}, leave-one-out: every image queries all the others, the same "
                      "label is positive, the query itself removed by index; MAP@R, "
                      "R-precision and P@1 as pytorch-metric-learning 2.x AccuracyCalculator "
                      "(avg_of_avgs=False), Recall@K as the metric-learning papers (Song et "
                      "al. CVPR 2016)")
      for name, what, cutoffs in (
          ("metric-learning", "deep metric learning (CUB-200-2011 and Cars196 test classes, "
           "or any labelled set)", (1, 2, 4, 8)),
          ("sop", "Stanford Online Products (Song et al. CVPR 2016)", (1, 10, 100, 1000)))),
    Protocol("inshop", "instance", positive=("positive",), ignored=("junk",), ap=FINITE,
             self_match=REMOVE, ks=(1,), recall_ks=(1, 10, 20, 30, 40, 50),
             headline="Recall@1",
             source="In-Shop Clothes Retrieval (Liu et al. CVPR 2016, DeepFashion): each "
                    "query image against the gallery, the gallery images of its item are "
                    "positive; Recall@K as the metric-learning papers"),
)}

#: Summary keys that are not fractions shown in percent: positions, scores and counts.
UNIT_FREE_KEYS = ("mean_position", "median_position", "threshold@P90", "n_predictions",
                  "n_ground_truth_pairs", "n_outside_queries")
#: Per-query keys defined for every query, a skipped one included (counts, answers).
EVERY_QUERY_KEYS = ("first_positive_rank", "n_positives", "n_answers", "top_score")

#: Per-query keys whose mean over the queries keeps the key's name (a CMC or Recall@K value
#: is already a rate over queries); every other mean is the key with "m" in front.
RATE_PREFIXES = ("CMC@", "Recall@")


def mean_key(key: str) -> str:
    """Return the summary key of the mean of per-query key ``key``: ``CMC@1`` and
    ``Recall@1`` as they are, ``m`` + the key otherwise (``mAP``, ``mP@1``, ``mAP@R``)."""
    return key if key.startswith(RATE_PREFIXES) else f"m{key}"


#: The sentences of metric learning's metrics (:func:`conventions`).
MAP_AT_R = ("MAP@R (Musgrave et al. ECCV 2020) as pytorch-metric-learning's "
            "AccuracyCalculator: the precision at each same-label result within the first R, "
            "summed and divided by R = the query's same-label references, itself excluded")
RECALL_AT_K = ("Recall@K of the metric-learning papers (Song et al. CVPR 2016): 1 when a "
               "same-label result is among the first K")


def conventions(protocol: Protocol, keys: Iterable[str]) -> dict[str, str]:
    """Return the sentence naming each convention of ``protocol``: one per summary key of
    ``keys`` (``mAP``, ``mP@5``, ``mP@5(revisitop)``, ``CMC@1``, ``mINP``, ``mR-precision``;
    counts such as ``n_evaluated`` get none), plus ``ties`` and ``self_match``.

    The one source of these sentences: ``irviewer eval`` prints them beside each number and
    writes them to its JSON. Sources: docs/metrics.md.
    """
    out: dict[str, str] = {}
    for key in keys:
        sentence = _metric_convention(protocol, key)
        if sentence is not None:
            out[key] = sentence
    out["ties"] = TIES
    out["self_match"] = ("a query's own image, where it is in the gallery, is removed from "
                         "its ranking" if protocol.self_match == REMOVE else
                         "a query's own image, where it is in the gallery, stays in the "
                         "ranking")
    return out


#: How every sentence names the query's own image in the gallery.
OWN_IMAGE = "the query's own image"


def removals(ignored: Iterable[str], self_match: str, own_images: bool | None = None) -> str:
    """Return what each ranking loses before ranks are counted, as one clause that says the
    self-match rule with the rest, so that the two can never disagree (the eval table and
    the figure caption write it; "nothing" is said only when nothing is removed).

    ``ignored``: the removed groups, in words; ``self_match``: the protocol's rule;
    ``own_images``: whether some query's own image is in the gallery (None when unknown:
    the clause then says "where it is in the gallery"). For example "junk, the query's own
    image"; "nothing (no query's own image is in the gallery)"; "junk; the query's own
    image stays in its ranking".
    """
    where = ", where it is in the gallery," if own_images is None else ""
    items = list(ignored)
    if self_match == REMOVE and own_images is not False:
        items.append(OWN_IMAGE + where.rstrip(","))
    text = ", ".join(items) or "nothing"
    if self_match == REMOVE and own_images is False:
        text += " (no query's own image is in the gallery)"
    elif self_match == KEEP and own_images is not False:
        text += f"; {OWN_IMAGE}{where} stays in its ranking"
    return text


def _metric_convention(protocol: Protocol, key: str) -> str | None:
    """Return the sentence of one summary key (None for counts)."""
    if key in ("n_evaluated", "n_skipped") or key.startswith("n_"):
        return None
    if key in COPY_DETECTION_SENTENCES and protocol.family == "copy-detection":
        return COPY_DETECTION_SENTENCES[key]
    if key == "mAP":
        return AP_DEFINITIONS[protocol.ap] + _denominator_words(protocol)
    if key == "mean_position":
        return (f"delf MeanMedianPosition: the mean 1-based position of the first positive "
                f"within the first {protocol.list_depth} results, {protocol.list_depth} + 1 "
                "when none")
    if key == "median_position":
        return "delf MeanMedianPosition: the median (numpy) of the same positions"
    if key.endswith("(revisitop)"):
        return "revisitop: divided by min(k, rank of the last positive)"
    if key.startswith("mP@"):
        return "true P@k: positives in the top k divided by k"
    if key.startswith("CMC@"):
        if protocol.cmc == "cuhk03":
            return (f"CUHK03 single-gallery-shot, {protocol.cmc_repeats} repeats, "
                    f"seed {protocol.seed}")
        return "Market-1501: a positive within the top k (first match)"
    if key == "mINP":
        return "inverse negative penalty (Ye et al. TPAMI 2021)"
    if key == "mR-precision":
        return "precision at R = number of positives"
    if key == "mAP@R":
        return MAP_AT_R
    if key.startswith("Recall@"):
        return RECALL_AT_K
    return ""


#: The sentences of the copy-detection summary keys (isc2021 ``isc/metrics.py``).
COPY_DETECTION_SENTENCES = {
    MICRO_AP: "micro-average precision, one global number over every predicted pair (not "
              "a mean over queries): pairs by descending score, tied scores in the worst "
              "order (false before true), divided by every ground-truth pair; isc2021 "
              "evaluate",
    "mAP": "macro: the mean over the queries with a copy of their own finite-sum AP; not "
           "DISC21's number (that is microAP)",
    "recall@P90": "the highest recall at a point of the worst-order list with precision "
                  ">= 90 %; isc2021 find_operating_point",
    "threshold@P90": "the score at that point (accept score >= it); none when precision "
                     "never reaches 90 %",
    "recall@rank1": "ground-truth pairs whose reference no other answer of the query "
                    "outscores or ties, over every ground-truth pair; isc2021 find_tp_ranks",
    "recall@rank10": "ground-truth pairs with fewer than 10 other answers of the query "
                     "scoring at least as high, over every ground-truth pair",
}


def _denominator_words(protocol: Protocol) -> str:
    """Return what the mAP sentence adds for a list depth and a denominator other than all
    the positives ("" for the others, whose sentences predate these)."""
    depth = protocol.list_depth
    if protocol.ap_positives == "depth":
        return (f"; over the first {depth} results, divided by min(positives, {depth}) as "
                "delf MeanAveragePrecision")
    if protocol.ap_positives == "list":
        return f"; over the first {depth} results, divided by {depth}"
    return ""


def get_protocol(name: str) -> Protocol:
    """Return the registered protocol called ``name``; InputError naming the known ones."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise InputError(f"unknown protocol {name!r}; known protocols: "
                         f"{', '.join(PROTOCOLS)}") from None


def check_applicable(protocol: Protocol, groups: tuple[str, ...], where: str) -> None:
    """Raise InputError when the dataset lacks a group ``protocol`` counts as positive (the
    sentence names every group it lacks). An ignored group the dataset does not have is
    empty: an instance set has ``junk`` items only once a correction marks one ignored."""
    missing = [g for g in (*protocol.positive, *protocol.ignored) if g not in groups]
    if any(g not in groups for g in protocol.positive):
        raise InputError(f"{where}: protocol {protocol.name} needs relevance group(s) "
                         f"{', '.join(missing)}, but this dataset has "
                         f"{', '.join(groups) or 'none'}")
