"""The names of the two conventions a protocol can change by name, and their labels: how AP is
integrated (``finite``: the mean of P@rank over the positives, trec_eval and torchreid;
``trapezoid``: Oxford ``compute_ap.cpp``, revisitop, cirtorch; ``interpolated``: all-point
interpolated, PASCAL VOC devkit 2010 and later; ``11point``: 11-point interpolated, PASCAL
VOC 2007 devkit) and what happens to the query's
own gallery image (``keep`` it where the ground truth puts it, or ``remove`` it from the
ranking). Every other module (the protocols, the metrics, the options, the session file, the
window) imports these; ``docs/metrics.md`` gives each with its source."""

from __future__ import annotations

from typing import Final, Literal

APRule = Literal["finite", "trapezoid", "interpolated", "11point"]
SelfMatch = Literal["keep", "remove"]

FINITE: Final = "finite"
TRAPEZOID: Final = "trapezoid"
INTERPOLATED: Final = "interpolated"
ELEVEN_POINT: Final = "11point"
#: The AP rules that sum one term per retrieved positive (their expected value over tie
#: orders has a closed form).
SUM_AP_RULES: tuple[APRule, ...] = (FINITE, TRAPEZOID)
#: Every AP rule, in the order the options, messages and the conventions table list them.
AP_RULES: tuple[APRule, ...] = (*SUM_AP_RULES, INTERPOLATED, ELEVEN_POINT)

#: AP's denominator: ``all`` positives of the query (trec_eval), only those ``retrieved``
#: within the scored list (VLFeat ``vl_pr`` as hpatches-benchmark calls it), min(positives,
#: list depth) (``depth``: delf's mAP@100 for Google Landmarks v2), or the list depth itself
#: (``list``: the GLDv2 2019 winners' ``map_at_k``).
APDenominator = Literal["all", "retrieved", "depth", "list"]
ALL_POSITIVES: Final = "all"
LISTED_POSITIVES: Final = "retrieved"
DEPTH_CAPPED: Final = "depth"
LIST_DEPTH: Final = "list"
AP_DENOMINATORS: tuple[APDenominator, ...] = (ALL_POSITIVES, LISTED_POSITIVES, DEPTH_CAPPED,
                                              LIST_DEPTH)
#: The denominators that need the list's depth.
DEPTH_DENOMINATORS: tuple[APDenominator, ...] = (DEPTH_CAPPED, LIST_DEPTH)

KEEP: Final = "keep"
REMOVE: Final = "remove"
#: Every self-match rule, in the order the options and messages list them.
SELF_MATCH_RULES: tuple[SelfMatch, ...] = (KEEP, REMOVE)

#: What the summary and the window's method bar call each rule.
AP_LABELS: dict[str, str] = {FINITE: "finite-sum AP", TRAPEZOID: "trapezoid AP",
                             INTERPOLATED: "all-point interpolated AP",
                             ELEVEN_POINT: "11-point interpolated AP"}
SELF_MATCH_LABELS: dict[str, str] = {REMOVE: "own image removed", KEEP: "own image kept"}
#: How a rule is computed, where its label alone does not say it.
AP_HOW: dict[str, str] = {FINITE: "mean of P@rank over positives"}
#: The public evaluators that integrate AP by each rule (``docs/metrics.md`` quotes their
#: code): the one place the sources are written, for the protocols' ``ap_definition``, the
#: ``--ap`` help and the conventions table.
AP_EVALUATORS: dict[str, str] = {
    FINITE: "trec_eval map; torchreid and fast-reid eval_market1501; VLFeat vl_pr info.ap",
    TRAPEZOID: "Oxford compute_ap.cpp (Oxford5k, Paris6k); revisitop and cirtorch "
               "compute_ap; Market-1501 compute_AP.m; Holidays eval_holidays",
    INTERPOLATED: "PASCAL VOC devkit 2010 and later (VOCap)",
    ELEVEN_POINT: "PASCAL VOC 2007 devkit; TREC 11-point average; VLFeat vl_pr ap_interp_11",
}
#: Each rule as the outputs define it: label, how, and its evaluators ("finite-sum AP, mean
#: of P@rank over positives, as in trec_eval map; ...").
AP_DEFINITIONS: dict[str, str] = {
    rule: ", ".join((AP_LABELS[rule], *filter(None, [AP_HOW.get(rule)]),
                     f"as in {AP_EVALUATORS[rule]}")) for rule in AP_RULES}


def one_of(names: tuple[str, ...]) -> str:
    """Return ``names`` as the end of a sentence: ``"finite, trapezoid or 11point"``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
