"""Vigil as people install it: the wheel, built from the checkout, installed into a fresh virtualenv outside it
(what `pip install .` and `pipx install .` do), and `vigil` run from another folder.

One wheel build and one venv for the module. The venv gets the wheel with --no-deps and borrows the checkout venv's
third-party libraries through a .pth line naming its site-packages: a plain path line does not run that folder's own
.pth files, so the checkout's editable install (its import finder) stays out and `engine` can only come from the
wheel — which the first test checks before the others rely on it."""

from __future__ import annotations

import configparser
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from support.ocr import read_text
from support.paths import ROOT
from support.tools import need

SOURCES = ("engine", "gui", "assets", "pyproject.toml", "README.md")


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _shipped(src: Path) -> set[str]:
    """What the wheel must hold: every module and page script of engine/ and gui/, and every file under assets/
    (as vigil_assets/) — so a new package folder missing from pyproject's list, or a new asset, fails here."""
    names = {p.relative_to(src).as_posix() for top in ("engine", "gui") for p in (src / top).rglob("*")
             if p.suffix in (".py", ".js") and "__pycache__" not in p.parts}
    names |= {"vigil_assets/" + p.relative_to(src / "assets").as_posix() for p in (src / "assets").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    return names


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, env, wheel's names, elsewhere): Vigil's wheel installed in a fresh venv, an env to run it in and a
    folder outside the checkout to run it from — built once for the whole session: the first worker to get here
    builds it under a lock in the folder the workers share, the other waits and uses it (pytest-xdist 3.8's
    xdist_group does not keep a module on one worker under pytest 9: each worker built its own, 9 s each)."""
    shared = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else \
        tmp_path_factory.getbasetemp()
    base = shared / "wheel"
    with open(shared / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (base / "ready.json").exists():
                _build(base)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    got = json.loads((base / "ready.json").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{base / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    yield base / "venv", env, set(got["names"]), elsewhere, set(got["shipped"])


def _build(base: Path) -> None:
    """Build the wheel from a copy of the checkout, install it in a fresh venv under `base`, and say so in
    base/ready.json (the wheel's names and what the sources ship)."""
    if base.exists():
        shutil.rmtree(base)  # (a build that failed half-way)
    base.mkdir(parents=True)
    src = base / "src"  # a copy, so the build leaves no build/ or egg-info in the checkout others work in
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    dist = base / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)], base,
                 dict(os.environ), timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next(dist.glob("vigil-*.whl"))
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    py = venv / "bin" / "python"
    got = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)], base,
               dict(os.environ), timeout=300)
    assert got.returncode == 0, got.stderr
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base,
                     dict(os.environ)).stdout.strip())
    (site / "vigil_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    with zipfile.ZipFile(wheel) as z:
        names = sorted(z.namelist())
    (base / "ready.json").write_text(json.dumps({"names": names, "shipped": sorted(_shipped(src))}))


def test_the_wheel_holds_every_runtime_file_and_the_venv_imports_only_it(installed):
    venv, env, names, elsewhere, shipped = installed
    assert not shipped - names, f"missing from the wheel (pyproject.toml packages / package-data): " \
                                f"{sorted(shipped - names)[:20]}"
    where = _run([str(venv / "bin" / "python"), "-c",
                  "import engine, gui, vigil_assets; from engine.assets import asset; "
                  "print(engine.__file__, gui.__file__, asset('demo', 'index.html'), sep='\\n')"], elsewhere, env)
    assert where.returncode == 0, where.stderr
    site = str(venv / "lib")
    for path in where.stdout.split():
        assert path.startswith(site), f"{path} is not the installed wheel's (the checkout leaked in)"
    assert Path(where.stdout.split()[2]).is_file()


def test_run_demo_from_another_folder_snapshots_the_demo_shop(installed):
    venv, env, _, elsewhere, _ = installed
    out = _run([str(venv / "bin" / "vigil"), "run-demo", "--format", "tree"], elsewhere, env)
    assert out.returncode == 0, out.stderr
    assert "Error response" not in out.stdout
    assert "Create account" in out.stdout and "Gift wrap" in out.stdout, out.stdout[:2000]
    interactive = int(out.stderr.split(" interactive")[0].rsplit(" ", 1)[-1])
    assert interactive >= 10, out.stderr


def test_the_window_opens_the_demo_from_another_folder(installed):
    venv, env, _, elsewhere, _ = installed
    shot = elsewhere / "window.png"
    out = _run([str(venv / "bin" / "vigil"), "gui", "--demo", "--screenshot", str(shot)], elsewhere,
               {**env, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    with Image.open(shot) as im:
        assert im.width >= 600 and im.height >= 400
        top = io.BytesIO()
        im.crop((0, 0, im.width * 2 // 3, im.height // 4)).save(top, "PNG")  # the page's head: quick to read
    words = read_text(top.getvalue())
    assert "Vigil Demo Shop" in words and "Create your account" in words, words  # the shop, not a 404 page


def _check_entry(path: Path, vigil: Path) -> None:
    """The keys a menu needs, read as a desktop file reads (no interpolation, case kept); and Debian's
    desktop-file-validate on top (desktop-file-utils; `make setup` installs it)."""
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    cp.read(path, encoding="utf-8")
    e = cp["Desktop Entry"]
    assert (e["Type"], e["Name"], e["Icon"], e["Terminal"]) == ("Application", "Vigil", "vigil", "false")
    assert e["Exec"] == f"{vigil} gui" and e["TryExec"] == str(vigil)
    assert e["Categories"].endswith(";")
    need("desktop-file-validate", "desktop-file-utils")
    checked = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr


def test_desktop_entry_installs_for_the_user_and_points_at_this_vigil(installed):
    venv, env, _, elsewhere, _ = installed
    vigil = venv / "bin" / "vigil"
    home = elsewhere / "xdg"
    env = {**env, "XDG_DATA_HOME": str(home)}
    entry, icon = home / "applications" / "vigil.desktop", home / "icons/hicolor/scalable/apps/vigil.svg"

    shown = _run([str(vigil), "desktop-entry", "--print"], elsewhere, env)
    assert shown.returncode == 0 and f"Exec={vigil} gui" in shown.stdout and str(entry) in shown.stdout
    assert not home.exists()  # --print writes nothing

    made = _run([str(vigil), "desktop-entry"], elsewhere, env)
    assert made.returncode == 0, made.stderr
    _check_entry(entry, vigil)
    assert icon.read_bytes() == (ROOT / "assets" / "icons" / "vigil.svg").read_bytes()

    gone = _run([str(vigil), "desktop-entry", "--remove"], elsewhere, env)
    assert gone.returncode == 0 and not entry.exists() and not icon.exists()


def test_no_chromium_says_how_to_get_one(installed):
    venv, env, _, elsewhere, _ = installed
    out = _run([str(venv / "bin" / "vigil"), "run-demo"], elsewhere, {**env, "VIGIL_CHROMIUM": str(elsewhere / "no")})
    assert out.returncode != 0
    for way in ("apt-get install chromium", f"{venv / 'bin' / 'python'} -m playwright install chromium",
                "VIGIL_CHROMIUM"):
        assert way in out.stderr, out.stderr
