"""One registry idiom for everything the toolkit finds by name: tests, tasks, metrics, protocols.

A :class:`Registry` is a typed, ordered name -> thing table with the manners every registry
shares (modelled on spaCy's catalogue registries, written here):

* ``register(name)`` is a decorator, ``register(name, thing)`` a call; a name (or alias) can be
  registered once, so two providers never silently shadow each other.
* ``get(name)`` reads a name or alias (normalised the registry's way) and raises one clear
  :class:`UnknownNameError` naming the valid names, with "did you mean" (:mod:`blindspot.suggest`).
* It reads like a dict (``reg[name]``, ``name in reg``, iteration, ``items()``), so callers that
  knew the old plain dicts keep working.
* It is filled at one place: on its first read a registry asks :func:`blindspot.catalog.fill` to
  import the modules that provide its kind, so it is never half-filled by whatever happened to be
  imported before, and its order is the catalogue's, not the import order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar, overload

from blindspot import catalog
from blindspot.suggest import did_you_mean

T = TypeVar("T")
_MISSING: Any = object()


class UnknownNameError(ValueError, KeyError):
    """A name no registry entry has: a ValueError for callers that report bad input, a KeyError
    for dict-style callers; its text is the message itself (not KeyError's quoted repr)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def exact(name: str) -> str:
    """Names compared as given (metrics: ``bleu`` and ``BLEU`` are not the same option key)."""
    return name


def lowercase(name: str) -> str:
    """Names compared without case and surrounding blanks (protocols)."""
    return name.strip().lower()


def snake(name: str) -> str:
    """Names compared as lower snake case: ``Word-Swap``, ``word swap`` and ``word_swap`` agree."""
    return lowercase(name).replace("-", "_").replace(" ", "_")


def _module(thing: object) -> str:
    """The module that defines ``thing`` (a class or function), or its class's module."""
    return getattr(thing, "__module__", None) or type(thing).__module__


class Registry(Generic[T]):
    """Named things of one kind ("test", "metric", "protocol"...), in registration order.

    ``normalise`` maps what a user typed to the key compared with names and aliases; ``plural`` is
    the kind's plural in messages ("valid tests: ...").
    """

    def __init__(self, kind: str, *, plural: str | None = None,
                 normalise: Callable[[str], str] = exact) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self._normalise = normalise
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._filled = False

    # -- filling ---------------------------------------------------------------------------------

    @overload
    def register(self, name: str, thing: None = None, *,
                 aliases: Iterable[str] = ()) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, thing: T, *, aliases: Iterable[str] = ()) -> T: ...

    def register(self, name: str, thing: T | None = None, *,
                 aliases: Iterable[str] = ()) -> T | Callable[[T], T]:
        """Add ``thing`` under ``name`` (and ``aliases``); without ``thing``, a decorator that does.

        A name or alias already taken by another entry is refused with a ValueError. Registering
        does not fill the registry (a provider registers while the catalogue imports it): an entry
        registered before the first read that takes a provider's name fails that provider's
        import, with the same message."""
        if thing is None:
            def decorate(obj: T) -> T:
                return self.register(name, obj, aliases=aliases)
            return decorate
        keys = {self._normalise(n) for n in (name, *aliases)}
        taken = sorted(k for k in keys if k in self._aliases or k in self._entries)
        if name in self._entries or taken:
            owner = self._aliases.get(taken[0], name) if taken else name
            raise ValueError(f"{self.kind} {name!r} cannot be registered: "
                             f"{(taken or [name])[0]!r} already names the {self.kind} {owner!r}")
        self._entries[name] = thing
        for key in keys:
            self._aliases[key] = name
        return thing

    def unregister(self, name: str) -> T:
        """Remove the entry ``name`` and its aliases (tests that register a throwaway entry)."""
        thing = self._entries.pop(name)
        for key in [k for k, v in self._aliases.items() if v == name]:
            del self._aliases[key]
        return thing

    def _read(self) -> dict[str, T]:
        """The entries, the kind's providers imported first (once)."""
        if not self._filled:
            self._filled = True  # before filling: a provider reading its registry while it loads
            order = {module: i for i, module in enumerate(catalog.fill(self.kind))}
            # catalogue order, whichever provider the caller happened to import first; entries
            # of other modules (registered at run time) after them, as registered
            self._entries = dict(sorted(self._entries.items(),
                                        key=lambda item: order.get(_module(item[1]), len(order))))
        return self._entries

    # -- reading ---------------------------------------------------------------------------------

    def canonical(self, name: str, *, others: Iterable[str] = (), note: str = "") -> str:
        """The registered name of ``name`` or one of its aliases.

        An unknown name raises :class:`UnknownNameError` listing the valid names; ``others``
        are other names the caller also accepts (suites...), suggested too, and ``note`` is
        added after the list (e.g. "; suites: fluency, ...")."""
        entries = self._read()
        key = self._aliases.get(self._normalise(str(name)))
        if key is None:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}; valid {self.plural}: "
                f"{', '.join(sorted(entries))}{note}"
                f"{did_you_mean(str(name), [*others, *entries, *self._aliases])}")
        return key

    def get(self, name: str, default: Any = _MISSING) -> T:
        """The entry called ``name`` (or an alias of it). Unknown: ``default`` when one is given
        (as ``dict.get``), else :class:`UnknownNameError` with the valid names."""
        if default is not _MISSING:
            entries = self._read()
            key = self._aliases.get(self._normalise(str(name)))
            return entries[key] if key is not None else default
        return self._entries[self.canonical(name)]

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._read())

    def __getitem__(self, name: str) -> T:
        entries = self._read()
        if name in entries:
            return entries[name]
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._read()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._read()))

    def __len__(self) -> int:
        return len(self._read())

    def keys(self) -> list[str]:
        return list(self._read())

    def values(self) -> list[T]:
        return list(self._read().values())

    def items(self) -> list[tuple[str, T]]:
        return list(self._read().items())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"
