"""Review suspects: the label audit in the background and its queue in a dock
(:mod:`.controller` and :mod:`.panel`)."""
