"""HPatches retrieval task lists (tasks/retr_*_split-*.csv): reading, the eval.m conventions
(own positives only, same-sequence distractors ignored, negative squared L2), a
hand-computed AP, and a message for every malformed input."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from irviewer.cli import main
from irviewer.core.errors import InputError
from irviewer.core.evaluation import evaluate
from irviewer.core.protocols import get_protocol
from irviewer.formats.hpatches_tasks import (
    iter_rank_tasks,
    read_hpatches_tasks,
    sniff_hpatches_tasks,
)
from irviewer.formats.registry import detect
from irviewer.opening.opener import open_now
from irviewer.opening.request import OpenRequest

TYPES = ("ref", *(f"{t}{i}" for t in "eht" for i in range(1, 6)))


def write_tasks(folder, queries="s,idx\nv_a,0\n", distractors="s,idx\ni_b,0\ni_b,1\nv_a,1\n",
                split="a", splits=True):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"retr_queries_split-{split}.csv").write_text(queries)
    (folder / f"retr_distractors_split-{split}.csv").write_text(distractors)
    if splits:
        (folder / "splits.json").write_text(json.dumps(
            {split: {"test": ["v_a", "i_b"], "train": ["v_c"]}}))
    return folder


def write_descriptors(folder, vectors: dict[str, list[list[float]]]):
    """A descriptors/<name>/<sequence>/<type>.csv folder; rows are patch indices."""
    for key, rows in vectors.items():
        seq, kind = key.split("/")
        (folder / seq).mkdir(parents=True, exist_ok=True)
        (folder / seq / f"{kind}.csv").write_text(
            "\n".join(",".join(str(v) for v in row) for row in rows) + "\n")
    return folder


def hand_case(tmp_path):
    """Query v_a.ref.0 at the origin (1-d descriptors). Distractors i_b.ref.0 at 1,
    i_b.ref.1 at 3, v_a.ref.1 at 0.1 (same sequence: ignored). Easy positives e1..e5 at
    0.5, 2, 4, 5, 6; hard h1..h5 at 10..14; tough t1..t5 at 0.2 each."""
    tasks = write_tasks(tmp_path / "tasks")
    values = {"ref": [[0.0], [0.1]], "e1": [[0.5]], "e2": [[2.0]], "e3": [[4.0]],
              "e4": [[5.0]], "e5": [[6.0]]}
    values.update({f"h{i}": [[9.0 + i]] for i in range(1, 6)})
    values.update({f"t{i}": [[0.2]] for i in range(1, 6)})
    desc = {f"v_a/{k}": v for k, v in values.items()}
    desc["i_b/ref"] = [[1.0], [3.0]]
    return tasks, write_descriptors(tmp_path / "descriptors" / "toy", desc)


def test_reads_queries_distractors_and_groups(tmp_path):
    tasks, _ = hand_case(tmp_path)
    ds = read_hpatches_tasks(tasks)
    assert ds.gallery[:3] == ("i_b.ref.0", "i_b.ref.1", "v_a.ref.1")
    assert ds.n_gallery == 3 + 15 and ds.n_queries == 1
    q = ds.queries[0]
    assert q.name == "v_a.ref.0"
    assert [ds.gallery[g] for g in q.group("easy")] == [f"v_a.e{i}.0" for i in range(1, 6)]
    assert [ds.gallery[g] for g in q.group("tough")] == [f"v_a.t{i}.0" for i in range(1, 6)]
    assert q.group("same_sequence").tolist() == [2]
    assert ds.protocols == ("hpatches-retrieval-easy", "hpatches-retrieval-hard",
                            "hpatches-retrieval-tough")
    assert "negative squared L2" in ds.notes[1]


def test_hand_computed_ap_per_noise_level(tmp_path):
    tasks, descriptors = hand_case(tmp_path)
    opened = open_now(OpenRequest(tasks, (descriptors,)))
    aps = {p: e.per_query["AP"][0] for p, e in opened.evaluations.items()}
    # easy: distances 0.25, 4, 16, 25, 36 (e1..e5) vs distractors 1 and 9 (v_a.ref.1 at
    # 0.01 is ignored): ranked e1, b0, e2, b1, e3, e4, e5 -> positives at 1, 3, 5, 6, 7
    easy = (1 / 1 + 2 / 3 + 3 / 5 + 4 / 6 + 5 / 7) / 5
    assert aps["hpatches-retrieval-easy"] == pytest.approx(easy)
    # hard: all five behind both distractors -> ranks 3..7
    assert aps["hpatches-retrieval-hard"] == pytest.approx(sum(i / (i + 2)
                                                               for i in range(1, 6)) / 5)
    # tough: all five at 0.04, before every distractor -> AP 1 (other levels ignored)
    assert aps["hpatches-retrieval-tough"] == pytest.approx(1.0)


def test_other_queries_positives_are_never_in_a_querys_list(tmp_path):
    tasks = write_tasks(tmp_path / "tasks", queries="s,idx\nv_a,0\ni_b,5\n",
                        distractors="s,idx\ni_b,0\n")
    desc = {f"v_a/{k}": [[0.0]] for k in TYPES}
    desc.update({f"i_b/{k}": [[7.0]] * 6 for k in TYPES})
    desc["v_a/e1"] = [[0.0]]
    d = write_descriptors(tmp_path / "d", desc)
    ds = read_hpatches_tasks(tasks)
    from irviewer.formats.descriptor_files import read_descriptors

    ranking = list(iter_rank_tasks(ds, read_descriptors(d), k=50))[-1][2]
    own = {int(g) for g in np.concatenate([ds.queries[0].group(n) for n in
                                           ("easy", "hard", "tough")])}
    listed = {int(g) for g in ranking.top_indices[0] if g >= 0}
    assert listed == own | {0} and ranking.n_ranked == 16
    ev = evaluate(ds, ranking, get_protocol("hpatches-retrieval-easy"))
    assert ev.per_query["AP"][0] == pytest.approx(1.0)


def test_sniff_and_detect(tmp_path):
    tasks = write_tasks(tmp_path / "tasks")
    assert sniff_hpatches_tasks(tasks)
    assert sniff_hpatches_tasks(tasks / "retr_queries_split-a.csv")
    assert not sniff_hpatches_tasks(tasks / "retr_distractors_split-a.csv")
    assert not sniff_hpatches_tasks(tmp_path / "missing")
    assert detect(tasks).name == "hpatches-tasks"


def test_cli_prints_the_three_noise_levels(tmp_path, capsys):
    tasks, descriptors = hand_case(tmp_path)
    assert main(["eval", str(tasks), "-d", str(descriptors)]) == 0
    out = capsys.readouterr().out
    for noise in ("easy", "hard", "tough"):
        assert f"protocol hpatches-retrieval-{noise}" in out
    assert "1 query, 3 distractors" in out


@pytest.mark.parametrize(("setup", "message"), [
    (dict(queries=""), "retr_queries_split-a.csv is empty"),
    (dict(queries="seq,index\nv_a,0\n"), "line 1: expected the header s,idx"),
    (dict(queries="s,idx\n"), "has a header but no row"),
    (dict(queries="s,idx\nv_a\n"), "line 2: expected 'sequence,index', found 1 field"),
    (dict(queries="s,idx\nv_a,x1\n"), "line 2: the patch index 'x1' must be a whole number"),
    (dict(queries="s,idx\nv a,1\n"), "line 2: 'v a' is not a sequence name"),
    (dict(queries="s,idx\nv_a,0\nv_a,0\n"), "1 row repeat earlier queries"),
    (dict(distractors="s,idx\nv_a,0\n"), "1 query patch is also distractors, e.g. v_a.ref.0"),
    (dict(queries="s,idx\nv_z,0\n"), "1 sequence is not in split a's test set"),
])
def test_malformed_lists(tmp_path, setup, message):
    tasks = write_tasks(tmp_path / "tasks", **setup)
    with pytest.raises(InputError, match=re.escape(message)):
        read_hpatches_tasks(tasks)


def test_missing_files_and_several_splits(tmp_path):
    tasks = write_tasks(tmp_path / "tasks")
    (tasks / "retr_distractors_split-a.csv").unlink()
    with pytest.raises(InputError, match=re.escape(
            "its distractor list retr_distractors_split-a.csv")):
        read_hpatches_tasks(tasks)
    two = write_tasks(tmp_path / "two")
    write_tasks(two, split="b", splits=False)
    (two / "splits.json").write_text(json.dumps({n: {"test": ["v_a", "i_b"]} for n in "ab"}))
    with pytest.raises(InputError, match=re.escape("2 splits (a, b); open one")):
        read_hpatches_tasks(two)
    assert read_hpatches_tasks(two / "retr_queries_split-b.csv").name.endswith("split b")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "splits.json").write_text("{}")
    write_tasks(tmp_path / "bad", splits=False)
    with pytest.raises(InputError, match=re.escape(
            "splits.json: has no list of test sequences")):
        read_hpatches_tasks(tmp_path / "bad")


def test_a_missing_descriptor_names_the_patch(tmp_path):
    tasks, descriptors = hand_case(tmp_path)
    (descriptors / "v_a" / "t5.csv").unlink()
    with pytest.raises(InputError, match=re.escape("1 gallery patch has no descriptor, e.g. "
                                                   "v_a.t5.0")):
        open_now(OpenRequest(tasks, (descriptors,)))


def eval_m(query, positives, negatives, neg_seq, query_seq):
    """A direct transcription of the steps of hpatches-benchmark eval.m for one query:
    labels [1 x5; -1 or 0 (same sequence)], scores -squared L2, stable descending sort,
    precision summed where recall grows, over the 5 positives."""
    scores = np.concatenate([-((positives - query) ** 2).sum(1),
                             -((negatives - query) ** 2).sum(1)])
    labels = np.concatenate([np.ones(5), np.where(neg_seq == query_seq, 0, -1)])
    order = np.argsort(-scores, kind="stable")
    labels = labels[order]
    tp, fp = np.cumsum(labels > 0), np.cumsum(labels < 0)
    precision = np.maximum(tp, 1e-10) / np.maximum(tp + fp, 1e-10)
    return precision[labels > 0].sum() / 5


@pytest.mark.parametrize("seed", range(5))
def test_equals_a_transcription_of_eval_m(tmp_path, seed):
    rng = np.random.default_rng(seed)
    seqs = ["v_a", "i_b", "v_c"]
    n = 12
    pairs = [(s, i) for s in seqs for i in range(n)]
    rng.shuffle(pairs)
    queries, distractors = pairs[:5], pairs[5:25]
    tasks = write_tasks(tmp_path / "tasks",
                        queries="s,idx\n" + "".join(f"{s},{i}\n" for s, i in queries),
                        distractors="s,idx\n" + "".join(f"{s},{i}\n" for s, i in distractors),
                        splits=False)
    rounded = {f"{s}/{t}": rng.standard_normal((n, 3)).round(6).tolist()
               for s in seqs for t in TYPES}
    d = write_descriptors(tmp_path / "d", rounded)
    opened = open_now(OpenRequest(tasks, (d,)))
    vec = {f"{s}.{t}.{i}": np.array(rounded[f"{s}/{t}"][i]) for s in seqs for t in TYPES
           for i in range(n)}
    negatives = np.array([vec[f"{s}.ref.{i}"] for s, i in distractors])
    neg_seq = np.array([s for s, _ in distractors])
    for noise, letter in (("easy", "e"), ("hard", "h"), ("tough", "t")):
        got = opened.evaluations[f"hpatches-retrieval-{noise}"].per_query["AP"]
        for q, (s, i) in enumerate(queries):
            positives = np.array([vec[f"{s}.{letter}{k}.{i}"] for k in range(1, 6)])
            expected = eval_m(vec[f"{s}.ref.{i}"], positives, negatives, neg_seq, s)
            assert got[q] == pytest.approx(expected, abs=1e-9), (noise, s, i)


def test_a_positive_tied_with_a_distractor_ranks_first_as_in_eval_m(tmp_path):
    tasks, descriptors = hand_case(tmp_path)
    (descriptors / "v_a" / "e2.csv").write_text("-1.0\n")  # distance 1, as i_b.ref.0
    opened = open_now(OpenRequest(tasks, (descriptors,)))
    # e1 (0.25), e2 (1, tied: the positive first), i_b.ref.0 (1), i_b.ref.1 (9), e3 (16),
    # e4, e5: positives at 1, 2, 5, 6, 7
    expected = (1 + 1 + 3 / 5 + 4 / 6 + 5 / 7) / 5
    ap = opened.evaluations["hpatches-retrieval-easy"].per_query["AP"][0]
    assert ap == pytest.approx(expected)
