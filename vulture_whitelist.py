"""What vulture (dead code, in the README's test command and .ci/run) is told is meant.

vulture reads the package alone (``[tool.vulture]`` in pyproject.toml), so code that only the
tests call counts as dead: such code is removed, not listed here. Listed is what is called
from outside the package's own code by design, each under the reason it is meant. vulture
matches by name: a name listed here is used wherever it appears. This file is never
imported or run (``_`` stands for any object).
"""

# ruff: noqa
# mypy: ignore-errors

# -- Qt calls these: overrides of its virtual methods and fields it reads --------------------
_.dragEnterEvent  # gui/main_window.py, gui/presentation/slide.py
_.dropEvent  # gui/main_window.py, gui/presentation/slide.py
_.eventFilter  # gui/presentation/kiosk.py
_.filterAcceptsRow  # gui/results/query_model.py
_.wheelEvent  # gui/results/side_by_side.py
_.contextMenuEvent  # gui/results/side_by_side.py, gui/widgets/tiles.py
_.mousePressEvent  # gui/widgets/tiles.py
_.sizeHint  # gui/sweep_painter.py, gui/widgets/query_image.py, gui/widgets/tiles.py
_.hasHeightForWidth  # gui/widgets/tiles.py
_.textElideMode  # gui/review/panel.py: the QStyleOptionViewItem the delegate paints

# -- the standard library calls these --------------------------------------------------------
_.find_class  # formats/safe_pickle.py: pickle.Unpickler's hook, the allow-list
_.persistent_load  # formats/safe_pickle.py: pickle.Unpickler's hook, refused
_.external_attr  # formats/descriptor_files.py: zipfile.ZipInfo's field, the file's mode

_.send_event  # gui/presentation/desktops.py: an X11 ClientMessage's field, read by the server
_.message_type  # gui/presentation/desktops.py: likewise

_.lists_pending  # core/ranking/stored.py: read by the lists' descriptor through __dict__

# -- entry points and the documented Python API ----------------------------------------------
_.__getattr__  # __init__.py: the module's own, loading the API on first use (PEP 562)
_.__dir__  # __init__.py: likewise, dir(irviewer) listing the API
_.__class__  # __init__.py: the module's class, keeping irviewer.view the API's function
_.writeable  # api/arrays.py: numpy's flag, the caller's arrays read through read-only views
_.weak  # api/demo.py: Demo's, the demo's weak descriptor file (docs/api.md)
_.mAP  # api/result.py: Scored's, docs/api.md
_.write_json  # api/result.py: Result's, docs/api.md
_.copied_to_host  # api/result.py: Result's, docs/api.md
_._repr_pretty_  # api/result.py: IPython's display hook, the table a notebook shows
demo_extractor  # extract/vlad.py: the irviewer.extractors entry point demo-vlad
open_demo_searcher  # collection/photo_search.py: docs/search.md, "In Python"
read_corrections  # formats/corrections_file.py: the corrections file's reader (one read_*
#                   per format); the package loads the file through load_corrections

# -- fields of records written to files or handed to a caller --------------------------------
irviewer_version  # formats/collection.py: collection.json's, written by asdict
layout_version  # formats/collection.py: collection.json's, written by asdict
standard_error  # core/chance.py: ChanceLevel's, the spread at_chance is decided by
df  # core/paired.py: TTest's degrees of freedom
precision_at_p90  # core/copy_detection.py: MicroResult's, isc2021's Metrics field
tp_ranks  # core/copy_detection.py: MicroResult's, each ground-truth pair's rank
outside_queries  # core/ranking/listed.py: PredictedPairs', the names of queries a predictions file names and the ground truth does not

# -- the window's user actions as methods: tests and docs/*_screenshots.py act through them,
#    not through a panel's child widgets -----------------------------------------------------
_.set_strictness  # gui/photo_search/controller.py: the strictness box, answered again
_.set_method  # gui/rerank/dialog.py: the method box
_.set_spec  # gui/rerank/dialog.py: the SPEC typed
_.current_query  # gui/results/query_list.py: the query list's current row
_.show_tab  # gui/scores/controller.py: the Scores tab brought to the front

# -- only tests call these, in modules other engineers are changing now: to be removed there,
#    then from here ------------------------------------------------------------------------
_.swept  # core/ann/spec.py (the approximate-search specs' validation)
error_probability  # core/audit/sets.py (the label audit)
_.look_for_others  # gui/corrections/store.py (the corrections file's writers): what the
#                   watch timer does, called by tests only
_.hovered  # gui/widgets/tiles.py (set for the corrections' keys, read nowhere)
