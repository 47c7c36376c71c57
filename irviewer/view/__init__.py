"""View models: what the window shows, computed from the core without any widget (Qt-free).

The inspector, presentation mode, figure export and the comparison strips paint these; tests
check them headless against the core.
"""
