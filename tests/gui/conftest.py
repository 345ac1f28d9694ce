"""The window's tests: Qt's offscreen platform with three virtual screens is chosen here, once, before any test
makes the QApplication; `aio` and `aio_module` (the qasync loop inside Qt's) are fixtures for every test here."""

