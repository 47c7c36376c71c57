"""Label corrections in the window: the undo stack and sidecar (:mod:`.store`), the tile
menus, keys, dock and published / corrected switch (:mod:`.controller`)."""
