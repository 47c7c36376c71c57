"""The Qt-free core: datasets, descriptors, ranking, metrics, protocols, evaluation (numpy only)."""
