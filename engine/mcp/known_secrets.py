"""The secret values typed since an MCP server started, kept in memory only across every browser and
run it had, and scrubbed from every text result it sends."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.secret_values import scrub


class KnownSecrets:
    """What was typed into secret fields, gathered from `sources` (the values the current browser and run
    hold) and kept after they are gone."""

    def __init__(self, sources: Callable[[], Iterable[Iterable[str]]]):
        self._sources = sources
        self._values: set[str] = set()

    @property
    def kept(self) -> frozenset[str]:
        """The values gathered so far (without asking the sources again)."""
        return frozenset(self._values)

    def gather(self) -> frozenset[str]:
        """Every value known now: those kept, and those the sources hold (kept from now on)."""
        for values in self._sources():
            self._values |= set(values)
        return frozenset(self._values)

    def scrub(self, text: str) -> str:
        """`text` without any typed secret: in every form, and any of its prefixes of 4 characters or more
        wherever it appears (the engine types key by key, so a page that echoes the field shows every prefix)."""
        return scrub(text, self.gather(), any_prefix=True)
