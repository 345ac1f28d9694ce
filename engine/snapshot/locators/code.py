"""An action as Playwright Python (sync API): `page.get_by_role("button", name="Save", exact=True).click()`.

What `vigil export --playwright` writes per step, what the window shows and copies, and what an
MCP tool result carries (as Playwright MCP does) so a coding agent can write tests from it. Text
the page or a model wrote only ever appears inside string literals; a typed secret is never
written: the caller passes the expression that reads it (an environment variable).
"""

from __future__ import annotations

from engine.models import Action
from engine.secret_values import MASK  # what the loop stores instead of a typed secret
from engine.snapshot.locators.model import Locator, py_str


def url_expr(url: str, base_url: str | None = None) -> str:
    """A URL as Python: `BASE_URL + "/path"` when it is on the recorded origin, else a literal."""
    if base_url and (url == base_url or url.startswith(base_url + "/") or url.startswith(base_url + "?")):
        rest = url[len(base_url):]
        return f"BASE_URL + {py_str(rest)}" if rest else "BASE_URL"
    return py_str(url)


def action_lines(action: Action, locator: Locator | None, *, root: str = "page", text_expr: str | None = None,
                 base_url: str | None = None, native_select: bool = True) -> list[str]:
    """The Playwright lines for one action. `locator` finds its element (None for page actions);
    `text_expr` replaces the typed text (a secret's environment variable); an action Playwright
    code cannot say (a tab switch, a dialog answer) comes back as a comment."""
    a = action
    loc = locator.code(root) if locator is not None else None
    n = a.name
    if n in ("click", "double_click", "hover", "type", "select", "check", "uncheck", "upload") and loc is None:
        return [f"# {n}: no locator for its element"]
    assert loc is not None or n not in ("click", "double_click", "hover", "type", "select", "check", "uncheck",
                                        "upload")
    force = "force=True" if a.force else ""
    if n == "click":
        return [f"{loc}.click({force})"]
    if n == "double_click":
        return [f"{loc}.dblclick({force})"]
    if n == "hover":
        return [f"{loc}.hover({force})"]
    if n == "type":
        text = text_expr or py_str(a.text or "")
        lines = [f"{loc}.fill({text})" if a.clear else f"{loc}.press_sequentially({text})"]
        if a.submit:
            lines.append(f"{loc}.press(\"Enter\")")
        return lines
    if n == "select":
        opt = py_str(a.option or "")
        if native_select:
            return [f"{loc}.select_option({opt})"]
        # a custom select: open it where a person would, then pick the option by its name
        # (the hidden native <select> a widget mirrors has the same options: only a shown one is picked)
        return [f"{loc}.click()",
                f"{root}.get_by_role(\"option\", name={opt}, exact=True).filter(visible=True).first.click()"]
    if n == "check":
        return [f"{loc}.check()"]
    if n == "uncheck":
        return [f"{loc}.uncheck()"]
    if n == "upload":
        return [f"{loc}.set_input_files([{', '.join(py_str(p) for p in a.paths or [])}])"]
    if n == "press":
        target = f"{loc}.press" if loc else f"{root}.keyboard.press"
        line = f"{target}({py_str(a.key or '')})"
        return [f"for _ in range({a.repeat}):", f"    {line}"] if a.repeat > 1 else [line]
    if n == "scroll":
        if loc:
            return [f"{loc}.scroll_into_view_if_needed()"]
        if a.direction in ("top", "bottom"):
            to = "0" if a.direction == "top" else "document.documentElement.scrollHeight"
            return [f"{root}.evaluate(\"window.scrollTo(0, {to})\")"]
        amount = a.amount or 600
        dx = amount if a.direction == "right" else -amount if a.direction == "left" else 0
        dy = amount if a.direction == "down" else -amount if a.direction == "up" else 0
        return [f"{root}.mouse.wheel({dx}, {dy})"]
    if n == "navigate":
        return [f"{root}.goto({url_expr(a.url or '', base_url)})"]
    if n == "back":
        return [f"{root}.go_back()"]
    if n == "wait":
        return [f"{root}.wait_for_timeout({int(a.ms or 0)})"]
    if n == "finish":
        return ["# the run finished here" + (f": {one_line(a.answer)}" if a.answer else "")]
    if n == "fail":
        return ["# the run gave up here" + (f": {one_line(a.reason)}" if a.reason else "")]
    return [f"# {one_line(a.to_string())}: not written as Playwright code ({n} acts on the browser's tabs or "
            "dialogs, which a test sets up itself)"]


def action_code(action: Action, locator: Locator | None, **kw: object) -> str:
    """The action as one line (several joined by "; "), secrets never shown: a masked or secret text
    is written as the environment variable VIGIL_SECRET."""
    if action.name == "type" and (action.text == MASK or kw.get("text_expr")):
        kw = {**kw, "text_expr": kw.get("text_expr") or 'os.environ["VIGIL_SECRET"]'}
    lines = action_lines(action, locator, **kw)  # type: ignore[arg-type]
    if len(lines) == 2 and lines[0].startswith("for "):
        return f"{lines[0]} {lines[1].strip()}"
    return "; ".join(lines)


def one_line(s: str | None, limit: int = 160) -> str:
    """Page or model text made safe for a `#` comment: one line, no control characters, cut."""
    t = " ".join("".join(ch if ch.isprintable() else " " for ch in (s or "")).split())
    return t if len(t) <= limit else t[: limit - 1] + "…"
