"""The summary bar: the protocol's own headline metric first, then the other means the
protocol reports, the evaluated and skipped counts and the conventions in words (Qt-free).

Which metrics a protocol reports follows its fields (:class:`~irviewer.core.protocols.Protocol`):
``headline`` (the number a paper of the family cites first), mAP always, revisitop's mP@k
where ``revisitop_pk``, CMC where ``cmc`` is not ``none``, mINP where ``inp``, mAP@R where
``map_at_r``, the first two Recall@K of ``recall_ks``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from irviewer.core.convention_names import AP_LABELS, SELF_MATCH_LABELS
from irviewer.core.copy_detection import COPY_DETECTION
from irviewer.core.evaluation import Evaluation
from irviewer.core.protocols import MICRO_AP, UNIT_FREE_KEYS, Protocol
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.view.answers_view import counts_words
from irviewer.view.ties_view import tie_summary
from irviewer.view.window_layout import window_layout

#: Why a collection of one photo per artwork has nothing to score, and what it shows instead.
ONE_PHOTO_EACH = ("every artwork has one photo, so each is shown with the artworks most like "
                  "it; drop a visitor's photo on the window to find its artwork")


def summary_keys(protocol: Protocol) -> tuple[str, ...]:
    """Return the summary keys the bar shows for ``protocol``, its headline first (for copy
    detection, the numbers scored over every predicted pair, then the macro mAP)."""
    if protocol.family == COPY_DETECTION:
        return (MICRO_AP, "recall@P90", "threshold@P90", "recall@rank1", "recall@rank10", "mAP")
    keys = ["mAP", f"mP@{min(protocol.ks)}" if protocol.ks else "mP@1"]
    if protocol.revisitop_pk:
        keys.append(f"mP@{max(protocol.ks)}(revisitop)")
    if protocol.cmc != "none":
        keys += [f"CMC@{k}" for k in protocol.cmc_ks[:2]]
    if protocol.inp:
        keys.append("mINP")
    if protocol.first_position:
        keys.append("median_position")
    if protocol.map_at_r:
        keys.append("mAP@R")
    keys += [f"Recall@{k}" for k in protocol.recall_ks[:2]]
    ordered = [protocol.headline, *(k for k in keys if k != protocol.headline)]
    return tuple(ordered)


@dataclass(frozen=True)
class Summary:
    """The summary bar's content: (key, value) pairs with the headline first, the counts and
    the conventions."""

    metrics: tuple[tuple[str, float], ...]
    headline: str
    n_evaluated: int
    n_skipped: int
    protocol: str
    conventions: str
    nothing: str = ""
    ties: str = ""
    counts: str = ""
    research: bool = True

    def html(self) -> str:
        """Return the bar as rich text; the headline metric is larger. When no query could
        be scored, the sentence saying why replaces the (undefined) means; a curator's
        collection without ground truth (``research`` False) gets that sentence alone, no
        protocol and no conventions."""
        if not self.research:
            return self.nothing[:1].upper() + self.nothing[1:]
        if not self.n_evaluated:
            return (f"<b>Nothing to score</b>: {self.nothing} &nbsp;·&nbsp; "
                    f"{self.protocol}: {self.conventions}")
        parts = []
        for key, value in self.metrics:
            shown = (f"{value:.4g}" if key == "threshold@P90" else f"{value:.2f}"
                     if key in UNIT_FREE_KEYS else f"{100 * value:.2f}")
            text = f"<b>{key}</b> {'n/a' if math.isnan(value) else shown}"
            parts.append(f'<span style="font-size:large">{text}</span>' if key == self.headline
                         else text)
        ties = f" &nbsp;·&nbsp; {self.ties}" if self.ties else ""
        counts = self.counts or f"{self.n_evaluated:,} evaluated, {self.n_skipped:,} skipped"
        return (" &nbsp; ".join(parts) + f"{ties} &nbsp;·&nbsp; {counts} &nbsp;·&nbsp; "
                f"{self.protocol}: {self.conventions}")


def summary(evaluation: Evaluation) -> Summary:
    """Return the summary bar of ``evaluation`` (keys the evaluation lacks are left out)."""
    s, p = evaluation.summary, evaluation.protocol
    metrics = tuple((k, float(s[k])) for k in summary_keys(p) if k in s)
    skipped = int(s["n_skipped"])
    nothing = (ONE_PHOTO_EACH if evaluation.dataset.format == COLLECTION else
               f"no query has a positive left ({skipped:,} skipped)")
    said = f"{AP_LABELS[p.ap]}, {SELF_MATCH_LABELS[p.self_match]}, ties keep gallery order"
    if p.family == COPY_DETECTION:
        said = f"{MICRO_AP}: one number over all pairs, not a mean over queries"
    return Summary(metrics, p.headline, int(s["n_evaluated"]), skipped, p.name, said,
                   nothing, tie_summary(evaluation) if int(s["n_evaluated"]) else "",
                   counts_words(p, int(s["n_evaluated"]), skipped),
                   window_layout(evaluation).research)
