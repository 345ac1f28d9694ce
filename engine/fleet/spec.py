"""A fleet file: the runs of one fleet, read from JSON or YAML.

```yaml
name: vendor portals              # optional: the fleet's title
defaults:                         # optional: what every run has unless it sets its own
  planner: script
  approve: auto-safe
  max_steps: 20
runs:
  - name: acme                    # optional (run-1, run-2 … otherwise); names are unique
    task: Update the contact email
    url: https://acme.example/settings
    script: acme.yaml             # a file (relative to the fleet file) or the steps inline
  - task: Check the dashboard
    url: https://dash.example/
    planner: openai
    model: gpt-4.1-mini
```
or a template run plus a CSV file of rows whose columns fill `{placeholders}` in the task, the URL, the
name and every text of the script (`{{` and `}}` are literal braces):
```yaml
template: {name: "row-{id}", task: "Enter {company}", url: "http://127.0.0.1:8000/form?c={id}", script: form.yaml}
rows: companies.csv
```
A run takes what `vigil run` takes: `task`, `url`, `planner` (heuristic, openai, backend, script — implied
by `script`), `script`, `model`, `base_url`, `backend_url`, `vision`, `tools`, plus `approve` and `max_steps`.
Every problem is a `FleetSpecError` (code BAD_ARGUMENT) naming the file, the run and what is wrong.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from engine.errors import ErrorCode, VigilError
from engine.loop.scripted import parse_structured
from engine.models import POLICIES

PLANNER_NAMES = ("heuristic", "openai", "backend", "script")
RUN_KEYS = frozenset({"name", "task", "url", "planner", "script", "model", "base_url", "backend_url", "vision",
                      "tools", "approve", "max_steps"})
TOP_KEYS = frozenset({"name", "defaults", "runs", "template", "rows", "grid"})
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
MAX_RUNS = 10_000


class FleetSpecError(VigilError):
    """A fleet file that cannot be run: the message names the file, the run and the problem."""

    code = ErrorCode.BAD_ARGUMENT


class RunSpec(BaseModel):
    """One run of a fleet, resolved: placeholders filled, the script parsed (not yet validated as steps
    when it came from a file that could not be read: that is an error at load time)."""

    index: int                       # 0-based, in the order of the file (or of the CSV rows)
    name: str
    task: str
    url: str                         # normalized as `vigil run` does
    planner: str = "heuristic"
    script: list[Any] | None = None  # the steps (JSON/YAML data), for planner script
    model: str | None = None
    base_url: str | None = None
    backend_url: str | None = None
    vision: bool = False
    tools: bool = True
    approve: str | None = None       # None: the fleet's --approve
    max_steps: int | None = None     # None: the fleet's --max-steps
    row: int | None = None           # the CSV line it came from (template fleets)

    def make_planner(self) -> Any:
        """A fresh planner for this run (planners keep state: one per run)."""
        if self.planner == "script":
            from engine.loop.scripted import ScriptedPlanner, load_script
            return ScriptedPlanner(load_script(list(self.script or [])))
        from engine.planners.registry import make_planner
        return make_planner(self.planner, base_url=self.base_url, model=self.model, backend_url=self.backend_url,
                            vision=self.vision, tools=self.tools)

    def identity(self) -> dict[str, str]:
        """What `vigil fleet --resume` checks against the stored fleet: the same run in the same place."""
        return {"name": self.name, "task": self.task, "url": self.url}


class FleetSpec(BaseModel):
    name: str
    path: str                      # the fleet file, absolute ("" for a spec built in code)
    runs: list[RunSpec] = Field(default_factory=list)
    digest: str = ""               # sha256 of the file (and its rows file), to tell a changed file on --resume
    grid: str | None = None        # `grid:` — a Selenium Grid (http://hub:4444) or a DevTools endpoint (ws://…)

    def run_named(self, name: str) -> RunSpec:
        for r in self.runs:
            if r.name == name:
                return r
        raise FleetSpecError(f"The fleet {self.name!r} has no run named {name!r}.")


# -- reading -------------------------------------------------------------------------------------
def _parse_file(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FleetSpecError(f"{what} {str(path)!r} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FleetSpecError(f"{what} {str(path)!r} cannot be read: {exc}.") from None
    return _parse_text(text, f"{what} {path.name}", path.suffix.lower())


def _parse_text(text: str, where: str, suffix: str = "") -> Any:
    is_json = suffix == ".json" or (suffix not in (".yaml", ".yml") and text.lstrip()[:1] in ("[", "{"))
    return parse_structured(text, where, is_json, FleetSpecError)


def load_fleet(source: str | Path | dict, *, base_dir: str | Path | None = None) -> FleetSpec:
    """Read a fleet file (JSON or YAML path) or an already parsed mapping; FleetSpecError on any problem."""
    if isinstance(source, dict):
        data, path, where = source, None, "The fleet"
        base = Path(base_dir or ".").resolve()
        digest = hashlib.sha256(json.dumps(source, sort_keys=True, default=str).encode()).hexdigest()
    else:
        path = Path(source).expanduser().resolve()
        if path.is_dir():
            raise FleetSpecError(f"The fleet file {str(path)!r} is a folder; pass a .yaml or .json file.")
        data = _parse_file(path, "The fleet file")
        where, base = f"The fleet file {path.name}", path.parent
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if isinstance(data, list):
        data = {"runs": data}  # a bare list of runs
    if not isinstance(data, dict):
        raise FleetSpecError(f"{where} must hold a mapping with `runs` (or `template` and `rows`), not a "
                             f"{type(data).__name__}.")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise FleetSpecError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; use "
                             f"{', '.join(sorted(TOP_KEYS))}.")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise FleetSpecError(f"{where}: `defaults` must be a mapping of run options.")
    _check_keys(defaults, f"{where}, defaults")
    name = str(data.get("name") or (path.stem if path else "fleet"))
    grid = data.get("grid")
    if grid is not None and (not isinstance(grid, str) or not grid.startswith(("http://", "https://", "ws://",
                                                                              "wss://"))):
        raise FleetSpecError(f"{where}: `grid` must be a URL: a Selenium Grid (http://hub:4444) or a DevTools "
                             f"endpoint (http://host:9222, ws://…), not {grid!r}.")
    if "runs" in data and ("template" in data or "rows" in data):
        raise FleetSpecError(f"{where}: give either `runs`, or `template` with `rows` — not both.")
    raws: list[tuple[dict, dict[str, str] | None, int | None]] = []
    if "runs" in data:
        runs = data["runs"]
        if not isinstance(runs, list) or not runs:
            raise FleetSpecError(f"{where}: `runs` must be a non-empty list of runs (each with task and url).")
        for i, r in enumerate(runs):
            if not isinstance(r, dict):
                raise FleetSpecError(f"{where}, run {i + 1}: must be a mapping with task and url, not {r!r}.")
            raws.append((r, None, None))
    elif "template" in data or "rows" in data:
        tpl = data.get("template")
        if not isinstance(tpl, dict):
            raise FleetSpecError(f"{where}: `template` must be a mapping (a run with {{placeholders}}), given with "
                                 "`rows`.")
        if not data.get("rows"):
            raise FleetSpecError(f"{where}: a `template` needs `rows`, a CSV file whose columns fill its "
                                 "placeholders.")
        rows_path = (base / str(data["rows"])).resolve()
        rows = _read_rows(rows_path)
        digest = hashlib.sha256(digest.encode() + rows_path.read_bytes()).hexdigest()
        raws = [(tpl, row, line) for line, row in rows]
    else:
        raise FleetSpecError(f"{where} lists no runs: give `runs` (a list), or `template` with `rows` (a CSV file).")
    if len(raws) > MAX_RUNS:
        raise FleetSpecError(f"{where} lists {len(raws)} runs; at most {MAX_RUNS} fit in one fleet.")
    specs = [_run(i, {**defaults, **raw}, row, line, where, base) for i, (raw, row, line) in enumerate(raws)]
    seen: dict[str, int] = {}
    for s in specs:
        if s.name in seen:
            raise FleetSpecError(f"{where}: runs {seen[s.name] + 1} and {s.index + 1} are both named {s.name!r}; "
                                 "names must be unique (they name the runs in the queue and the report).")
        seen[s.name] = s.index
    return FleetSpec(name=name, path=str(path) if path else "", runs=specs, digest=digest, grid=grid or None)


def _read_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames:
                raise FleetSpecError(f"The rows file {path.name} is empty: its first line must name the columns.")
            cols = [c.strip() for c in reader.fieldnames]
            out = []
            for row in reader:
                if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                    continue  # a blank line
                if None in row:
                    raise FleetSpecError(f"The rows file {path.name}, line {reader.line_num}: more values than the "
                                         f"{len(cols)} columns ({', '.join(cols)}).")
                out.append((reader.line_num, {c: (row.get(k) or "") for c, k in zip(cols, reader.fieldnames,
                                                                                         strict=True)}))
    except FileNotFoundError:
        raise FleetSpecError(f"The rows file {str(path)!r} does not exist.") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise FleetSpecError(f"The rows file {str(path)!r} cannot be read: {exc}.") from None
    if not out:
        raise FleetSpecError(f"The rows file {path.name} has no rows under its header line.")
    return out


def _check_keys(raw: dict, where: str) -> None:
    unknown = sorted(set(raw) - RUN_KEYS)
    if unknown:
        raise FleetSpecError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; a run takes "
                             f"{', '.join(sorted(RUN_KEYS))}.")


def fill(text: str, row: dict[str, str] | None, where: str) -> str:
    """`{column}` → the row's value; `{{`/`}}` → a brace. Without a row the text is kept as it is."""
    if row is None:
        return text

    def sub(m: re.Match) -> str:
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        key = m.group(1).strip()
        if key not in row:
            raise FleetSpecError(f"{where}: the placeholder {{{key}}} names no column of the rows file (its columns: "
                                 f"{', '.join(row) or 'none'}). Write {{{{ and }}}} for literal braces.")
        return row[key]

    return _PLACEHOLDER.sub(sub, text)


def _fill_all(value: Any, row: dict[str, str] | None, where: str) -> Any:
    if isinstance(value, str):
        return fill(value, row, where)
    if isinstance(value, list):
        return [_fill_all(v, row, where) for v in value]
    if isinstance(value, dict):
        return {k: _fill_all(v, row, where) for k, v in value.items()}
    return value


def _run(i: int, raw: dict, row: dict[str, str] | None, line: int | None, where: str, base: Path) -> RunSpec:
    label = raw.get("name") if isinstance(raw.get("name"), str) and row is None else None
    here = f"{where}, run {i + 1}" + (f" ({label!r})" if label else "") + (f" (rows line {line})" if line else "")
    _check_keys(raw, here)

    def text(key: str, required: bool = False) -> str | None:
        v = raw.get(key)
        if v is None or v == "":
            if required:
                raise FleetSpecError(f"{here}: no `{key}`" + (" (what to do, in words)." if key == "task"
                                                             else " (the page to start on)."))
            return None
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise FleetSpecError(f"{here}: `{key}` must be text, not {v!r}.")
        return fill(str(v), row, here)

    task, url = text("task", True), text("url", True)
    assert task is not None and url is not None
    name = text("name") or f"run-{i + 1}"
    from engine.browser.navigation import normalize_url
    try:
        if "://" not in url and not url.startswith(("about:", "data:")) and (base / url).expanduser().exists():
            url = str((base / url).expanduser())  # a local page, relative to the fleet file
        url = normalize_url(url)
    except VigilError as exc:
        raise FleetSpecError(f"{here}: {exc.message}") from None
    planner = raw.get("planner") or ("script" if raw.get("script") is not None else "heuristic")
    if planner not in PLANNER_NAMES:
        raise FleetSpecError(f"{here}: unknown planner {planner!r}; use one of {', '.join(PLANNER_NAMES)}.")
    approve = raw.get("approve")
    if approve is not None and approve not in POLICIES:
        raise FleetSpecError(f"{here}: `approve` must be one of {', '.join(POLICIES)}, not {approve!r}.")
    max_steps = raw.get("max_steps")
    if max_steps is not None and (not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1):
        raise FleetSpecError(f"{here}: `max_steps` must be a whole number of at least 1, not {max_steps!r}.")
    for flag in ("vision", "tools"):
        if flag in raw and not isinstance(raw[flag], bool):
            raise FleetSpecError(f"{here}: `{flag}` must be true or false, not {raw[flag]!r}.")
    script = None
    if planner == "script":
        script = _script(raw.get("script"), row, here, base)
    elif raw.get("script") is not None:
        raise FleetSpecError(f"{here}: a `script` is for planner script, not {planner}.")
    if planner == "backend" and not raw.get("backend_url"):
        import os
        if not os.environ.get("VIGIL_BACKEND_URL"):
            raise FleetSpecError(f"{here}: planner backend needs `backend_url` (or VIGIL_BACKEND_URL).")
    return RunSpec(index=i, name=name, task=task, url=url, planner=planner, script=script,
                   model=text("model"), base_url=text("base_url"), backend_url=text("backend_url"),
                   vision=bool(raw.get("vision", False)), tools=bool(raw.get("tools", True)), approve=approve,
                   max_steps=max_steps, row=line)


def _script(value: Any, row: dict[str, str] | None, here: str, base: Path) -> list[Any]:
    from engine.errors import ScriptError
    from engine.loop.scripted import load_script

    if value is None:
        raise FleetSpecError(f"{here}: planner script needs `script` (a file of steps, or the steps inline).")
    if isinstance(value, str) and "\n" not in value and value.lstrip()[:1] not in ("[", "{", "-"):
        steps = _parse_file((base / fill(value, row, here)).resolve(), f"{here}: the script file")
    elif isinstance(value, str):
        steps = _parse_text(value, f"{here}: the script")
    else:
        steps = value
    if not isinstance(steps, list):
        raise FleetSpecError(f"{here}: a script must be a list of steps, not a {type(steps).__name__}.")
    steps = _fill_all(steps, row, here)
    try:
        load_script(steps)
    except ScriptError as exc:
        raise FleetSpecError(f"{here}: {exc.message}") from None
    return steps
