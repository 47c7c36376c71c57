"""The inspector's panels: each owns its widgets, takes view models and emits signals; the
main window wires them and nothing reaches into another panel's widgets."""
