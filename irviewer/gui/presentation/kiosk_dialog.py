"""View ▸ Kiosk mode…: the folder the kiosk watches for visitors' photos and the idle time
after which it goes back to the slideshow, kept in the user's settings; it names the
staff's key chord before the kiosk starts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from irviewer.gui.presentation.kiosk import DEFAULT_IDLE_S, IDLE_RANGE_S, STAFF_CHORD


def kiosk_settings(settings: QSettings) -> tuple[int, Path | None]:
    """Return (idle seconds, watched folder or None) from the user's settings (the default
    idle time when unset or out of range)."""
    try:
        idle = int(str(settings.value("kiosk/idle_s", DEFAULT_IDLE_S)))
    except (TypeError, ValueError):
        idle = DEFAULT_IDLE_S
    if not IDLE_RANGE_S[0] <= idle <= IDLE_RANGE_S[1]:
        idle = DEFAULT_IDLE_S
    folder = str(settings.value("kiosk/folder", "") or "")
    return idle, (Path(folder) if folder else None)


class KioskDialog(QDialog):
    """Asks for the watched folder (optional) and the idle time; saves both on Start."""

    def __init__(self, parent: QWidget, settings: QSettings) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("Kiosk mode")
        idle, folder = kiosk_settings(settings)
        self.folder_edit = QLineEdit(str(folder) if folder else "")
        self.folder_edit.setPlaceholderText("none: photos are dropped on the screen")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder_edit, 1)
        row.addWidget(browse)
        self.idle_box = QSpinBox()
        self.idle_box.setRange(*IDLE_RANGE_S)
        self.idle_box.setSuffix(" s")
        self.idle_box.setValue(idle)
        form = QFormLayout(self)
        form.addRow("Visitors' photos arrive in", row)
        form.addRow("Back to the slideshow after", self.idle_box)
        note = QLabel(f"Full screen, for visitors: Esc, Alt+F4 and the menus do nothing. "
                      f"Staff leave with <b>{STAFF_CHORD.toString()}</b>.")
        note.setWordWrap(True)
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton("Start the kiosk", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "The folder visitors' photos arrive in")
        if chosen:
            self.folder_edit.setText(chosen)

    def folder(self) -> Path | None:
        """Return the watched folder written (None: none)."""
        text = self.folder_edit.text().strip()
        return Path(text).expanduser() if text else None

    def idle_s(self) -> int:
        """Return the idle time in seconds."""
        return self.idle_box.value()

    def accept(self) -> None:
        """Keep the choices in the user's settings and close."""
        folder = self.folder()
        self.settings.setValue("kiosk/folder", str(folder) if folder else "")
        self.settings.setValue("kiosk/idle_s", self.idle_s())
        super().accept()
