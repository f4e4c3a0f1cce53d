"""The Gym (0.26) registrations: Gymnasium's rule table applied to ``gym.spaces``.

Imported lazily (see :mod:`spacealg.adapters.gym`), never by ``import spacealg``. The
conversions are :data:`spacealg.adapters.gymnasium.FROM_RULES`/``TO_RULES`` for the Gym
:class:`~spacealg.adapters.gymnasium.Family` (no Discrete dtype, no MultiDiscrete start, no
stacking Sequence, Graph features Box/Discrete only). The protocol on Gym instances is the
Gymnasium registration of each class, except for the few rules below where Gym's own
behaviour differs (listed in ``DIFFERENCES``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium.spaces
import numpy as np

from spacealg.adapters import native
from spacealg.adapters.gym import from_gym, import_gym, to_gym
from spacealg.adapters.gymnasium import FROM_RULES, Family, register_family
from spacealg.core.generic import as_space
from spacealg.core.plan import components
from spacealg.core.protocol import clamp, contains, eltype, isin, sample
from spacealg.core.rng import RngLike
from spacealg.spaces._batch import all_trailing, batch_shape
from spacealg.spaces.graph import NUM_NODES
from spacealg.spaces.sequence import GEOMETRIC_P, object_batch

gs = import_gym()
if gs is None:  # imported only when Gym imports
    raise ImportError("spacealg.adapters.gym_rules needs the gym package")

GYM = Family("gym", gs, from_gym, to_gym, discrete_dtype=False, multidiscrete_start=False,
             sequence_stack=False, graph_features=("Box", "Discrete"))
register_family(GYM)


def spacealg_space(space: Any) -> Any:
    """``from_gym(space)``, kept per instance."""
    return native.converted(space, from_gym)


# -- where Gym's behaviour differs from Gymnasium's -----------------------------------------


def _isin_discrete(batch: Any, space: Any) -> np.ndarray:
    # Gym's Discrete.contains takes ints and 0-d integer arrays of any integer dtype
    if not isinstance(batch, np.ndarray) or batch.dtype.kind not in "biuf":
        return native.isin_items(np.asarray(batch, dtype=object), space)
    if batch.dtype.kind not in "iu":
        return np.zeros(batch.shape, dtype=bool)
    start = int(space.start)
    return (batch >= start) & (batch <= start + int(space.n) - 1)  # type: ignore[no-any-return]


def _isin_multidiscrete(batch: Any, space: Any) -> np.ndarray:
    # Gym's MultiDiscrete.contains checks 0 <= x < nvec on any non-object array (no dtype
    # check: float entries in range are members), unlike Gymnasium's
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
    leading = batch_shape(array, tuple(space.shape), space)
    if array.dtype.kind not in "biuf" or not space.shape:
        return np.zeros(leading, dtype=bool)
    with np.errstate(invalid="ignore"):
        inside = (array >= 0) & (array < space.nvec)
    return all_trailing(inside, len(space.shape))


def _sample_box(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    return native.sample_box(spacealg_space(space), size, rng)


def _sample_discrete(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    drawn = native.sample_discrete(space, size, rng=rng)
    return int(drawn) if size is None else drawn  # Gym's Discrete samples Python ints


def _sample_text(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    return sample(spacealg_space(space), size, rng=rng)


def _sample_sequence(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> Any:
        n = int(generator.geometric(GEOMETRIC_P))
        return tuple(sample(space.feature_space, rng=generator) for _ in range(n))

    return object_batch(draw, size, rng)


def _sample_graph(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> Any:
        n = NUM_NODES
        m = int(generator.integers(n * (n - 1))) if space.edge_space is not None else 0
        nodes = sample(space.node_space, (n,), rng=generator)
        if m == 0:
            return gs.GraphInstance(nodes, None, None)
        edges = sample(space.edge_space, (m,), rng=generator)
        return gs.GraphInstance(nodes, edges, generator.integers(0, n, size=(m, 2)))

    return object_batch(draw, size, rng)


DIFFERENCES: dict[tuple[Any, str], Callable[..., Any]] = {
    (as_space, "Space"): spacealg_space,
    (isin, "Discrete"): _isin_discrete,
    (isin, "MultiDiscrete"): _isin_multidiscrete,
    (sample, "Box"): _sample_box,
    (sample, "Discrete"): _sample_discrete,
    (sample, "Text"): _sample_text,
    (sample, "Sequence"): _sample_sequence,
    (sample, "Graph"): _sample_graph,
    (eltype, "Discrete"): lambda space: int,
    (eltype, "Tuple"): lambda space: tuple,
    (eltype, "Sequence"): lambda space: tuple,
    (eltype, "Graph"): lambda space: gs.GraphInstance,
}


def _register_protocol() -> None:
    """Each protocol function on each Gym class: Gym's difference, else Gymnasium's rule."""
    for function in (as_space, clamp, components, contains, isin, sample, eltype):
        for name in FROM_RULES:
            cls = getattr(gs, name, None)
            if cls is None:
                continue
            rule = DIFFERENCES.get((function, name))
            if rule is None:
                rule = function.dispatch(getattr(gymnasium.spaces, name))
                if rule is None or rule is function.dispatch(object) or (rule is function.dispatch(
                    gymnasium.spaces.Space
                ) and name != "Space"):
                    continue  # inherited from the registration for Space
            function.register(cls)(rule)


_register_protocol()
