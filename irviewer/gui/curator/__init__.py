"""For curators: presentation mode (:mod:`.presentation`, its slide :mod:`.slide`) and
search with a visitors photo (:mod:`.photo_search`)."""
