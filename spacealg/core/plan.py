"""One plan per space: what spacealg derives from a space, decided once and kept in one place.

>>> import numpy as np
>>> import spacealg as sa
>>> from spacealg.core.plan import plan_for
>>> s = sa.DictProduct(pos=sa.Box(-1.0, 1.0, shape=(2,)), dir=range(4))
>>> plan = plan_for(s)
>>> plan is plan_for(s), plan.structure
(True, {'pos': 0, 'dir': 1})
>>> plan.join(plan.split({"pos": np.zeros((3, 2)), "dir": np.arange(3)}))["dir"]
array([0, 1, 2])

Flattening (:mod:`spacealg.ops.flatten`), emulation (:mod:`spacealg.emulation`: layouts,
codecs and the guard's checked writers) and the torch/JAX operations
(:mod:`spacealg.backends`) all start from the same things: the space's products walked
down to its leaves, functions taking a batch apart into its leaf arrays and putting it
together, and code compiled for it. A :class:`Plan` holds them, one per space, kept in
the package's one cache (:class:`~spacealg.core.cache.IdentityCache`, keyed by the
space's identity):

* ``structure``: the space's products as nested tuples (``TupleProduct``) and dicts
  (``DictProduct``) whose leaves are the positions of its leaf spaces, depth first (one
  walk, :func:`walk`; a product is what :func:`components` gives parts for);
* ``split(batch)``: the batch's leaf values as a tuple, depth first, or None when the
  batch does not have the structure (generated code, :mod:`spacealg.core.codegen`);
  ``join(parts)``: the inverse;
* ``tree``: the structure with :class:`~spacealg.core.leaf.LeafModel` leaves, for batches
  of stacked numbers (:func:`array_leaf`; built on first use: a space with object batches
  has a plan, but no tree);
* ``variants``: what each operation compiles for the space, keyed by ``(operation,
  backend, device, dtypes)`` (as the operation spells them; the flat codec, looked up on
  every ``flatten``, by its operation's name alone, ``"flat_codec"``): the NumPy flat
  codec, the emulation layouts and codecs per role and the guard's writers
  (``"emulation ..."``), kept as long as the plan; and the torch/JAX kernels, at most
  :data:`MAX_VARIANTS` per plan, first in, first out.

Laws: ``plan.split(plan.join(parts)) == parts`` and ``plan.join(plan.split(b))`` has
``b``'s structure; ``plan_for(s) is plan_for(s)`` while ``s`` lives (two spaces never share
a plan: identity keys); a plan holds its space weakly, so its entry is dropped with the
space (unless a variant refers to the space: a leaf tree's models and an emulation codec
do, and such entries live until the cache's bounds evict them); its weight is measured
again, device constants included, whenever a variant is added. A plain ``dict``/``list``
standing for a space gets a fresh plan each call (its content can change): it walks
instead of compiling.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_implementation, kind_rule, numpy_entry, on_kind_rule
from spacealg.core.cache import IdentityCache, footprint
from spacealg.core.codegen import Generator
from spacealg.core.generic import GenericFunction, as_space, generic, load_adapters_for
from spacealg.core.kernel import NUMPY, kernel_for, numpy_kernel
from spacealg.core.leaf import LeafModel, Members, leaf
from spacealg.core.rng import as_generator

__all__ = ["KEPT", "MAX_VARIANTS", "ObjectBatchError", "Plan", "array_leaf", "components", "forget_routes",
           "interned", "kept_plan", "map_tree", "plan_for", "route", "tree_values", "variant_of", "walk"]

#: Compiled torch/JAX variants kept per plan (first in, first out): a space meets few dtypes and devices.
MAX_VARIANTS = 32
#: The operations whose variants (NumPy's codecs and functions, one per role at most) are kept
#: as long as the plan.
KEPT = frozenset({"flat_codec", "emulation layout", "emulation codec", "emulation guard", "numpy_draw",
                  "numpy_isin", "as_space", "leaf_model"})


# -- the walk: products down to their leaves ---------------------------------------------


@generic(0)
def components(space: Any) -> tuple[Any, ...] | dict[Any, Any] | None:
    """The parts of a product space: a tuple of spaces (``TupleProduct``), a mapping of
    spaces (``DictProduct``); None for any other space (a leaf, or a kind with parts of
    its own such as OneOf). Registered by the product kinds (Gymnasium's and Gym's Tuple and
    Dict by their adapters: their own parts, whose leaves keep their dtypes); other plain objects go
    through :func:`~spacealg.core.generic.as_space` (TypeError for an object that is no space)."""
    if load_adapters_for(space):  # the adapter just loaded may register the class's own parts (as coerce does)
        return components(space)
    converted = as_space(space)
    return None if converted is space else components(converted)


def walk(space: Any, leaves: list[Any]) -> Any:
    """The structure of ``space`` (see the module), appending its leaf spaces to ``leaves``."""
    parts = components(space)
    if parts is None:
        leaves.append(space)
        return len(leaves) - 1
    if isinstance(parts, tuple):
        return tuple(walk(part, leaves) for part in parts)
    return {key: walk(part, leaves) for key, part in parts.items()}


class ObjectBatchError(TypeError):
    """A space whose batches are object arrays met an operation on stacked numbers (torch/JAX)."""


def array_leaf(space: Any) -> LeafModel:
    """The leaf model of a space whose batches are one stacked array of numbers.

    Raises :class:`ObjectBatchError` (a TypeError) naming the kind for a space whose batches
    are object arrays, TypeError for one whose integers lie beyond int64; ValueError for an
    empty space.
    """
    model = leaf(space)
    if model is None or model.members is Members.LABELS:
        kind = type(space).__qualname__
        what = "FiniteSet of labels" if model is not None else f"{kind} batches are object arrays (not numbers)"
        raise ObjectBatchError(
            f"{what}: their batches are object/str arrays, which torch and JAX cannot hold: {space!r}"
            + (" (use its index, spacealg.index, as an integer encoding)" if model is not None else "")
        )
    if model.members is Members.NUMBERS and not len(model.numbers):  # type: ignore[arg-type]
        raise ValueError(f"{space!r} is empty")
    if model.members is Members.INTEGERS and model.size:
        if (model.value_low > model.value_high).any():
            raise ValueError(f"{space!r} is empty")
        if model.value_low.dtype.kind == "O" or model.value_high.dtype.kind == "O":
            low, high = int(model.value_low.min()), int(model.value_high.max())
            if low < -(2**63) or high >= 2**64 or (low < 0 and high >= 2**63):
                raise TypeError(f"{space!r} has integers beyond int64, which torch and JAX cannot hold")
    return model


def map_tree(function: Callable[..., Any], tree: Any, *batches: Any, what: str = "batch") -> Any:
    """``function(leaf, *leaf_batches)`` over a tree (a structure, or a tree of leaf models)
    and batches of the same structure.

    Raises ValueError naming ``what`` when a batch does not have the tree's structure.
    """
    if isinstance(tree, tuple):
        for b in batches:
            if not isinstance(b, (tuple, list)) or len(b) != len(tree):
                raise ValueError(f"{what}: a batch of a TupleProduct is a tuple of {len(tree)} component batches")
        return tuple(map_tree(function, t, *(b[i] for b in batches), what=what) for i, t in enumerate(tree))
    if isinstance(tree, dict):
        for b in batches:
            if not isinstance(b, dict) or set(b) != set(tree):
                raise ValueError(f"{what}: a batch of a DictProduct is a dict with the keys {list(tree)}")
        return {k: map_tree(function, t, *(b[k] for b in batches), what=what) for k, t in tree.items()}
    return function(tree, *batches)


def tree_values(tree: Any) -> list[Any]:
    """The leaves of a tree (tuples and dicts of leaves or arrays), depth first."""
    if isinstance(tree, tuple):
        return [v for part in tree for v in tree_values(part)]
    if isinstance(tree, dict):
        return [v for part in tree.values() for v in tree_values(part)]
    return [tree]


# -- the plan --------------------------------------------------------------------------------


class Plan:
    """The structure of one space, its generated ``split``/``join``, its leaf tree and its variants.

    A variant keyed by a str (an operation's name) is also the plan's attribute of that name:
    ``plan.flat_codec`` is read on every ``flatten`` (an attribute costs half a dict lookup).
    """

    flat_codec: Any = None
    #: NumPy's draw of a leaf space and its scalar type (``spacealg.backends.host``): one
    #: attribute read on every ``sample`` (the plan's variants by key took four lookups: a
    #: sample of one Box(16) cost 9.3 us that way against 7.3 us read as an attribute)
    numpy_draw: Any = None
    #: NumPy's membership tests of a leaf space, by batch dtype (``spacealg.backends.host``)
    numpy_isin: Any = None
    #: the leaf model of a leaf space (its scalar ``contains``: ``spacealg.spaces._kind.leaf_model``)
    leaf_model: Any = None

    def __init__(self, space: Any) -> None:
        try:
            self._space: Callable[[], Any] = weakref.ref(space)
        except TypeError:  # a range or tuple: the cache holds it anyway
            self._space = functools.partial(_itself, space)
        self.kept = not isinstance(space, (dict, list, set))
        self.variants: dict[Any, Any] = {}
        #: (operation, backend) -> what serves the space's calls there (:func:`route`)
        self.routes: dict[tuple[Any, str], Callable[..., Any]] = {}

    @functools.cached_property
    def structure(self) -> Any:
        """The space's products down to its leaves (see the module), walked on first use."""
        return walk(self.space, [])

    @property
    def space(self) -> Any:
        """The space of this plan (ReferenceError once it has been collected)."""
        space = self._space()
        if space is None:
            raise ReferenceError("the space of this plan has been collected")
        return space

    def leaf_spaces(self) -> list[Any]:
        """The leaf spaces, depth first (walked again: a plan does not hold them)."""
        leaves: list[Any] = []
        walk(self.space, leaves)
        return leaves

    @functools.cached_property
    def tree(self) -> Any:
        """The structure with the leaves' :func:`array_leaf` models (ObjectBatchError where a
        leaf's batches are object arrays)."""
        models = [array_leaf(s) for s in self.leaf_spaces()]
        return map_tree(models.__getitem__, self.structure)

    @functools.cached_property
    def leaves(self) -> list[LeafModel]:
        """The leaf models of :attr:`tree`, depth first."""
        return tree_values(self.tree)  # type: ignore[no-any-return]

    @functools.cached_property
    def _pair(self) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
        return _structure(self.structure, self._space()) if self.kept else _walkers(self.structure)

    @functools.cached_property
    def split(self) -> Callable[[Any], tuple[Any, ...] | None]:
        """``split(batch)``: the leaf values of ``batch``, depth first; None for another structure."""
        return self._pair[0]

    @functools.cached_property
    def join(self) -> Callable[[Any], Any]:
        """``join(parts)``: the batch (or member) of the structure holding the leaf values ``parts``."""
        return self._pair[1]

    def check(self, batch: Any, what: str) -> tuple[Any, ...]:
        """``split(batch)``; ValueError naming ``what`` when the structure is not the tree's."""
        parts = self.split(batch)
        if parts is None:
            map_tree(_nothing, self.structure, batch, what=what)  # raises the message naming the structure
            raise ValueError(f"{what}: the batch does not have the structure of the space")
        return parts

    def variant(self, key: Any, build: Callable[[], Any]) -> Any:
        """The variant ``build()`` kept under ``key`` (``(operation, backend, device, dtypes)``),
        built on first use. A new variant re-weighs the plan's cache entry (its device
        constants included), so the cache's byte bound holds what plans keep; past
        :data:`MAX_VARIANTS`, the oldest variant of an operation not in :data:`KEPT` goes."""
        made = self.variants.get(key)
        if made is None:
            made = build()
            variants = self.variants
            if len(variants) >= MAX_VARIANTS:
                old = next((k for k in variants if (k if isinstance(k, str) else k[0]) not in KEPT), None)
                if old is not None:
                    del variants[old]
            variants[key] = made
            if isinstance(key, str):
                setattr(self, key, made)
            self._reweigh()
        return made

    def _reweigh(self) -> None:
        """Keeps this plan's cache entry weighed as it is now (dropped if it outgrew the bound)."""
        space = self._space()
        if space is not None and _PLANS.get(space) is self:
            _PLANS.put(space, self)

    def __repr__(self) -> str:
        return f"<Plan of {len(tree_values(self.structure))} leaves, {len(self.variants)} variants>"


def _itself(space: Any) -> Any:
    return space


def _nothing(*args: Any) -> None:
    return None


def _weigh(plan: Any) -> int:
    """The plan's footprint, each variant weighed as a value of its own (as deep as a cache
    weighs its values), plus the bytes of the device constants its leaves keep."""
    if not isinstance(plan, Plan):
        return footprint(plan)
    extra = sum(footprint(made) for made in plan.variants.values())
    for model in plan.__dict__.get("leaves", ()):
        for value in model.cache.values():
            for item in value if isinstance(value, tuple) else (value,):
                if not isinstance(item, np.ndarray):
                    extra += int(getattr(item, "nbytes", 0) or 0)
    skip = ("variants", "routes")
    return footprint({k: v for k, v in vars(plan).items() if k not in skip and k not in plan.variants}) + extra


_PLANS: IdentityCache[Plan] = IdentityCache("plans", max_entries=4096, weigh=lambda p: _weigh(p))
kept_plan = _PLANS.get
"""``kept_plan(space)``: the plan kept for ``space``, or None (the hot path: one dict lookup)."""


_RANGES: IdentityCache[range] = IdentityCache("ranges", max_entries=4096, by_value=True)


def interned(space: Any) -> Any:
    """The one kept range equal to the range ``space`` (any other space: itself). A range has
    no weak reference and ``range(3)`` written in a call is a new object each time, so plans
    are kept for one range per value: a literal range finds its plan instead of making one
    per call (``isin(b, range(0, 1000, 3))`` 36 us, 0.7 ms without)."""
    if type(space) is not range:
        return space
    kept = _RANGES.get(space)
    return kept if kept is not None else _RANGES.put(space, space)


def plan_for(space: Any, name: str | None = None, what: str | None = None) -> Plan:
    """The plan of ``space``, kept under the package's one cache rule (a range's: of the
    range :func:`interned` keeps for its value).

    With ``name`` (a backend) and ``what`` (an operation), the plan's :attr:`~Plan.tree` is
    built too: a kind with object batches raises TypeError naming the kind, the operation
    and the backend. TypeError for an object that is no space.
    """
    plan = _PLANS.get(space)
    if plan is None:
        space = interned(space)
        plan = _PLANS.get(space)
        if plan is None:
            plan = _PLANS.put(space, Plan(space))
    if name is not None and "tree" not in plan.__dict__:
        try:
            plan.tree  # noqa: B018 - built (and checked) here, kept in the plan
        except ObjectBatchError as error:
            raise TypeError(f"{what} on {name}: {error}") from None
        plan._reweigh()
    return plan


def variant_of(space: Any, key: Any, build: Callable[[Any], Any]) -> Any:
    """The variant ``key`` of ``space``'s plan, ``build(space)`` on first use: the hot path
    is one lookup of the kept plan and one of its variant; ``build`` runs before a plan is
    made, so an object that is no space (its TypeError) leaves no plan behind."""
    plan = _PLANS.get(space)
    if plan is not None:
        made = plan.variants.get(key)
        if made is not None:
            return made
    made = build(space)
    return plan_for(space).variant(key, lambda: made)


# -- the one route: a batched call on any backend's data, from the space's plan to its rule ------------


def route(function: Any, name: str, space: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``function(*args, **kwargs)`` (a routed protocol function, ``flatten_batch`` or
    ``unflatten_batch``) answered for backend ``name``'s data (``"numpy"``: NumPy arrays and
    Python values) by what serves ``space`` there, chosen once and kept in the space's plan:

    * on torch and JAX, the kind's own rule over the backend's kernel
      (:func:`~spacealg.core.arrays.register_kind_rule`), the space's own implementation where it
      takes foreign arrays itself (``serves_arrays``: TorchRL's ``is_in``), else the backend's
      implementation of the function (:func:`~spacealg.core.arrays.register_backend`: the plan
      compiled from the space's leaf models);
    * on NumPy, the kind's NumPy entry (registered with its rule), else the class's own
      implementation of the protocol function, else the kind's rule over NumPy's kernel, else
      the function's NumPy implementation (the protocol's fallback, which converts a plain
      object or Gymnasium space with :func:`~spacealg.core.generic.as_space`; the flat codec).

    Law: ``route(f, b, s, args, kwargs)`` is what the chosen implementation gives; it is chosen
    once per plan, operation and backend (one dict lookup per call after the first), and kept
    once it has answered a call (an object that is no space gets no plan). An implementation
    with a ``bind`` attribute is kept as ``bind(space)`` where that is not None: the same
    answers, with what it looks up per space found once (it must not hold the space strongly).
    """
    kept = _PLANS.get(space)
    if kept is None and type(space) is range:  # a range's plan is kept for the one range of its value
        kept = _PLANS.get(interned(space))
    made = kept is None
    plan = plan_for(space) if kept is None else kept
    run = plan.routes.get((function, name))
    if run is not None:
        return run(*args, **kwargs)
    generation = _GENERATION[0]
    run = _chosen(function, name, space)
    try:
        answer = run(*args, **kwargs)
    except BaseException:
        if made:  # an object that is no space, or a call that failed: no plan made for it is kept
            _PLANS.discard(space)
        raise
    if generation == _GENERATION[0]:  # no rule was registered meanwhile (a backend's first call loads its own)
        bind = getattr(run, "bind", None)  # an implementation bound to the space once (the flat codec's method)
        plan.routes[function, name] = (bind(space) or run) if bind is not None else run
    return answer


#: how many times the kept routes were forgotten (a route chosen before is not kept)
_GENERATION = [0]


def forget_routes(cls: Any = object) -> None:
    """A kind rule or a protocol implementation was registered for class ``cls`` (a type, a
    tuple of types; anything else stands for every class): the kept plans of its instances,
    the only spaces whose route it can change (an MRO walk from their class reaches it),
    choose their routes again."""
    _GENERATION[0] += 1
    if not (isinstance(cls, type) or (isinstance(cls, tuple) and all(isinstance(c, type) for c in cls))):
        cls = object
    for plan in _PLANS.values():
        if plan.routes and isinstance(plan._space(), cls):
            plan.routes.clear()


on_kind_rule(forget_routes)


def _chosen(function: Any, name: str, space: Any) -> Callable[..., Any]:
    operation = getattr(function, "name", None) or function.__name__
    load_adapters_for(space)  # a foreign space's adapter registers its implementations first
    cls = type(space)
    rule = kind_rule(operation, cls)
    if name == "numpy":
        return _numpy_route(function, operation, cls, rule)
    if rule is not None:
        if operation == "sample":
            return lambda *args, **kwargs: rule(kernel_for(name, kwargs["rng"], kwargs["rng"]), *args, **kwargs)
        return lambda *args, **kwargs: rule(kernel_for(name, args[0]), *args, **kwargs)
    if isinstance(function, GenericFunction) and getattr(function.implementation_for(cls), "serves_arrays", False):
        return functools.partial(GenericFunction.__call__, function)
    return backend_implementation(function, name)


def _numpy_route(function: Any, operation: str, cls: type, rule: Callable[..., Any] | None) -> Callable[..., Any]:
    """What serves ``operation`` for spaces of class ``cls`` on NumPy (see :func:`route`)."""
    found = numpy_entry(operation, cls)
    if not isinstance(function, GenericFunction):
        return found[0] if found is not None else backend_implementation(function, "numpy")
    own = function.implementation_for(cls)
    fallback = function.implementation_for(object)
    if found is not None:  # the entry, unless the class has its own implementation nearer to it
        entry, home = found
        nearer = own is not fallback and any(f is own and sig[0] is not home and issubclass(sig[0], home)
                                             for sig, f in function.funcs.items())
        return own if nearer else entry
    if rule is None or own is not fallback:
        return own
    if operation == "sample":
        return lambda *args, **kwargs: rule(numpy_kernel(as_generator(kwargs.get("rng"))), *args, **kwargs)
    return functools.partial(rule, NUMPY)


# -- split and join: generated code, or walkers for a plan that serves one call -----------------


def _walkers(structure: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """``split`` and ``join`` walking ``structure`` (no code generated)."""

    def split(batch: Any) -> Any:
        parts: list[Any] = []
        try:
            map_tree(lambda position, b: parts.append(b), structure, batch)
        except ValueError:
            return None
        return tuple(parts)

    def join(parts: Any) -> Any:
        return map_tree(parts.__getitem__, structure)

    return split, join


def _structure(structure: Any, space: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Generated ``split`` and ``join`` for ``structure`` (straight-line code, no walking)."""
    gen = Generator(f"the plan of {space!r}")
    gen.namespace["_isinstance"] = isinstance
    gen.namespace["_tuple_list"] = (tuple, list)
    gen.namespace["_dict"] = dict
    counter = [0]
    leaves: list[str] = []

    def emit(node: Any, var: str) -> str:
        """Lines checking ``var`` against ``node``; returns the join expression of ``node``."""
        if not isinstance(node, (tuple, dict)):
            leaves.append(var)
            return f"p[{len(leaves) - 1}]"
        items = list(enumerate(node)) if isinstance(node, tuple) else list(node.items())
        if isinstance(node, tuple):
            gen.line(f"if not _isinstance({var}, _tuple_list) or len({var}) != {len(node)}: return None")
        else:
            keys = gen.bind(frozenset(node))
            gen.line(f"if not _isinstance({var}, _dict) or {var}.keys() != {keys}: return None")
        parts = []
        for key, child in items:
            counter[0] += 1
            sub = f"x{counter[0]}"
            gen.line(f"{sub} = {var}[{gen.key(key)}]")
            expression = emit(child, sub)
            parts.append(expression if isinstance(node, tuple) else f"{gen.key(key)}: {expression}")
        if isinstance(node, tuple):
            return "(" + "".join(f"{p}, " for p in parts) + ")"
        return "{" + ", ".join(parts) + "}"

    joined = emit(structure, "x")
    gen.line(f"return ({''.join(f'{v}, ' for v in leaves)})")
    split = gen.function("def split(x):")
    join = gen.function("def join(p):", [f"return {joined}"])
    return split, join
