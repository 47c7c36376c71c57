"""The note of a search beam narrower than the depth: one rule, for FAISS's efSearch and
Milvus's ef."""

from __future__ import annotations

from irviewer.core.ann.results import narrow_beam_note
from irviewer.core.errors import window_text


def test_a_beam_below_the_depth_is_said_in_one_sentence():
    note = narrow_beam_note(16, 200, "efSearch", "FAISS")
    assert note == (
        "HNSW's efSearch (16) is below the depth (200): FAISS returns 200 results per query "
        "from a search beam 16 wide, so those past the first 16 are poor and recall@100, AP "
        "and ΔAP count them (recall@10 is what a top-10 search gives); to compare with tools "
        "that raise the beam to the depth, sweep efSearch from 200 up (efSearch=200,400) or "
        "lower --depth")
    assert window_text(note.for_window()).endswith("or lower the depth")


def test_no_note_without_a_narrow_beam():
    assert narrow_beam_note(None, 200, "efSearch", "FAISS") is None
    assert narrow_beam_note(200, 200, "efSearch", "FAISS") is None
    assert narrow_beam_note(400, 200, "ef", "Milvus") is None
    assert narrow_beam_note(64, 100, "ef", "Milvus Lite").startswith(
        "HNSW's ef (64) is below the depth (100): Milvus Lite returns 100 results")
