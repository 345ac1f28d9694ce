"""The window's tests: Qt's offscreen platform with three virtual screens is chosen here, once, before any test
makes the QApplication; `aio` and `aio_module` (the qasync loop inside Qt's) are fixtures for every test here."""

from support.gui_helpers import aio, aio_module  # noqa: F401  (the platform is set on import; the fixtures)
