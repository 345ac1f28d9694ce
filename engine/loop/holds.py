"""What the browser holds during a run until someone decides: `BrowserHolds` (one per `PageWatch`).

Where the DOM can lie, the network cannot. Under `auto-safe` and `ask` (never under `auto`):

- **Leaving the site.** A top-level navigation of any tab (or of a popup a tab opens) to another
  registrable domain than the run's start site and the site the page is on — from a script, a
  redirect, a form posting elsewhere, a meta refresh, `window.open` — is held at the browser
  (`engine.browser.exits.ExitHold`) unless the running step itself targets that site (a
  `navigate`/`new_tab` to it, a link whose href points there, or a step approved with a "leaves …
  for HOST" reason; `back` may return to any site the run's pages already went to). Under `ask`
  too: the person approved the step they saw, not a script sending the page elsewhere (a link to B
  that redirects to C is held at C).
- **Downloads** a step was not approved for: under `auto-safe` every download unless the step was
  approved with a "downloads a file" reason; under `ask`, those that start outside an approved step
  (between steps, or during a step run on a standing grant, which no person looked at).

While the loop waits at the gate for a person's decision on a step and the person has just pressed something in
the page themselves (through the window), the page is theirs (they may take
over and sign in on another site): navigations then are let through and reported, not asked. Else a
held thing is put to the person through the loop's gate (an `ApprovalRequest` whose sensitive
reason says what the page is doing, asked one question at a time with the steps and dialogs), or
refused at once where no person is present (`engine.loop.gates.person_present`: `AutoApprove`, the
MCP server's `NoPersonGate`). Once the person refused a site, the page's further tries to go there
in the same run are refused without asking again. A refused exit never reaches the other site; a
refused download is cancelled and nothing of it is kept. Each is reported in the step's incidents
(`HeldExit`, `DownloadInfo.status`) and a refusal during a step's action fails it with BLOCKED.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

from engine.browser.browser import Browser
from engine.loop.asker import GateAsker
from engine.loop.driver import PageDriver
from engine.loop.effects import submits_to
from engine.loop.policy import site_of
from engine.models import Action, ApprovalRequest, ProposedStep
from engine.models.browsing import DownloadInfo, HeldExit, PageIncidents
from engine.models.effect import StepEffect
from engine.snapshot.vnode import VirtualNode

_LEAVES = re.compile(r"^leaves \S+ for (\S+)")
_MAX_PER_STEP = 5   # held exits kept in one step's incidents (the rest are counted in the run's totals)
# after a run ends, downloads its browser begins for this long are still decided by the run's hold (refused
# unless the person's own press began them): the last step's click may start one a moment after the run ended
LATE_DOWNLOAD_S = 5.0
PERSON_INPUT_S = 3.0  # a press of the person's in the page this recent makes the page theirs while a step is asked


def _site(url: str) -> str:
    return site_of(urllib.parse.urlsplit(url).hostname or "")


def approved_sites(action: Action, node: VirtualNode | None, base_url: str, reasons: list[str]) -> set[str]:
    """The sites a step may take the page to: where its own action points (a navigate or new_tab URL,
    a link's href) and the hosts of the "leaves … for HOST" reasons it was approved with."""
    out: set[str] = set()
    if action.name in ("navigate", "new_tab") and action.url:
        out.add(_site(urllib.parse.urljoin(base_url, action.url)))
    href = str(((getattr(node, "attrs", None) or {}).get("href")) or "") if node is not None else ""
    if href and action.name in ("click", "double_click", "press"):
        out.add(_site(urllib.parse.urljoin(base_url, href)))
    for r in reasons:
        m = _LEAVES.match(r)
        if m:
            out.add(site_of(m.group(1)))
    out.discard("")
    return out


class BrowserHolds:
    """The exits and downloads a run holds (module docstring), asked through `asker`; `page` is the page the
    run works on now, `start_site` the domain the run started on (empty before its first observation)."""

    def __init__(self, asker: GateAsker, page: Callable[[], PageDriver], start_site: Callable[[], str]) -> None:
        self.asker, self.page, self.start_site = asker, page, start_site
        self.step_index = 0                   # the step under way (what a question is asked during)
        self.exits: list[HeldExit] = []       # every held exit of the run, in order
        self.sites: set[str] = set()          # where the running step may take the page
        self.downloads_ok = False             # the running step may download
        self.acting = False                   # a step's action is under way (between `approved` and its end)
        self._refused_sites: dict[str, str] = {}   # site → why the page's first try to go there was refused
        self._visited: set[str] = set()              # sites the run's pages went to (let through)
        self._mark = 0
        self._download_refused = False  # a download the running step set off was refused
        self._browser: Browser[Any] | None = None
        self._ended: Browser[Any] | None = None  # the run that ended's browser (its late downloads are decided here)
        self._arming: asyncio.Future[None] | None = None

    # -- a run -----------------------------------------------------------------------------------
    def start(self, browser: Browser[Any] | None) -> None:
        """The run starts: hold its browser's navigations and downloads (not under `auto`)."""
        self.exits, self._mark, self._refused_sites, self._visited = [], 0, {}, set()
        self.begin_step()
        if browser is not None:
            browser.downloads.clear_late()
        if browser is None or self.asker.policy == "auto":
            return
        self._browser = browser
        browser.downloads.decide = self._download
        self._arming = asyncio.ensure_future(browser.exits.start(self._exit))

    async def ready(self) -> None:
        """Until the hold is in place in every tab (before the first step acts)."""
        if self._arming is not None:
            with contextlib.suppress(Exception):
                await self._arming
            self._arming = None

    def stop(self) -> None:
        b, self._browser = self._browser, None
        if b is None:
            return
        if b.downloads.decide == self._download:
            b.downloads.decide = None
            self._ended = b
            b.downloads.hold_late(self._download, LATE_DOWNLOAD_S)
        if self._arming is not None:
            self._arming.cancel()
            self._arming = None
        b.exits.release()

    # -- steps -----------------------------------------------------------------------------------
    def begin_step(self) -> None:
        self.sites, self.downloads_ok, self.acting = set(), False, False
        self._download_refused = False
        self.effect: StepEffect | None = None  # what the running step was approved to do

    def approved(self, action: Action, node: VirtualNode | None, base_url: str, reasons: list[str],
                 asked: bool, effect: StepEffect | None = None) -> None:
        """The step about to run and what it was approved for: `asked` when the gate approved it (not a
        standing grant, not the auto-safe policy's own go-ahead); `reasons` its sensitive reasons; `effect` what
        it was computed to do (the one form submission it may make)."""
        policy = self.asker.policy
        self.effect = effect
        # (the reasons a gate with no person behind it approved open nothing: nobody read them)
        self.sites = approved_sites(action, node, base_url, reasons if asked and self.asker.person_present else [])
        if action.name == "back":  # back to where the run already was: those sites were let through before
            self.sites |= self._visited
        self.downloads_ok = policy == "auto" or (asked and (policy == "ask" or any("download" in r for r in reasons)))
        self.acting = True

    def end_step(self, inc: PageIncidents) -> None:
        """Put the exits held since the last step ended into its incidents; nothing is allowed after."""
        new = self.exits[self._mark:]
        self._mark = len(self.exits)
        inc.exits = [x.model_copy() for x in new[:_MAX_PER_STEP]]
        self.begin_step()

    def refused_in_step(self) -> bool:
        """Something the running step's action set off was held and refused (an exit, a submission, a download):
        the step fails BLOCKED whatever the page shows next, so its verification need not wait any longer."""
        return self._download_refused or any(not x.allowed and x.during_step and x.reason
                                             for x in self.exits[self._mark:])

    @property
    def busy(self) -> bool:
        """A held navigation or download is being decided now."""
        b = self._browser
        return b is not None and (b.exits.pending > 0 or b.downloads.asking > 0)

    # -- deciding ---------------------------------------------------------------------------------
    async def _exit(self, from_url: str, request: dict[str, Any]) -> bool:
        url = str(request.get("url") or "")
        why = str(request.get("submission") or "")
        if why and not await self._submission(from_url, url, str(request.get("method") or "GET"), why):
            return False
        to = _site(url)
        here = _site(from_url)
        start = site_of(self.start_site() or "")
        if not to or not (here or start):
            return True
        if to in (here, start) or to in self.sites:
            self._visited.add(to)
            return True
        from_site = here or start
        held = HeldExit(url=url, from_url=from_url, from_site=from_site, to_site=to,
                        method=str(request.get("method") or "GET"), during_step=self.acting)
        self.exits.append(held)
        if self._person_has_the_page():
            held.allowed, held.by = True, "person"
            held.reason = "while a step waited for the person's decision (they may be acting in the page)"
            self._visited.add(to)
            return True
        if to in self._refused_sites:  # asked once: not again in this run
            held.reason = f"{self._refused_sites[to]}; refused earlier in this run"
            return False
        why = f"the page is leaving {from_site} for {to} (a script or redirect, not the approved step)"
        refused = await self._ask(
            why, f"The page is going to {url} on its own. Let it go there (approve), or keep it here (reject)?",
            Action(name="navigate", url=url), f"Let the page go to {url}")
        if refused is None:
            held.allowed, held.by = True, "person"
            self.sites.add(to)
            self._visited.add(to)
            return True
        held.reason, held.by = refused, ("policy" if refused.startswith("no person") else "person")
        self._refused_sites[to] = refused
        return False

    async def _submission(self, from_url: str, url: str, method: str, why: str) -> bool:
        """A form submission (`why`: how it is known) the running step's effect did not include is put to the
        person (refused with no person); the one it names, and any while the page is the person's, go on."""
        if submits_to(self.effect, method, url):
            return True
        what = "a form" if why.startswith("formSubmission") else "a request with a body (a form or a script's)"
        held = HeldExit(url=url, from_url=from_url, from_site=_site(from_url), to_site=_site(url),
                        method=method.upper(), during_step=self.acting, kind="submission")
        self.exits.append(held)
        if self._person_has_the_page():
            held.allowed, held.by = True, "person"
            held.reason = "while a step waited for the person's decision (they may be acting in the page)"
            return True
        step = "the approved step" if self.acting else "no step (the page on its own)"
        because = f"the page submits {what}: {method.upper()} {url}, which {step} did not include"
        refused = await self._ask(
            because, f"The page is submitting {what} to {url} ({method.upper()}) that the step did not say it would. "
                     "Let it go (approve), or stop it here (reject)?",
            Action(name="navigate", url=url), f"Let the page submit to {url}")
        if refused is None:
            held.allowed, held.by = True, "person"
            return True
        held.reason, held.by = refused, ("policy" if refused.startswith("no person") else "person")
        return False

    def _person_has_the_page(self) -> bool:
        """A person is being asked about a step now and has just pressed a button or key in the page
        themselves (through the window, within PERSON_INPUT_S): the page is theirs to use (taking over to
        sign in on another site, following a link) and they see where it goes; asking them would wait for
        their own answer. Such exits are let through and reported. A page that leaves on its own while the
        person only reads the question (a timer) is held like any other exit."""
        if not self.asker.asking_about_step:
            return False
        b = self._browser
        return self._pressed_by_person(b.tabs if b is not None else [self.page()])

    @staticmethod
    def _pressed_by_person(tabs: Iterable[object]) -> bool:
        """The person pressed a button or key in one of these pages (through the window) just now."""
        now = time.monotonic()
        return any(now - float(getattr(getattr(t, "target", t), "person_input_at", 0.0) or 0.0) < PERSON_INPUT_S
                   for t in tabs)

    async def _download(self, info: DownloadInfo) -> str | None:
        if self.downloads_ok or self.asker.policy == "auto" or self._person_has_the_page():
            return None
        if self._browser is None:  # begun as or after the run ended, or handed over after: nobody can be asked now
            if self._pressed_by_person(getattr(self._ended, "tabs", None) or []):
                return None  # the person's own press in the page (the window), after the run
            return "the run had ended before the download reached Vigil, and nobody approved it"
        where = urllib.parse.urlsplit(info.url).hostname or "the page"
        why = f"the page downloads {info.name} from {where} to this machine (not what the step was approved for)"
        refused = await self._ask(why, f"The page is downloading {info.name} ({info.url}). Keep it (approve) or "
                                       "cancel it (reject)?",
                                  Action(name="wait", ms=1), f"Keep the download {info.name}")
        self._download_refused = self._download_refused or (refused is not None and self.acting)
        return refused

    async def _ask(self, why: str, summary: str, action: Action, description: str) -> str | None:
        """None when the person lets it through; else why it is refused."""
        if not self.asker.person_present:
            return "no person is watching to approve it"
        # `details["held"]`: not a step of the planner, something the page did that the browser holds
        proposal = ProposedStep(thought="", action=action, description=description,
                                details={"held": "download" if action.name == "wait" else "exit"})
        request = ApprovalRequest(step_index=self.step_index, proposal=proposal, summary=summary,
                                  policy=self.asker.policy, sensitive_reasons=[why])
        decision = await self.asker.ask_about_page(request)
        if decision.kind in ("approve", "edit", "take_over"):
            return None
        if decision.kind == "stop":  # (the run is stopped by now)
            return "the person stopped the run"
        return "the person said no" + (f": {decision.reason}" if decision.reason else "")
