"""The scripted planner: a fixed list of steps (JSON or YAML) whose targets are node IDs or
`{role, name, text, nth, exact}` queries resolved against the snapshot when the step runs.

```yaml
- {action: type, target: {name: Work email}, text: ada@example.com}
- {action: click, target: {role: button, name: Create account}, expect: {type: navigation}}
- {action: wait, ms: 500}
- {action: finish, answer: done}
```
Per step, besides the action's own fields: `expect` (an expected outcome, or just its type as a
string), `thought`, `description`, `sensitive` (always ask), `optional` (a failure moves on instead of
failing the run) and `timeout_ms` (how long to wait for the target to appear).

How the script reacts to what happened to its previous proposal:
- completed, skipped, taken over (the person did it their way) → next step;
- failed → `fail` naming the step and the error, unless the step is optional (→ next step);
- rejected → the same step again when the reason asks for it ("retry", "again", "repeat");
  otherwise a script cannot follow the reason, so it proposes `fail` quoting it;
- stale (the page changed while it waited for approval) → the same step again;
- its own `fail` proposal rejected → retry the failed step; skipped → move past the failed step.
When the steps run out without `finish`, it proposes `finish`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from engine.errors import ScriptError, UnknownNodeError
from engine.loop.action_string import NODE_ID
from engine.loop.grounding import describe_action, resolve_target
from engine.loop.planner import Observation
from engine.loop.redact import types_secret
from engine.models import ACTION_NAMES, Action, ExpectedOutcome, ProposedStep, TargetQuery
from engine.secret_values import MASK

_STEP_KEYS = frozenset({"expect", "thought", "description", "sensitive", "optional", "timeout_ms"})
_ACTION_KEYS = frozenset(Action.model_fields) - {"name"}
_ALIASES = {"setValue": "type", "setvalue": "type", "doubleClick": "double_click", "goto": "navigate"}
RETRY = re.compile(r"\b(retry|try again|again|repeat)\b", re.I)


class ScriptStep(BaseModel):
    """One step of a script: the action plus how the loop should treat it."""

    model_config = ConfigDict(frozen=True)
    action: Action
    expect: ExpectedOutcome | None = None
    thought: str = ""
    description: str = ""
    sensitive: bool = False
    optional: bool = False
    timeout_ms: int | None = None


def load_script(source: str | Path | list) -> list[ScriptStep]:
    """Steps from a JSON/YAML file path, JSON/YAML text, or an already parsed list.
    Raises ScriptError (code BAD_SCRIPT) naming the step and the problem."""
    data = source if isinstance(source, list) else _parse(source)
    if not isinstance(data, list):
        raise ScriptError(f"A script must be a list of steps, not a {type(data).__name__}. Write "
                          '[{"action": "click", "target": 12}, …] (JSON) or "- action: click" lines (YAML).')
    if not data:
        raise ScriptError("The script has no steps.")
    return [_step(i + 1, raw) for i, raw in enumerate(data)]


def _parse(source: str | Path) -> Any:
    text, where, is_json = _read(source)
    return parse_structured(text, where, is_json)


def parse_structured(text: str, where: str, is_json: bool, error: type[Exception] = ScriptError) -> Any:
    """JSON or YAML text parsed; `error(message)` naming `where`, the line and the column when it is not valid
    (scripts, and fleet files in engine.fleet.spec)."""
    if is_json:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                        f"column {exc.colno}.") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{where} is not valid YAML: {problem}{at}.") from None


def _read(source: str | Path) -> tuple[str, str, bool]:
    """(text, where it came from, whether to read it as JSON)."""
    if isinstance(source, str) and ("\n" in source or source.lstrip()[:1] in ("[", "{", "-")):
        return source, "The script", source.lstrip()[:1] in ("[", "{")
    path = Path(source).expanduser()
    if not path.is_file():
        raise ScriptError(f"Script file {str(path)!r} does not exist. Pass a .json or .yaml file with a list of steps.")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(f"Cannot read script file {str(path)!r}: {exc}.") from None
    is_json = path.suffix.lower() == ".json" or (path.suffix.lower() not in (".yaml", ".yml")
                                                 and text.lstrip()[:1] in ("[", "{"))
    return text, f"Script file {path.name}", is_json


def _step(n: int, raw: Any) -> ScriptStep:
    def bad(problem: str) -> ScriptError:
        return ScriptError(f"Step {n}: {problem}")

    if not isinstance(raw, dict):
        raise bad(f'must be a mapping such as {{"action": "click", "target": 12}}, not {raw!r}.')
    name = raw.get("action")
    if not isinstance(name, str) or not name:
        raise bad('has no "action" (one of ' + ", ".join(ACTION_NAMES) + ").")
    name = _ALIASES.get(name, name)
    if name not in ACTION_NAMES:
        raise bad(f"unknown action {name!r}; use one of {', '.join(ACTION_NAMES)}.")
    unknown = sorted(set(raw) - _STEP_KEYS - _ACTION_KEYS - {"action"})
    if unknown:
        raise bad(f"unknown key(s) {', '.join(map(repr, unknown))} for {name}.")
    fields = {k: v for k, v in raw.items() if k in _ACTION_KEYS}
    if "target" in fields:
        fields["target"] = _target(fields["target"], bad)
    if isinstance(fields.get("paths"), str):
        fields["paths"] = [fields["paths"]]  # upload: one path may be given as a string
    for k in ("text", "option", "answer", "reason", "key", "url"):
        if isinstance(fields.get(k), (int, float)) and not isinstance(fields.get(k), bool):
            fields[k] = str(fields[k])  # YAML reads `text: 12345` as a number
    try:
        action = Action.model_validate({"name": name, **fields})
    except ValidationError as exc:
        raise bad(f"{name}: {_pydantic_msg(exc)}.") from None
    expect = raw.get("expect")
    if expect is not None:
        try:
            expect = ExpectedOutcome.model_validate({"type": expect} if isinstance(expect, str) else expect)
        except ValidationError as exc:
            raise bad(f"bad expect {expect!r}: {_pydantic_msg(exc)}.") from None
    timeout = raw.get("timeout_ms")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0):
        raise bad(f"timeout_ms must be a number of milliseconds >= 0, not {timeout!r}.")
    for k in ("sensitive", "optional"):
        if k in raw and not isinstance(raw[k], bool):
            raise bad(f"{k} must be true or false, not {raw[k]!r}.")
    for k in ("thought", "description"):
        if k in raw and not isinstance(raw[k], str):
            raise bad(f"{k} must be text, not {raw[k]!r}.")
    return ScriptStep(action=action, expect=expect, thought=raw.get("thought") or "",
                      description=raw.get("description") or describe_action(action, None, expect),
                      sensitive=raw.get("sensitive", False), optional=raw.get("optional", False),
                      timeout_ms=int(timeout) if timeout is not None else None)


def _target(t: Any, bad) -> str | TargetQuery:
    if isinstance(t, bool) or t is None:
        raise bad(f"bad target {t!r}: give a node ID such as 12 or f1_12, or {{role, name}}.")
    if isinstance(t, int):
        return str(t)
    if isinstance(t, str):
        if NODE_ID.match(t.strip()):
            return t.strip()
        raise bad(f'bad target {t!r}: a string target must be a node ID such as "12" or "f1_12"; '
                  f'to find an element by its name write {{"name": {json.dumps(t)}}}.')
    if isinstance(t, dict):
        try:
            return TargetQuery.model_validate(t)
        except ValidationError as exc:
            raise bad(f"bad target {t!r}: {_pydantic_msg(exc)}.") from None
    raise bad(f"bad target {t!r}: give a node ID or a mapping with role, name, text or nth.")


def _pydantic_msg(exc: ValidationError) -> str:
    out = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "__root__")
        msg = str(e.get("msg", "")).removeprefix("Value error, ")
        out.append(f"{loc}: {msg}" if loc and not msg.startswith(loc) else msg)
    return "; ".join(out)


def _reason(obs: Observation) -> str:
    """The person's own words for a rejection (from the step record), else the loop's feedback."""
    last = obs.history[-1] if obs.history else None
    if last is not None and last.decision is not None and last.decision.reason:
        return last.decision.reason.strip()
    return obs.feedback or "no reason given"


class ScriptedPlanner:
    """Proposes the script's steps in order (see the module docstring for how it reacts).

    Its plan is the steps' descriptions, with the text of every `type` step whose field is a password or
    one-time-code field on the current page masked (the plan is published before those steps run). A
    proposal carries the plan only when the run has none yet or the masking changed: a step of a long
    script costs no more than one of a short script (issue 38)."""

    def __init__(self, steps: list[ScriptStep] | str | Path | list[dict]):
        given = [s for s in steps if isinstance(s, ScriptStep)] if isinstance(steps, list) else []
        self.steps: list[ScriptStep] = (given if isinstance(steps, list) and len(given) == len(steps)
                                        else load_script(steps))
        self.cursor = 0
        self._last: str | None = None   # what the previous proposal was: "step", "fail", "finish"
        self._descriptions: list[str] = [s.description for s in self.steps]
        # the `type` steps whose description quotes their text, by target: whether it is masked depends only on
        # the node the target finds (or, when it finds none, on the target's own words)
        self._maskable: dict[str | TargetQuery, list[int]] = {}
        for i, st in enumerate(self.steps):
            a = st.action
            if a.name == "type" and a.text and a.target is not None and a.text in st.description:
                self._maskable.setdefault(a.target, []).append(i)
        # the targets that are looked up on every page: node IDs (a dictionary lookup) and queries whose words
        # name a secret (masked while they find nothing); the others only on a page with a secret field
        self._always_looked_up = [t for t, idx in self._maskable.items()
                                  if not isinstance(t, TargetQuery) or types_secret(self.steps[idx[0]].action)]
        self._masked: frozenset[str | TargetQuery] = frozenset()  # the targets whose steps' text is masked now
        self._shown: list[str] = self._descriptions  # the plan as shown (secrets masked), for the last observation
        self._send: list[str] | None = None  # what the current proposals carry of it (None: no change)

    @property
    def descriptions(self) -> list[str]:
        return list(self._descriptions)

    def _masked_targets(self, snapshot) -> frozenset[str | TargetQuery]:
        """The targets whose `type` steps type into a password or one-time-code field on this page (or,
        finding nothing, whose words name one). A target finds a secret node only on a page that has one,
        so on most pages only the few targets of `_always_looked_up` are looked up."""
        if not self._maskable:
            return self._masked
        probe = self.steps[next(iter(self._maskable.values()))[0]].action  # a type with text: its node decides
        on_page = any(types_secret(probe, n) for n in snapshot.nodes())
        out = set()
        for t in (self._maskable if on_page else self._always_looked_up):
            try:
                node = resolve_target(snapshot, t)
            except UnknownNodeError:
                node = None
            if types_secret(self.steps[self._maskable[t][0]].action, node):
                out.add(t)
        return frozenset(out)

    def _plan(self, obs: Observation) -> list[str] | None:
        """The plan to send with this proposal: the step descriptions (masked as `_masked_targets` says) when
        the run has no plan of this script yet or the masking changed since the last observation; else None
        (the loop keeps the plan it has)."""
        masked = self._masked_targets(obs.snapshot)
        changed = masked != self._masked
        if changed:
            self._masked = masked
            self._shown = self._masked_plan(masked)
        if changed or obs.plan is None or len(obs.plan.steps) != len(self.steps):
            return self._shown
        return None

    def _masked_plan(self, masked: frozenset[str | TargetQuery]) -> list[str]:
        out = list(self._descriptions)
        for t in masked:
            for i in self._maskable[t]:
                st = self.steps[i]
                out[i] = st.description.replace(st.action.text or "", MASK)
        return out

    async def propose(self, obs: Observation) -> ProposedStep:
        self._send = self._plan(obs)
        outcome = obs.last_outcome if self._last is not None else None
        if outcome is not None:
            proposal = self._react(outcome, obs)
            if proposal is not None:
                return proposal
        if self.cursor >= len(self.steps):
            self._last = "finish"
            return ProposedStep(thought="Every step of the script is done.", action=Action(name="finish"),
                                description="Finish: the script is done", plan=self._send)
        step = self.steps[self.cursor]
        self._last = "step"
        return ProposedStep(thought=step.thought, action=step.action, expected_outcome=step.expect, plan=self._send,
                            plan_index=self.cursor, description=step.description, sensitive=step.sensitive,
                            sensitive_reason="the script marks this step as sensitive" if step.sensitive else None,
                            timeout_ms=step.timeout_ms)

    def _react(self, outcome: str, obs: Observation) -> ProposedStep | None:
        """Move the cursor for what became of the previous proposal; a `fail` proposal when the
        script cannot go on."""
        last, self._last = self._last, None
        if last == "fail":
            if outcome in ("skipped", "taken_over"):
                self.cursor += 1
            return None          # rejected (or stale): retry the step that failed
        if outcome in ("completed", "skipped", "taken_over"):
            self.cursor += 1
            return None
        if outcome == "stale":
            return None
        if self.cursor >= len(self.steps):     # our own closing finish was refused
            if outcome == "rejected" and not RETRY.search(_reason(obs)):
                return self._fail(f"The closing finish was rejected: {_reason(obs)}.")
            return None
        step = self.steps[self.cursor]
        n = self.cursor + 1
        if outcome == "failed":
            if step.optional:
                self.cursor += 1
                return None
            result = obs.last_result
            why = (result.message if result and result.message else obs.feedback) or "it failed"
            return self._fail(f"Step {n} ({step.description}) failed: {why}")
        if outcome == "rejected" and not RETRY.search(_reason(obs)):
            return self._fail(f"Step {n} ({step.description}) was rejected: {_reason(obs)}. "
                              "A script cannot change its steps; edit the script and run it again.")
        return None

    def _fail(self, reason: str) -> ProposedStep:
        self._last = "fail"
        return ProposedStep(thought=reason, action=Action(name="fail", reason=reason), plan=self._send,
                            plan_index=min(self.cursor, len(self.steps) - 1), description="Give up: " + reason)
