"""Infrastructure: how irviewer writes files (atomically), where the user's files go when a
dataset's folder cannot be written, and where the package's resources are. No benchmark rule
lives here; the numpy core below imports none of it, and its failures are the core's
:class:`~irviewer.core.errors.InputError` sentences."""
