"""The non-modal settings dialog (modal exec() breaks qasync): model base URL, model, API key — never
shown back beyond its last four characters —, backend URL, headless."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QWidget

from gui.kit.window_fit import close_keys

if TYPE_CHECKING:
    from gui.supervisor.controller import Supervisor


class SettingsDialog(QDialog):
    """Non-modal settings (modal exec() breaks qasync). The API key is never shown back in full."""

    def __init__(self, sup: Supervisor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vigil settings")
        self.sup = sup
        s = sup.settings
        form = QFormLayout(self)
        self.base_url = QLineEdit(s.get("base_url", ""))
        self.model = QLineEdit(s.get("model", ""))
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.refresh()
        self.backend_url = QLineEdit(s.get("backend_url", ""))
        self.headless = QCheckBox("Run Chromium headless (the page is shown here either way)")
        self.headless.setChecked(sup.headless)
        form.addRow("Model base URL", self.base_url)
        form.addRow("Model name", self.model)
        form.addRow("API key", self.api_key)
        form.addRow("Backend URL", self.backend_url)
        form.addRow(self.headless)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.close)
        form.addRow(buttons)
        self.close_shortcuts = close_keys(self)  # Escape and Ctrl+W, with or without a window manager

    def refresh(self) -> None:
        """Show the current settings; of the API key only whether it is set and its last four characters."""
        key = self.sup.settings.get("api_key", "")
        self.api_key.clear()
        self.api_key.setPlaceholderText(f"set (…{key[-4:]})" if key else "not set (VIGIL_API_KEY / OPENAI_API_KEY)")

    def _save(self) -> None:
        s = self.sup.settings
        s["base_url"], s["model"], s["backend_url"] = (self.base_url.text().strip(), self.model.text().strip(),
                                                       self.backend_url.text().strip())
        if self.api_key.text():
            s["api_key"] = self.api_key.text()
            self.api_key.clear()
        self.sup.headless = self.headless.isChecked()
        self.close()
