"""Reading the words in a picture with Tesseract (Debian's `tesseract-ocr`, installed by
scripts/setup.sh), to prove that no secret is readable in what Vigil stores, exports or sends — and,
in the same pictures, that ordinary page words ARE readable, so a blank picture cannot pass."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from PIL import Image


def tesseract() -> str:
    exe = shutil.which("tesseract")
    if not exe:
        pytest.fail("The OCR checks need Tesseract: the Debian package 'tesseract-ocr' is not installed. "
                    "Run `bash scripts/setup.sh` (it installs it) or `apt-get install tesseract-ocr`.")
    return exe


def read_text(picture: bytes) -> str:
    """The words Tesseract reads in `picture` (any format Pillow opens), upscaled 2x for small text."""
    img = Image.open(io.BytesIO(picture)).convert("RGB")
    img = img.resize((img.width * 2, img.height * 2), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    r = subprocess.run([tesseract(), "stdin", "stdout", "--psm", "3"], input=buf.getvalue(), capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout.decode("utf-8", errors="replace")


def squashed(text: str) -> str:
    """OCR text without spaces and with look-alike characters folded, so '8 4 5 1 2 9' or 'hunter2pw'
    read as 'hunterZpw' still match."""
    t = re.sub(r"\s+", "", text).lower()
    return t.translate(str.maketrans({"o": "0", "l": "1", "i": "1", "z": "2", "s": "5", "b": "8", "g": "9"}))


def leaks(text: str, secrets: list[str]) -> list[str]:
    """The secrets readable in OCR `text` (compared after `squashed`)."""
    flat = squashed(text)
    return [s for s in secrets if squashed(s) in flat]
