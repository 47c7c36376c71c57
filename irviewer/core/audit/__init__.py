"""Label audit: the (query, item) pairs and images whose labels the rankings say look wrong.

The rankings and the descriptors are the evidence. A negative that the query's positive set
claims (ranked among them by the queries sharing the list, its nearest gallery images among
them), a positive unlike the set it is listed in, an image whose nearest gallery neighbours
all carry another label, two near-identical images with different labels: each becomes a
:class:`Suspect` with a kind, a score in [0, 1], one evidence sentence a person can check,
and a suggested row of the corrections file. Agreement across methods is required: a pair or
image is a suspect only when every method says so, and its score is the smallest of the
methods' scores (one method's confusion is not a label error).

The idea is the one of label-error finders for classification data: confident learning's
label issues and near-duplicates (Northcutt et al., JAIR 2021, cleanlab), neighbour-label
agreement (fastdup), mistakenness (FiftyOne), applied here to retrieval ground truth.

Protocol-aware: whatever the audit's protocol removes from a query's ranking (Oxford junk,
same-camera re-id matches, the query's own image where it is removed) is never reported,
nor is any image removed for every query (re-id junk id -1); re-id distractors (id 0) are
negatives, as the protocol says. The query's own image is never reported.

Scores, in [0, 1]; a suspect is reported when its score is at least ``min_score`` (0.5; hubs
excepted). Suspects are listed by the log odds of their score (:meth:`Suspect.order`), so the
most certain ones keep their order where the probability rounds to 1. Where several queries
share a label (Oxford's five queries of a landmark share their lists), a pair suspect is one
entry naming them all (``queries``) with the fix of each (``corrections``):

* ``wrong_list``: an image one list has as a positive and another, unrelated list looks
  like (:mod:`irviewer.core.audit.claims`): one suspect naming both lists, whose fix takes
  it out of the one and into the other; its score is the probability that the list having
  it is wrong, given that the image belongs rather to the other list than to none.
* ``negative_looks_positive`` and ``positive_looks_negative``: the probability that the
  label is wrong, from set-level evidence (:mod:`irviewer.core.audit.sets`,
  :mod:`irviewer.core.audit.calibration`): per positive set (the queries sharing a list pool
  their evidence), the share u of the set's other positives the item outranks (mean over the
  set's queries), the share v of its nearest labelled gallery images in the set and, where
  the sets are lists, the share x of them any list names (the three by their joint
  histogram: they measure one nearness) and the likeness w, the share of the set's negatives
  less like the set than the item (:mod:`irviewer.core.audit.likeness`); each calibrated by
  the set's own histograms of its positives and negatives (Sturges bins, Laplace smoothing,
  the item left out) and combined with the prior error rate of the direction that the
  confident joint estimates from the dataset. The claims of unrelated lists count
  (:mod:`irviewer.core.audit.claims`): a positive another list also has (a competing claim)
  or looks like (another list's claim) is more probably wrong. In image-label sets a
  positive that looks negative is not reported: an image is mislabelled as far as another
  label claims it. One suspect per problem: the queries of one family of sets (one list
  written several times) whose lists carry the label (:mod:`irviewer.core.audit.pair_kinds`).
* ``label_disagreement`` (image labels only): f * c. X = the other label most frequent among
  the item's k nearest gallery images (the same X under every method), f = n_X / (n_X +
  n_own) * min(1, 2 n_X / k); c = min(1, p / 0.05), p = the percentile of the item's mean
  neighbour cosine among a random sample of gallery images (a view far from everything has p
  near 0: it is hard, not mislabelled). Pair evidence for the same relabel strengthens it:
  1 - (1 - f c)(1 - s_pair).
* ``near_duplicate``: 1.0 for identical image bytes, else 0.8 + 0.2 (cos - t) / (1 - t) with
  t = ``duplicate_cosine``.
* ``query_ground_truth``: 1 - N / (f + 1) with f the 0-based rank of the first positive other
  than the query's own image (f >= N = ``query_top``); or 1 - t for positives whose mean
  pairwise cosine stands at t of the way from random pairs to the typical query (t < 0.25).
* ``hub`` (informational, no correction): 0.5 (1 - e / n), n = how often the item is in a
  top ``hub_top`` list as a negative, e the count expected by chance.
"""

from irviewer.core.audit.run import audit, audit_protocol, iter_audit
from irviewer.core.audit.suspects import (
    AUTHOR,
    DUPLICATE,
    HUB,
    KINDS,
    LABEL,
    NEG_POS,
    POS_NEG,
    QUERY,
    WRONG_LIST,
    AuditOptions,
    AuditResult,
    AuditStep,
    Suspect,
    ordinal,
    rank_phrase,
    score_words,
    span,
    under,
)

__all__ = ["AUTHOR", "DUPLICATE", "HUB", "KINDS", "LABEL", "NEG_POS", "POS_NEG", "QUERY",
           "WRONG_LIST", "AuditOptions", "AuditResult", "AuditStep", "Suspect", "audit",
           "audit_protocol", "iter_audit", "ordinal", "rank_phrase", "score_words", "span",
           "under"]
