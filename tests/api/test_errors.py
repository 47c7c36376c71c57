"""Every argument error of irviewer.evaluate is one sentence naming its argument: an
ArgumentError (a ValueError) raised by evaluate itself, never a traceback from numpy."""

from __future__ import annotations

import traceback
from dataclasses import fields

import numpy as np
import pytest

import irviewer
from irviewer.core.protocols import PROTOCOLS
from irviewer.formats.base import ReadOptions
from irviewer.opening.request import demo_paths

READER_OPTIONS = sorted(f.name for f in fields(ReadOptions) if f.name != "gallery_names")

X = np.random.default_rng(0).normal(size=(6, 3))
Y = [0, 0, 1, 1, 2, 2]
Q, G = X[:2], X[2:]
QG = {"query_labels": [0, 1], "gallery_labels": [0, 0, 1, 1]}
MANIFEST, STRONG = demo_paths()

#: (arguments, the argument blamed, the sentence)
CASES = [
    ({}, "dataset", "dataset: nothing to evaluate; give a dataset with vectors, or vectors "
     "with their labels (embeddings with labels=, or queries and gallery with query_labels= "
     "and gallery_labels=)"),
    ({"data": X}, "labels", "labels: embeddings needs its ground truth: a dataset (first), "
     "or labels (labels= for every image, or query_labels= and gallery_labels=)"),
    ({"data": X[0], "labels": [0, 0, 0]}, "embeddings", "embeddings: a 2-D matrix is needed "
     "(one row per image), got shape (3,)"),
    ({"data": X, "labels": [0, 1]}, "labels", "labels: 2 labels for 6 rows of embeddings; "
     "give one label per row"),
    ({"data": X, "labels": [0, 1, np.nan, 1, 0, 0]}, "labels", "labels: 1 label is missing "
     "(NaN or infinite), e.g. at position 2"),
    ({"data": X, "labels": [0, 1, 0.5, 1, 0, 0]}, "labels", "labels: labels must be whole "
     "numbers or strings, but position 2 holds 0.5"),
    ({"data": np.vstack([X[:5], [np.nan] * 3]), "labels": Y}, "embeddings", "embeddings: 1 "
     "query row contains NaN or infinite values, e.g. row 5 (5)"),
    ({"data": np.vstack([X[:5], [0] * 3]), "labels": Y}, "embeddings", "embeddings: 1 query "
     "row is all zero (no direction to compare), e.g. row 5 (5)"),
    ({"data": X.astype(complex), "labels": Y}, "embeddings", "embeddings: holds complex128 "
     "values; vectors must be real numbers"),
    ({"data": [[1, "a"], [2, None]], "labels": [0, 0]}, "embeddings", "embeddings: a list of "
     "Python objects is not an array of numbers; give a numpy array or a tensor"),
    ({"data": X, "labels": Y, "names": list("aabcde")}, "names", "names: 1 name appears more "
     "than once, e.g. a; give each image its own name"),
    ({"data": X, "labels": Y, "queries": Q}, "queries", "queries: give embeddings (every "
     "image's vectors) or queries and gallery, not both"),
    ({"data": X, "embeddings": X, "labels": Y}, "embeddings", "embeddings: given twice, by "
     "position and by name; give it once"),
    ({"queries": Q, **QG}, "gallery", "gallery: queries and gallery go together; give "
     "gallery= too (or every image's vectors as embeddings=)"),
    ({"data": Q, "more": G[:, :2], **QG}, "gallery", "gallery: 2-d vectors, but the queries "
     "are 3-d; give both from one model"),
    ({"data": Q, "more": G, "query_labels": [0, 1]}, "gallery_labels", "gallery_labels: "
     "query_labels and gallery_labels go together (or labels= alone for a leave-one-out "
     "set)"),
    ({"data": Q, "more": G, **QG, "query_cams": [1, 2]}, "gallery_cams", "gallery_cams: "
     "query_cams and gallery_cams go together (a re-identification set: same person on "
     "another camera is positive)"),
    ({"data": Q, "more": G, "query_labels": ["a", "b"], "gallery_labels": ["a"] * 4,
      "query_cams": [1, 2], "gallery_cams": [1, 2, 1, 2]}, "query_labels", "query_labels: "
     "with cameras the labels are person ids, whole numbers (-1 for junk, as Market-1501), "
     "not 'a'"),
    ({"scores": X, "distances": X, "labels": Y}, "distances", "distances: give scores "
     "(higher first) or distances (lower first), not both"),
    ({"scores": np.eye(5), "labels": Y}, "scores", "scores: a matrix of shape (5, 5), but "
     "there are 6 queries and 6 gallery images; give one row per query and one column per "
     "gallery image"),
    ({"scores": np.where(np.eye(6) > 0, np.nan, 1.0), "labels": Y}, "scores", "scores: the "
     "score of query 0 and gallery image 0 is nan; every score must be a finite number"),
    ({"scores": np.eye(6), "labels": Y, "rerank": "aqe"}, "rerank", "rerank: works on "
     "vectors, and a score matrix has none; give the vectors (embeddings=, or queries= and "
     "gallery=) instead"),
    ({"data": "/nonexistent/x.csv", "embeddings": X}, "dataset", "dataset: "
     "/nonexistent/x.csv: no such file or folder"),
    ({"data": MANIFEST, "embeddings": X, "labels": Y}, "labels", "labels: the dataset gives "
     "the ground truth; give labels without a dataset, or a dataset without labels"),
    ({"data": MANIFEST, "embeddings": X}, "embeddings", "embeddings has 6 rows but the "
     "dataset has 154 gallery images (176 with the 22 queries that are not gallery "
     "images); rows without names must follow the dataset's gallery order, then the 22 "
     "queries that are not gallery images (or be named one per line by names=)"),
    ({"data": MANIFEST, "queries": Q, "gallery": G}, "queries", "queries: embeddings has 2 "
     "query vectors without names but the dataset has 22 queries; give query_names="),
    ({"descriptors": STRONG}, "descriptors", "descriptors: a file's rows are named after a "
     "dataset's images; give the dataset too (its path first)"),
    ({"data": X, "labels": Y, "protocol": "oxfrod"}, "protocol", "protocol: 'oxfrod' is not "
     f"one irviewer knows; give one of {', '.join(PROTOCOLS)}"),
    ({"data": X, "labels": Y, "ap": "trapz"}, "ap", "ap: 'trapz' is not one irviewer knows; "
     "give one of finite, trapezoid, interpolated, 11point"),
    ({"data": X, "labels": Y, "depth": 0}, "depth", "depth: 0 results per query; give a "
     "whole number, at least 1"),
    ({"data": X, "labels": Y, "rerank": "aqe:k=2"}, "rerank", "rerank: aqe has no parameter "
     "'k'; its parameters are n, alpha"),
    ({"data": X, "labels": Y, "corrections": "/nonexistent.csv"}, "corrections",
     "corrections: /nonexistent.csv: no such file"),
    ({"data": X, "labels": Y, "conventions": "yes"}, "conventions", "conventions: give True "
     "or False, not 'yes'"),
    ({"data": X, "labels": Y, "format": "manifest"}, "format", "format: says how to read a "
     "dataset's files; give it with a dataset's path (the data given needs no reader)"),
    ({"data": MANIFEST, "descriptors": STRONG, "read_options": {"imagez": 1}}, "read_options",
     "read_options: no reader option is called 'imagez'; the options are "
     f"{', '.join(READER_OPTIONS)}"),
]


@pytest.mark.parametrize(("arguments", "argument", "sentence"), CASES,
                         ids=[c[2].split(":")[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_each_bad_argument_is_one_sentence_naming_it(arguments, argument, sentence):
    arguments = dict(arguments)
    positional = [arguments.pop(k) for k in ("data", "more") if k in arguments]
    with pytest.raises(irviewer.ArgumentError) as caught:
        irviewer.evaluate(*positional, **arguments)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.argument, str(error)) == (argument, sentence)
    assert "\n" not in str(error)
    frames = traceback.extract_tb(error.__traceback__)
    assert frames[-1].filename.endswith("irviewer/api/evaluating.py")  # raised by evaluate
    assert len(frames) == 2  # the caller's, then evaluate's: no numpy, no irviewer depth
    assert error.__suppress_context__


def test_an_ann_spec_that_faiss_cannot_build_names_ann():
    pytest.importorskip("faiss")
    with pytest.raises(irviewer.ArgumentError) as caught:
        irviewer.evaluate(X, labels=Y, ann="IVF,,")
    assert caught.value.argument == "ann"
    assert str(caught.value).startswith("ann: IVF,,: FAISS cannot build this index factory "
                                        "string")
