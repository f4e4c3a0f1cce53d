"""TorchRL's own spec tests, run through spacealg: every spec a test builds must obey the adapter's laws.

    python benchmarks/torchrl_spec_suite.py PATH/TO/test_specs.py [extra pytest arguments]

``PATH/TO/test_specs.py`` is TorchRL's ``test/test_specs.py`` of the installed TorchRL's
release (docs/adapters.md says how to get it); nothing is copied or downloaded here. The
script runs it with pytest and this module as a plugin, which wraps the ``__init__`` of
every TorchRL spec class: each spec a test builds (in its body, its fixtures or its
parameters) is recorded, and after the test passed on its own, :func:`laws` is checked on
each one (:data:`CHECKED` keeps the verdicts of specs seen before). A test passes when
TorchRL's assertions pass *and* spacealg agrees on all its specs; it fails otherwise, with
the broken laws listed, each under a category (``[category] message``). The run ends with
``N passed of M`` (``M``: the tests that ran; skipped ones are not counted) and the failures
per category.

The laws (the adapter's, spacealg/adapters/torchrl.py), for a spec ``s`` and ``space =
from_torchrl(s)``:

* ``convert``: ``from_torchrl(s)`` is a space (a TypeError is the category ``no-equal``);
* ``round-trip``: ``to_torchrl(space, s.device, batch_shape=..., one_hot=...) == s``, or a
  documented rename (:data:`RENAMES`) of the same set; and ``from_torchrl`` of it is ``space``;
* ``torchrl-draws``: ``s.rand()`` (where TorchRL can draw) is in ``s`` for spacealg exactly
  when ``s.is_in`` says so, for values of the spec's shape; a value of another shape is in
  no spec (``contains`` is strict: TorchRL's ``is_in`` broadcasts);
* ``our-draws``: ``sample(space)`` and ``sample(s)`` pass ``s.is_in``;
* ``edges``: on values near the edges of the set (the bounds, one step beyond them, all
  zeros and all ones), ``contains`` on the spec and on ``space`` agree with ``s.is_in``.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torchrl.data as td

import spacealg as sa
from spacealg.adapters.torchrl import from_torchrl, from_torchrl_value, to_torchrl, to_torchrl_value

#: (the spec's class, the class the table picks) for the sets with two TorchRL names
RENAMES = {
    (td.Bounded, td.Binary), (td.Bounded, td.Unbounded), (td.Bounded, td.Categorical),
    (td.Binary, td.Categorical), (td.Unbounded, td.Categorical), (td.MultiCategorical, td.Categorical),
    (td.Binary, td.Bounded),
}

CHECKED: dict[Any, tuple[str, ...]] = {}
"""Verdicts by spec (:func:`_key`): the problems found, empty when the laws hold."""


class DisagreementError(AssertionError):
    """spacealg disagrees with TorchRL on a spec the test built."""


# -- the laws on one spec -----------------------------------------------------------------------


def _leaf_is_in(spec: Any, value: Any) -> bool:
    try:
        return bool(spec.is_in(value))
    except Exception:
        return False


def _fits(shape: Any, spec: Any) -> bool:
    return len(shape) == len(spec.shape) and all(d == s or s < 0 for d, s in zip(shape, spec.shape))


def _has_nan(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point() and bool(torch.isnan(value).any())
    return any(_has_nan(value[k]) for k in value.keys()) if hasattr(value, "keys") else False  # noqa: SIM118


def _one_hot(spec: Any, value: torch.Tensor) -> bool:
    """The definition, by brute force: entries 0 or 1, one 1 per block, on allowed positions."""
    v = value.detach().cpu().double().numpy()
    if not np.isin(v, (0.0, 1.0)).all():
        return False
    sizes = [int(b.n) for b in spec.space.boxes] if isinstance(spec, td.MultiOneHot) else [int(spec.space.n)]
    ends = np.cumsum([0, *sizes])
    if any((v[..., a:b].sum(-1) != 1).any() for a, b in itertools.pairwise(ends)):
        return False
    mask = getattr(spec, "mask", None)
    return mask is None or not ((v == 1) & ~np.broadcast_to(mask.cpu().numpy(), v.shape)).any()


def _expected(spec: Any, value: Any) -> bool:
    """Membership as the adapter states it: ``is_in``, for a value of the spec's shape that
    the set holds (free of NaN; one-hot where the spec is)."""
    if isinstance(value, torch.Tensor) and not _fits(tuple(value.shape), spec):
        return False
    if isinstance(value, torch.Tensor) and isinstance(spec, (td.OneHot, td.MultiOneHot)) and not _one_hot(spec, value):
        return False
    return not _has_nan(value) and _leaf_is_in(spec, value)


def _back(space: Any, spec: Any) -> Any:
    one_hot = isinstance(spec, (td.OneHot, td.MultiOneHot))
    shape = spec.shape if isinstance(spec, td.Composite) else ()
    return to_torchrl(space, spec.device, batch_shape=shape, one_hot=one_hot)


def _entries(spec: Any) -> list[str]:
    """A ``Composite``'s keys but those of ``None`` entries (placeholders, which the table leaves out)."""
    return [k for k, v in spec.items() if v is not None]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, td.Composite):
        return (type(a) is type(b) and _entries(a) == _entries(b) and a.shape == b.shape
                and a.device == b.device and all(_same(a[k], b[k]) for k in _entries(a)))
    return type(a) is type(b) and bool(a == b) and a.dtype == b.dtype and a.device == b.device


def _renamed(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` under another TorchRL name the table documents (entry by entry)."""
    if isinstance(a, td.Composite):
        return (isinstance(b, td.Composite) and _entries(a) == _entries(b)
                and all(_same(a[k], b[k]) or _renamed(a[k], b[k]) for k in _entries(a)))
    if tuple(a.shape) != tuple(b.shape):
        return False
    empty = isinstance(a, td.Categorical) and type(a) is type(b) and 0 in tuple(a.shape)  # n is no part of its set
    return empty or any(isinstance(a, x) and isinstance(b, y) for x, y in RENAMES)


def _leaves(spec: Any) -> Iterator[Any]:
    if isinstance(spec, td.Composite):
        for entry in spec.values():
            if entry is not None:
                yield from _leaves(entry)
    else:
        yield spec


def _edges(spec: Any, space: Any, member: np.ndarray) -> Iterator[np.ndarray]:
    """Values of ``member``'s shape and dtype near the edges of the set."""
    dtype = member.dtype
    yield np.zeros_like(member)
    yield np.ones_like(member)
    try:
        low, high = (np.broadcast_to(np.asarray(b), member.shape) for b in sa.bounds(space))
    except (TypeError, ValueError):
        return
    for end, outward in ((low, -1), (high, 1)):
        if dtype.kind == "b":
            continue
        yield end.astype(dtype)
        if dtype.kind == "f":
            with np.errstate(over="ignore"):  # beyond the largest float: inf, dropped below
                beyond = np.nextafter(end.astype(dtype), np.array(outward * np.inf, dtype))
        else:
            info = np.iinfo(dtype)
            wide = np.asarray(end.astype(object) + outward)
            if any(v < info.min or v > info.max for v in wide.reshape(-1)):
                continue
            beyond = wide.astype(dtype)
        for value in (beyond, np.where(np.arange(member.size).reshape(member.shape) == 0, beyond, member)):
            if np.isfinite(value.astype(np.float64)).all():
                yield value.astype(dtype)


def laws(spec: Any, seeds: tuple[int, ...] = (0, 1)) -> list[str]:
    """The adapter's laws broken by ``spec``, each ``"[category] message"`` (see the module)."""
    try:
        space = sa.as_space(spec)  # from_torchrl(spec), once per spec (sample(spec) reads the same)
    except TypeError as error:
        return [f"[no-equal] {error}"]
    except Exception as error:
        return [f"[convert] from_torchrl raised {type(error).__name__}: {error}"]
    problems = []
    try:
        back = _back(space, spec)
        if not (_same(back, spec) or _renamed(spec, back)):
            problems.append(f"[round-trip] {spec!r} came back as {back!r}")
        elif from_torchrl(back) != space:
            problems.append(f"[round-trip] from_torchrl(to_torchrl({space!r})) is {from_torchrl(back)!r}")
    except TypeError as error:
        problems.append(f"[round-trip] to_torchrl raised: {error}")
    try:
        drawn = spec.rand()
    except Exception:  # TorchRL cannot draw (a -1 OneHot, an empty mask...): nothing to compare
        drawn = None
    if drawn is not None:
        inside = _expected(spec, drawn)
        if sa.contains(drawn, spec) != inside:
            problems.append(f"[torchrl-draws] contains(spec.rand(), spec) != {inside} for {drawn!r}")
        if inside and not sa.contains(from_torchrl_value(drawn, spec), space):
            problems.append(f"[torchrl-draws] spec.rand() = {drawn!r} is not in {space!r}")
    for seed in seeds:
        try:
            ours = sa.sample(spec, rng=seed)
        except Exception as error:
            problems.append(f"[our-draws] sample raised {type(error).__name__}: {error}")
            break
        if not _leaf_is_in(spec, ours):
            problems.append(f"[our-draws] sample(spec) = {ours!r} fails spec.is_in")
        value = to_torchrl_value(sa.sample(space, rng=seed), spec)
        if not _leaf_is_in(spec, value):
            problems.append(f"[our-draws] sample(from_torchrl(spec)) = {value!r} fails spec.is_in")
    problems += [p for leaf in _leaves(spec) if leaf is not spec for p in _edge_laws(leaf)]
    if not isinstance(spec, td.Composite):
        problems += _edge_laws(spec, space)
    return problems


def _edge_laws(spec: Any, space: Any = None) -> list[str]:
    try:
        space = sa.as_space(spec) if space is None else space
        member = from_torchrl_value(to_torchrl_value(sa.sample(space, rng=0), spec), spec)
    except Exception as error:
        return [f"[edges] no member to start from: {type(error).__name__}: {error}"]
    problems = []
    for value in _edges(spec, space, np.asarray(member)):
        tensor = torch.as_tensor(value, device=spec.device)
        inside = _expected(spec, tensor)
        if sa.contains(tensor, spec) != inside or sa.contains(from_torchrl_value(tensor, spec), space) != inside:
            problems.append(f"[edges] is_in = {inside} but contains disagrees on {value!r}")
    return problems


def _checked(spec: Any) -> list[str]:
    try:
        return laws(spec)
    except Exception as error:  # spacealg (or TorchRL, under spacealg's calls) raised
        return [f"[error] {type(error).__name__}: {error}"]


# -- the plugin: record every spec a test builds ------------------------------------------------


class Recorder(threading.local):
    depth = 0
    specs: list[Any] | None = None
    paused = False


RECORDER = Recorder()


def _wrap(cls: type) -> None:
    init = cls.__dict__["__init__"]

    def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
        RECORDER.depth += 1
        try:
            init(self, *args, **kwargs)
        finally:
            RECORDER.depth -= 1
        if RECORDER.depth == 0 and RECORDER.specs is not None and not RECORDER.paused:
            RECORDER.specs.append(self)

    recording_init.__wrapped__ = init  # type: ignore[attr-defined]
    cls.__init__ = recording_init  # type: ignore[misc]


def _spec_classes() -> Iterator[type]:
    seen, todo = set(), [td.TensorSpec]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo.extend(cls.__subclasses__())
            yield cls


def _tensor_key(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        return repr(value)
    host = value.detach().cpu()
    if host.dtype == torch.bfloat16:
        host = host.float()
    data = host.contiguous().numpy()
    return (tuple(host.shape), str(value.dtype), hashlib.sha1(data.tobytes()).hexdigest())


def _key(spec: Any) -> Any:
    """What decides the laws' verdict on ``spec``: its class, shape, dtype, device and data."""
    if isinstance(spec, td.Composite):
        entries = tuple((k, None if v is None else _key(v)) for k, v in spec.items())
        return (type(spec), tuple(spec.shape), str(spec.device), entries)
    space = getattr(spec, "space", None)
    data = tuple(_tensor_key(getattr(space, name, None)) for name in ("low", "high", "n"))
    boxes = tuple(int(b.n) for b in getattr(space, "boxes", ()))
    extra = tuple(_tensor_key(getattr(spec, name, None)) for name in ("nvec", "mask"))
    return (type(spec), tuple(spec.shape), str(spec.dtype), str(spec.device), data, boxes, extra)


def _in(value: Any) -> Iterator[Any]:
    if isinstance(value, td.TensorSpec):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _in(item)


class SpecLaws:
    """The pytest plugin (see the module)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}
        self.categories: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, str] = {}
        self.failures: list[str] = []
        for cls in list(_spec_classes()):
            if "__init__" in cls.__dict__:
                _wrap(cls)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: Any) -> Any:
        RECORDER.specs = []
        try:
            result = yield
        finally:
            built, RECORDER.specs = RECORDER.specs, None
        specs = [s for v in item.funcargs.values() for s in _in(v)] + built
        problems: list[str] = []
        RECORDER.paused = True
        try:
            seen = set()
            for spec in specs:
                if id(spec) in seen:
                    continue
                seen.add(id(spec))
                try:
                    key = _key(spec)
                except Exception:  # a spec the test left broken (TorchRL cannot read it)
                    continue
                if key not in CHECKED:
                    CHECKED[key] = tuple(_checked(spec))
                problems += [" ".join(p.split())[:600] for p in CHECKED[key]]
        finally:
            RECORDER.paused = False
        if problems:
            raise DisagreementError("spacealg disagrees with TorchRL:\n" + "\n".join(dict.fromkeys(problems)))
        return result

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            if report.nodeid in self.outcomes and self.outcomes[report.nodeid] != "passed":
                return
            self.outcomes[report.nodeid] = report.outcome
            if report.outcome == "failed":
                self.failures.append(f"{report.nodeid}\n{report.longrepr}")
                for category, example in _categories(report).items():
                    self.categories[category] += 1
                    self.examples.setdefault(category, f"{report.nodeid}: {example}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        counts = collections.Counter(self.outcomes.values())
        ran = counts["passed"] + counts["failed"]
        terminalreporter.write_line(f"torchrl_spec_suite: {counts['passed']} passed of {ran} "
                                    f"({counts['skipped']} skipped); failing tests per broken law:")
        for category, n in self.categories.most_common():
            terminalreporter.write_line(f"  {n:5d}  {category}    e.g. {self.examples[category][:600]}")
        where = os.environ.get("SPEC_SUITE_FAILURES")
        if where:  # every failure in full, for reading the categories
            Path(where).write_text("\n\n".join(self.failures))


def _categories(report: Any) -> dict[str, str]:
    """The categories of a failed test's broken laws, each with its first message."""
    text = str(report.longrepr)
    if "spacealg disagrees with TorchRL" not in text:
        return {"torchrl: the test itself fails": text.splitlines()[-1] if text else ""}
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.lstrip("E").strip()
        if line.startswith("["):
            found.setdefault(line[1 : line.index("]")], line)
    return found


def main(argv: list[str]) -> int:
    if not argv or not argv[0].endswith(".py"):
        print(__doc__)
        return 2
    arguments = [argv[0], "-p", "no:cacheprovider", "-o", "addopts=", "-q", "--rootdir", str(_parent(argv[0])),
                 *argv[1:]]
    return int(pytest.main(arguments, plugins=[SpecLaws()]))


def _parent(path: str) -> Any:
    return Path(path).resolve().parent


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
