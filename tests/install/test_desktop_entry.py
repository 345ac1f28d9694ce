"""The Desktop Entry Vigil writes for an install whose path needs quoting (spaces, $, a backslash, a quote, %):
the Exec key quoted and escaped as the freedesktop spec says, checked by Debian's desktop-file-validate (`make
setup` installs it). (An ordinary install is written, validated and removed by test_wheel.py, through the
installed vigil.)"""

from __future__ import annotations

import subprocess

from engine.cli.desktop_entry import entry_text, exec_quote

from support.tools import need


def test_exec_quotes_only_what_needs_it_and_escapes_twice(tmp_path):
    assert exec_quote("/home/ada/.local/bin/vigil") == "/home/ada/.local/bin/vigil"
    assert exec_quote("/opt/my tools/vigil") == '"/opt/my tools/vigil"'
    assert exec_quote('/a b/$x"y`z\\w/50%/vigil') == '"/a b/\\$x\\"y\\`z\\\\w/50%%/vigil"'
    text = entry_text('/a b/$x\\w/50%/vigil')
    # the quoting's backslashes are doubled once more by the string escape rule, which is read first
    assert 'Exec="/a b/\\\\$x\\\\\\\\w/50%%/vigil" gui\n' in text
    assert "TryExec=/a b/$x\\\\w/50%/vigil\n" in text
    need("desktop-file-validate", "desktop-file-utils")
    path = tmp_path / "vigil.desktop"
    path.write_text(text, encoding="utf-8")
    checked = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr


def test_the_windows_carry_vigils_icon_and_the_menu_entrys_name(qapp):
    """What `vigil desktop-entry` installs is what the running application says it is: its windows' icon is Vigil's
    (drawn, not empty) and its desktop file name is the entry's, so a shell groups the windows under the entry."""
    from gui.app.qt_loop import _identify

    before = qapp.windowIcon(), qapp.desktopFileName()
    try:
        _identify(qapp)
        assert qapp.desktopFileName() == "vigil"
        pixmap = qapp.windowIcon().pixmap(64, 64)
        assert not pixmap.isNull()
        img = pixmap.toImage()
        assert len({img.pixelColor(x, y).name() for x in range(0, 64, 8) for y in range(0, 64, 8)}) > 2
    finally:
        qapp.setWindowIcon(before[0])
        qapp.setDesktopFileName(before[1])
