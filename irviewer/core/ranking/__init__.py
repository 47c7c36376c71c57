"""Ranking: cosine similarity by one matrix multiply, top-K, and exact ranks of chosen items.

For every query the gallery is ranked by descending cosine similarity of L2-normalised
float32 descriptors. Equal scores keep gallery order (a stable ranking), and scores equal in
exact arithmetic are equal: float32 scores nearer than their rounding can order are
ordered by their exact cosine (:mod:`irviewer.core.ranking.settle`), so a ranking is fully
determined by the descriptors and the gallery order, on every machine and with any number
of threads.

What is stored (:class:`Ranking`) is what the metrics and the viewer need, not the whole
sorted gallery:

* the top-K gallery indices and scores of every query;
* the exact 0-based rank and the score of every *item of interest* of every query: each
  gallery image named in one of the query's relevance groups, plus the query's own image.
  Ranks are counted without sorting the row: rank = #(scores above) + #(equal scores earlier
  in the gallery).

Each block of scores is cut at a per-query threshold low enough to keep every score that can
matter (the top-K, and every score at or above the lowest item of interest), and only those
*candidates* are sorted, once, by (query, descending score, gallery index); the top-K lists
are read off the front and each item's rank is its position among them. The top-K part of
the threshold comes from a sample of the row (a cheap partial selection) and is checked
against the candidate count, falling back to an exact selection for a row where the sample
misled. On Market-1501-sized blocks the candidates are a few per cent of the scores. When
most scores would be candidates (the revisited sets' junk and hard images rank deep), the
float32 rows are sorted whole instead, the scores below the row's lowest item first set to
-inf (they count for no item), and each item's count is a binary search in its row. The work
after each multiply is split by rows between threads (:mod:`irviewer.core.parallel`).

Memory stays bounded: queries are processed in blocks and the gallery in chunks, so a
memory-mapped 1,000,000 x 2048 float16 gallery is read chunk by chunk and never loaded whole.
When the gallery fits in one chunk, ranks are counted from the very score values the top-K is
taken from. When it spans several chunks, a cheap pre-pass estimates each item's score, every
chunk counts the scores clearly above the estimate, and the few scores within a narrow band
around it are kept and resolved exactly at the end; if an item's exact score ever falls
outside its band the query is re-counted from a full score row.

Gallery images the dataset removes for every query (``Dataset.global_ignored``) are taken out
before ranking: they never appear in a top-K list and never count in a rank (rank -1).
"""

from irviewer.core.ranking.cut import common_depth, cut_at
from irviewer.core.ranking.from_lists import ranking_from_lists
from irviewer.core.ranking.ranker import iter_rank, iter_rank_rows, rank
from irviewer.core.ranking.row_counts import ranks_in_row
from irviewer.core.ranking.stored import (
    DEFAULT_DEPTH,
    DEPTH,
    Progress,
    Ranking,
    items_of_interest,
    top_of_row,
)

__all__ = ["DEFAULT_DEPTH", "DEPTH", "Progress", "Ranking", "common_depth", "cut_at",
           "items_of_interest", "iter_rank", "iter_rank_rows", "rank", "ranking_from_lists",
           "ranks_in_row", "top_of_row"]
