"""The inspector: the method bar and its summary, the query list (a Qt model over the
evaluation's per-query arrays), the ranked results of the selected query, and the query and a
match side by side."""
