"""Compare mode: a second method's AP and ΔAP in the query table, a scatter of AP against
AP, the paired statistics, and both ranked lists side by side (:mod:`.controller`)."""
