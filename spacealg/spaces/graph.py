"""Graph: graphs with node features in ``node_space`` and edge features in ``edge_space``
(Gymnasium's ``Graph``; ``edge_space=None`` for graphs without edges).

>>> from gymnasium.spaces import GraphInstance
>>> from spacealg import Graph, Box
>>> import numpy as np
>>> g = Graph(Box(-1.0, 1.0, shape=(2,)), range(3))
>>> x = GraphInstance(np.zeros((4, 2)), np.array([0, 2]), np.array([[0, 1], [3, 2]]))
>>> x in g, g.sample(rng=0) in g
(True, True)

Elements are ``gymnasium.spaces.GraphInstance(nodes, edges, edge_links)`` (Gym's look-alike
is accepted too): ``nodes`` is the
stacked form (see :mod:`spacealg.spaces.sequence`) of ``n`` members of ``node_space``;
either ``edges`` is the stacked form of ``m`` members of ``edge_space`` and
``edge_links`` an integer array of shape ``(m, 2)`` with entries in ``range(n)``, or both
are None (the only choice when ``edge_space`` is None).

Sampling is Gymnasium's: 10 nodes; ``m`` uniform in ``range(90)`` edges (none without an
edge space, and None when ``m == 0``); links uniform int32 node pairs. A batch is an object
array. The style is Unknown and the cardinality infinite; ``clamp`` clamps the features and
clips the links into ``range(n)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import GraphInstance

from spacealg.core.protocol import contains, issubspace, sample
from spacealg.core.space import Space, nested_depth
from spacealg.spaces._batch import isin_objects
from spacealg.spaces._kind import register, register_infinite, register_unshaped, shown
from spacealg.spaces.sequence import clamp_stacked, one_by_one, stacked, stacked_length

__all__ = ["NUM_NODES", "Graph", "GraphInstance"]

NUM_NODES = 10
"""The number of nodes of a sampled graph (Gymnasium's default)."""


class Graph(Space):
    """Graphs whose node features lie in ``node_space`` and edge features in ``edge_space``."""

    node_space: Any
    edge_space: Any
    _node: Any
    _edge: Any

    def __init__(self, node_space: Any, edge_space: Any = None) -> None:
        node_shown, node = shown(node_space)
        edge_shown, edge = (None, None) if edge_space is None else shown(edge_space)
        depth = nested_depth("Graph", (node, edge))
        self._set(node_space=node_shown, edge_space=edge_shown, _node=node, _edge=edge, _depth=depth)

    def _key(self) -> tuple[Any, ...]:
        return (self._node, self._edge)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.node_space, self.edge_space), {}


def _links_ok(links: Any, n_edges: int, n_nodes: int) -> bool:
    return (
        isinstance(links, np.ndarray)
        and links.dtype.kind in "iu"
        and links.shape == (n_edges, 2)
        and bool(((links >= 0) & (links < n_nodes)).all())
    )


def _is_graph_instance(x: Any) -> bool:
    """A GraphInstance: Gymnasium's, or a look-alike such as Gym's (same named fields)."""
    return isinstance(x, GraphInstance) or (
        isinstance(x, tuple) and getattr(type(x), "_fields", None) == GraphInstance._fields
    )


def _contains(x: Any, space: Graph) -> bool:
    if not _is_graph_instance(x) or x.nodes is None:
        return False
    n = stacked_length(x.nodes, space._node)
    if n is None:
        return False
    if x.edges is None or x.edge_links is None:
        return x.edges is None and x.edge_links is None
    if space._edge is None:
        return False
    m = stacked_length(x.edges, space._edge)
    return m is not None and _links_ok(x.edge_links, m, n)


def draw_graph(space: Graph, generator: np.random.Generator) -> GraphInstance:
    """One graph with Gymnasium's distribution (see the module docstring)."""
    n = NUM_NODES
    m = int(generator.integers(n * (n - 1))) if n > 1 and space._edge is not None else 0
    nodes = stacked(sample(space._node, (n,), rng=generator))
    if m == 0:
        return GraphInstance(nodes, None, None)
    edges = stacked(sample(space._edge, (m,), rng=generator))
    links = generator.integers(0, n, size=(m, 2), dtype=np.int32)
    return GraphInstance(nodes, edges, links)


def _clamp(x: Any, space: Graph) -> Any:
    if contains(x, space):
        return x
    if not _is_graph_instance(x) or x.nodes is None:
        raise TypeError(f"clamp: a member of {space!r} is a GraphInstance with nodes, got {x!r}")
    nodes = clamp_stacked(x.nodes, space._node)
    n = stacked_length(nodes, space._node) or 0
    if x.edges is None or x.edge_links is None or space._edge is None or n == 0:
        return GraphInstance(nodes, None, None)
    edges = clamp_stacked(x.edges, space._edge)
    links = np.clip(np.asarray(x.edge_links), 0, n - 1).astype(np.int32)
    return GraphInstance(nodes, edges, links)


register(Graph, contains=_contains, sample=one_by_one(draw_graph), isin=isin_objects,
         eltype=lambda space: GraphInstance, clamp=_clamp)
register_infinite(Graph)
register_unshaped(Graph, "graphs of any size")


@issubspace.register(Graph, Graph)
def _graph_subset(a: Graph, b: Graph) -> bool:
    if a._edge is None:
        return issubspace(a._node, b._node)  # type: ignore[no-any-return]
    return b._edge is not None and issubspace(a._node, b._node) and issubspace(a._edge, b._edge)
