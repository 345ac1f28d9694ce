"""`vigil desktop-entry`: put Vigil in the user's application menu, following the freedesktop conventions — a
Desktop Entry file in $XDG_DATA_HOME/applications and the icon in the hicolor theme of $XDG_DATA_HOME/icons
(XDG_DATA_HOME defaults to ~/.local/share). Nothing outside that folder is touched, no root needed."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from engine.assets import asset
from engine.errors import ErrorCode, VigilError

APP_ID = "vigil"  # the file's name and the icon's: desktops match the window's class "vigil" to vigil.desktop


def add_desktop_entry_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("desktop-entry", help="add Vigil to your application menu (a .desktop file and the icon "
                                             "under $XDG_DATA_HOME, default ~/.local/share)")
    what = d.add_mutually_exclusive_group()
    what.add_argument("--print", action="store_true", dest="print_only",
                      help="print the entry and where it would go; write nothing")
    what.add_argument("--remove", action="store_true", help="remove the entry and the icon")


def data_home() -> Path:
    """$XDG_DATA_HOME when it is an absolute path (the spec says to ignore a relative one), else ~/.local/share."""
    env = os.environ.get("XDG_DATA_HOME", "")
    return Path(env) if os.path.isabs(env) else Path.home() / ".local" / "share"


def vigil_command() -> str:
    """The installed `vigil` this process belongs to: the script beside this interpreter (a venv's or pipx's bin/,
    which is not always on the menu's PATH), else the one on PATH."""
    beside = Path(sys.executable).parent / APP_ID  # not resolved: a venv's python is a link to the system's
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which(APP_ID)
    if found:
        return str(Path(found).absolute())
    raise VigilError("No installed `vigil` command found beside this Python or on PATH, so the menu entry would "
                     "have nothing to start. Install Vigil (`pipx install .` or `pip install .`) and run "
                     "`vigil desktop-entry` with that vigil.", code=ErrorCode.ERROR)


def exec_quote(arg: str) -> str:
    """One argument of an Exec key: plain when it has no reserved character, else double-quoted with `"`, `` ` ``,
    `$` and `\\` escaped (Desktop Entry spec, "The Exec key"); a literal % is always doubled."""
    arg = arg.replace("%", "%%")
    if not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def entry_text(command: str) -> str:
    # desktop files escape a backslash as \\ in every string value, so the quoted Exec doubles it once more
    exec_line = " ".join(exec_quote(a) for a in (command, "gui")).replace("\\", "\\\\")
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",  # the newest version desktop-file-validate 0.26 (Debian 12) knows
        "Name=Vigil",
        "GenericName=Browser agent supervisor",
        "Comment=Run a browser agent one approved step at a time and see what it sees",
        f"Exec={exec_line}",
        f"TryExec={command.replace(chr(92), chr(92) * 2)}",
        f"Icon={APP_ID}",
        "Terminal=false",
        "Categories=Development;",
        "Keywords=browser;agent;automation;supervisor;chromium;",
        f"StartupWMClass={APP_ID}",
        "",
    ])


def targets(home: Path) -> tuple[Path, Path]:
    """Where the entry and the (scalable) icon go under a data home."""
    return (home / "applications" / f"{APP_ID}.desktop",
            home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg")


def desktop_entry_command(args: argparse.Namespace) -> int:
    entry, icon = targets(data_home())
    if args.remove:
        for path in (entry, icon):
            path.unlink(missing_ok=True)
        print(f"removed {entry} and {icon}")
        return 0
    text = entry_text(vigil_command())
    if args.print_only:
        print(f"# {entry}\n{text}# icon: {icon}")
        return 0
    entry.parent.mkdir(parents=True, exist_ok=True)
    icon.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(asset("icons", f"{APP_ID}.svg"), icon)
    tmp = entry.with_suffix(".desktop.tmp")  # a menu watching the folder never reads half a file
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(entry)
    print(f"installed {entry} and {icon}; Vigil is in your application menu (Development)")
    return 0
