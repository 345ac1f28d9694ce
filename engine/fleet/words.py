"""One word per meaning for how a run or a session stands, wherever it is said: the Fleet view, `vigil fleet`,
`vigil sessions` (a fleet's runs and their sessions side by side). The store and the fleet record the same
meanings under different names (a session's `success`/`error`/`interrupted`, a fleet run's `done`/`failed`/
`stopped`); what a person reads is the same word for the same thing:

- done — it ended with its answer (a session's `success`, a run's `done`);
- failed — it ended with an error (`error`, `failed`);
- stopped — a person or a request stopped it before its end (`interrupted` with any other reason, `stopped`);
- interrupted — its Vigil process ended before it did (a crash, a kill: the store marks such sessions on its
  next opening, a fleet whose process is gone reads so too);
- waiting for a browser — a run whose grid queued its session request (every slot busy), not a timeout;
- queued, running, waiting for you, idle (a window's session that has not run), finished (a fleet whose runs
  all ended)."""

from __future__ import annotations

WORDS: dict[str, str] = {
    "queued": "queued",
    "running": "running",
    "waiting": "waiting for you",
    "done": "done",
    "success": "done",
    "failed": "failed",
    "error": "failed",
    "stopped": "stopped",
    "interrupted": "stopped",
    "idle": "idle",
    "finished": "finished",
    "browser": "waiting for a browser",
}
WAITING_BROWSER = WORDS["browser"]
PROCESS_ENDED = "ended before the run finished"   # the store's reason for a session whose process died


def status_word(status: str, reason: str | None = None, *, process_gone: bool = False) -> str:
    """The word for `status` (a run's state, a session's or a fleet's status). `reason` or `process_gone` tell
    a session or fleet cut short by its process's end ("interrupted") from one a person stopped ("stopped")."""
    if status == "interrupted" and (process_gone or PROCESS_ENDED in (reason or "")):
        return "interrupted"
    return WORDS.get(status, status)
