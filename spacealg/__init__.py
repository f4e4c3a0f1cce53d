"""spacealg: reinforcement-learning spaces as sets, with a trait-based algebra.

The public names, nothing else. See README.md and ``spacealg.core.protocol`` for laws.
"""

from spacealg import backends, compat  # noqa: F401  (registering: the torch/JAX backends; every adapter)
from spacealg.adapters.encoding import decode, encode
from spacealg.adapters.gym import from_gym, to_gym
from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium
from spacealg.core.generic import GenericFunction, as_space
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
    clamp,
    clamp_,
    contains,
    element,
    elements,
    elsize,
    eltype,
    index,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import seed
from spacealg.core.space import Space
from spacealg.core.styles import (
    ContinuousSpaceStyle,
    FiniteSpaceStyle,
    HybridSpaceStyle,
    UnknownSpaceStyle,
    combine_styles,
)
from spacealg.declarative import DataclassSpace, space, spaceclass
from spacealg.ops import flatdim, flatten, flatten_space, joint_space, unflatten
from spacealg.serialize import from_json, to_json
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.difference import Difference, difference
from spacealg.spaces.dynamic import Dynamic
from spacealg.spaces.finite import BOOL, FiniteSet
from spacealg.spaces.graph import Graph
from spacealg.spaces.interval import REALS, Interval
from spacealg.spaces.masked import Masked, MaskError
from spacealg.spaces.onehot import OneHot
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct, product
from spacealg.spaces.sequence import Sequence
from spacealg.spaces.text import Text
from spacealg.spaces.union import Union, union

__version__ = "0.1.0"

# The adapters of optional ecosystems are imported on first use of their names, so that
# ``import spacealg`` imports none of dm_env, torch, torchrl, jax, gymnax or Jumanji.
_OPTIONAL_ADAPTERS = {
    f"{direction}_{target}": f"spacealg.adapters.{target}"
    for target in ("dm_env", "torchrl", "gymnax", "jumanji")
    for direction in ("from", "to")
}


def __getattr__(name: str) -> object:
    """``spacealg.from_torchrl`` and the other optional adapters, imported on first use."""
    module = _OPTIONAL_ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module 'spacealg' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

__all__ = [
    "BOOL",
    "REALS",
    "ArraySpace",
    "Box",
    "Categorical",
    "ContinuousSpaceStyle",
    "DataclassSpace",
    "DictProduct",
    "Difference",
    "Dynamic",
    "FiniteSet",
    "FiniteSpaceStyle",
    "GenericFunction",
    "Graph",
    "HybridSpaceStyle",
    "Interval",
    "MaskError",
    "Masked",
    "OneHot",
    "OneOf",
    "Sequence",
    "Space",
    "SpaceStyle",
    "Text",
    "TupleProduct",
    "Union",
    "UnknownSpaceStyle",
    "as_space",
    "bounds",
    "cardinality",
    "clamp",
    "clamp_",
    "combine_styles",
    "compat",
    "contains",
    "decode",
    "difference",
    "element",
    "elements",
    "elsize",
    "eltype",
    "encode",
    "flatdim",
    "flatten",
    "flatten_space",
    "from_gym",
    "from_gymnasium",
    "from_json",
    "index",
    "intersect",
    "isin",
    "issubspace",
    "joint_space",
    "product",
    "sample",
    "seed",
    "space",
    "spaceclass",
    "to_gym",
    "to_gymnasium",
    "to_json",
    "unflatten",
    "union",
]
