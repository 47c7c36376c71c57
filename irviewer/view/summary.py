"""The summary bar: the protocol's own headline metric first, then the other means the
protocol reports, the evaluated and skipped counts and the conventions in words (Qt-free).

Which metrics a protocol reports follows its fields (:class:`~irviewer.core.protocols.Protocol`):
``headline`` (the number a paper of the family cites first), mAP always, revisitop's mP@k
where ``revisitop_pk``, CMC where ``cmc`` is not ``none``, mINP where ``inp``, mAP@R where
``map_at_r``, the first two Recall@K of ``recall_ks``.
"""

from __future__ import annotations

from dataclasses import dataclass

from irviewer.core.convention_names import AP_LABELS, SELF_MATCH_LABELS
from irviewer.core.evaluation import Evaluation
from irviewer.core.protocols import Protocol
from irviewer.formats.collection import NAME as COLLECTION
from irviewer.view.ties_view import tie_summary

#: Why a collection of one photo per artwork has nothing to score, and what it shows instead.
ONE_PHOTO_EACH = ("every artwork has one photo, so each is shown with the artworks most like "
                  "it; drop a visitor's photo on the window to find its artwork")


def summary_keys(protocol: Protocol) -> tuple[str, ...]:
    """Return the summary keys the bar shows for ``protocol``, its headline first."""
    keys = ["mAP", f"mP@{min(protocol.ks)}" if protocol.ks else "mP@1"]
    if protocol.revisitop_pk:
        keys.append(f"mP@{max(protocol.ks)}(revisitop)")
    if protocol.cmc != "none":
        keys += [f"CMC@{k}" for k in protocol.cmc_ks[:2]]
    if protocol.inp:
        keys.append("mINP")
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

    def html(self) -> str:
        """Return the bar as rich text; the headline metric is larger. When no query could
        be scored, the sentence saying why replaces the (undefined) means."""
        if not self.n_evaluated:
            return (f"<b>Nothing to score</b>: {self.nothing} &nbsp;·&nbsp; "
                    f"{self.protocol}: {self.conventions}")
        parts = []
        for key, value in self.metrics:
            text = f"<b>{key}</b> {100 * value:.2f}"
            parts.append(f'<span style="font-size:large">{text}</span>' if key == self.headline
                         else text)
        ties = f" &nbsp;·&nbsp; {self.ties}" if self.ties else ""
        return (" &nbsp; ".join(parts) + f"{ties} &nbsp;·&nbsp; {self.n_evaluated:,} "
                f"evaluated, {self.n_skipped:,} skipped &nbsp;·&nbsp; {self.protocol}: "
                f"{self.conventions}")


def summary(evaluation: Evaluation) -> Summary:
    """Return the summary bar of ``evaluation`` (keys the evaluation lacks are left out)."""
    s, p = evaluation.summary, evaluation.protocol
    metrics = tuple((k, float(s[k])) for k in summary_keys(p) if k in s)
    skipped = int(s["n_skipped"])
    nothing = (ONE_PHOTO_EACH if evaluation.dataset.format == COLLECTION else
               f"no query has a positive left ({skipped:,} skipped)")
    return Summary(metrics, p.headline, int(s["n_evaluated"]), skipped, p.name,
                   f"{AP_LABELS[p.ap]}, {SELF_MATCH_LABELS[p.self_match]}, ties keep gallery order",
                   nothing, tie_summary(evaluation) if int(s["n_evaluated"]) else "")
