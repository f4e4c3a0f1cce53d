"""Algebraic operations on spaces: joint spaces and flattening (see each module's table)."""

from spacealg.ops.flatten import (
    FlatCodec,
    flat_codec,
    flatdim,
    flatten,
    flatten_batch,
    flattened_box,
    unflatten,
    unflatten_batch,
)
from spacealg.ops.joint import joint_space
from spacealg.ops.leaves import flatten_space

__all__ = [
    "FlatCodec",
    "flat_codec",
    "flatdim",
    "flatten",
    "flatten_batch",
    "flatten_space",
    "flattened_box",
    "joint_space",
    "unflatten",
    "unflatten_batch",
]
