"""The plots on the right: the selected query's precision-recall curve over the mean, and
the dataset overview (AP histogram, P@k, CMC)."""
