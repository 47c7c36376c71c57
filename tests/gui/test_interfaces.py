"""A feature's controller talks to the rest of the window through Protocols and to panels
through their methods and signals (docs/architecture.md): it never reaches into a panel's
child widgets."""

from __future__ import annotations

import ast
import inspect

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from irviewer.gui.main_window import MainWindow
from irviewer.opening.request import demo_request


def parts(widget: QObject) -> set[str]:
    """Return the names of ``widget``'s own parts: its attributes that are Qt objects."""
    return {name for name, value in vars(widget).items() if isinstance(value, QObject)}


def reaches(source: str, held: dict[str, set[str]]) -> set[str]:
    """Return every ``self.<panel>.<part>`` in ``source`` where ``<part>`` is one of the
    parts ``held[<panel>]`` of a panel the controller holds as ``self.<panel>``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "self"
                and node.attr in held.get(node.value.attr, set())):
            found.add(f"self.{node.value.attr}.{node.attr}")
    return found


def controllers(window: MainWindow) -> list[QObject]:
    """Return the window's feature controllers (the faces its features' packages name)."""
    return [value for value in vars(window).values() if isinstance(value, QObject)
            and type(value).__module__.startswith("irviewer.gui.")
            and type(value).__module__.endswith(".controller")]


def test_no_controller_uses_a_child_widget_of_a_panel(qtbot):
    window = MainWindow(top_k=10, keep_sessions=False)
    qtbot.addWidget(window)
    window.open_request(demo_request(), sync=True)
    window.collections.new_collection().close()  # its dialog is made when asked for
    found = {}
    faces = controllers(window)
    assert len(faces) >= 10, [type(c).__name__ for c in faces]
    for controller in faces:
        held = {name: parts(value) for name, value in vars(controller).items()
                if isinstance(value, QWidget)}
        module = inspect.getmodule(type(controller))
        if wrong := reaches(inspect.getsource(module), held):
            found[type(controller).__name__] = sorted(wrong)
    assert found == {}


def test_the_check_finds_a_controller_reaching_into_a_panel():
    source = ("class C:\n    def f(self):\n        self.bar.picker.clear()\n"
              "        self.bar.show_photo()\n        self.other.picker\n")
    assert reaches(source, {"bar": {"picker", "label"}}) == {"self.bar.picker"}
