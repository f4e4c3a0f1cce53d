"""PufferLib name parity (issue 16.16): every public name of ``pufferlib.emulation`` 2.0 and
of ``pufferlib.spaces`` importable from spacealg with PufferLib's parameters, and the
helpers behaving as PufferLib's (read from PufferLib 2.0.2's source; compared with it
directly where pufferlib is installed)."""

from __future__ import annotations

import inspect

import gymnasium.spaces as gs
import numpy as np
import pytest

import spacealg.compat
import spacealg.emulation
from spacealg.env import APIUsageError

# name -> PufferLib 2.0.2's parameters, in order (spacealg may add keyword parameters after)
EMULATION = {
    "emulate": ["struct", "sample"],
    "nativize": ["arr", "space", "struct_dtype"],
    "make_buffer": ["arr_dtype", "struct_dtype", "n"],
    "emulate_copy": ["sample", "arr_dtype", "struct_dtype"],
    "dtype_from_space": ["space"],
    "flatten_space": ["space"],
    "emulate_observation_space": ["space"],
    "emulate_action_space": ["space"],
    "GymnasiumPufferEnv": ["env", "env_creator", "env_args", "env_kwargs"],
    "PettingZooPufferEnv": ["env", "env_creator", "env_args", "env_kwargs"],
    "pad_agent_data": ["data", "agents", "pad_value"],
    "make_object": ["object_instance", "object_creator", "creator_args", "creator_kwargs"],
    "check_space": ["data", "space"],
}
SPACES = {"joint_space": ["space", "n"]}
CLASS_TUPLES = ["Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple"]


def _parameters(obj: object) -> list[str]:
    return list(inspect.signature(obj).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "parameters"), sorted(EMULATION.items()))
def test_every_public_name_of_pufferlib_emulation(name, parameters):
    ours = _parameters(getattr(spacealg.emulation, name))
    # the first parameter of emulate is positional; PufferLib's docs call it struct
    assert ours[: len(parameters)] == parameters or name == "emulate"
    assert len(ours) >= len(parameters)
    assert name in spacealg.emulation.__all__


@pytest.mark.parametrize("name", CLASS_TUPLES)
def test_the_class_tuples_of_pufferlib_spaces(name):
    # a class pair that behaves as PufferLib's tuple (without importing gym eagerly)
    pair = getattr(spacealg.compat, name)
    assert getattr(gs, name) in pair and pair == tuple(pair)
    assert isinstance(getattr(gs, name).__new__(getattr(gs, name)), pair)


def test_joint_space_of_pufferlib_spaces():
    assert _parameters(spacealg.compat.joint_space) == SPACES["joint_space"]
    assert spacealg.compat.joint_space(gs.Discrete(3), 2) == gs.MultiDiscrete([3, 3])


def test_make_buffer_shares_memory_with_the_struct():
    struct_dtype = spacealg.emulation.dtype_from_space(gs.Dict({"a": gs.Discrete(3), "b": gs.Box(0, 1, (2,))}))
    arr, struct = spacealg.emulation.make_buffer(np.uint8, struct_dtype)
    assert arr.shape == (struct_dtype.itemsize,) and struct.shape == (1,) and not arr.any()
    struct["a"] = 2
    assert arr[0] == 2
    rows, structs = spacealg.emulation.make_buffer(np.uint8, struct_dtype, 4)
    assert rows.shape == (4, struct_dtype.itemsize) and structs.shape == (4,)
    with pytest.raises(ValueError, match="whole number"):
        spacealg.emulation.make_buffer(np.float64, np.dtype([("a", np.int32)]))


def test_emulate_copy_is_one_emulated_row():
    space = gs.Dict({"a": gs.Discrete(3), "b": gs.Box(0, 1, (2,))})
    struct_dtype = spacealg.emulation.dtype_from_space(space)
    sample = {"a": 2, "b": np.array([0.5, 0.25], np.float32)}
    row = spacealg.emulation.emulate_copy(sample, np.uint8, struct_dtype)
    back = spacealg.emulation.nativize(row, space, struct_dtype)
    assert back["a"] == 2 and np.array_equal(back["b"], sample["b"])


def test_check_space_and_pad_agent_data():
    assert spacealg.emulation.check_space(1, gs.Discrete(3)) is True
    with pytest.raises(APIUsageError, match="not in the space"):
        spacealg.emulation.check_space(5, gs.Discrete(3))
    assert spacealg.emulation.pad_agent_data({"a": 1}, ["a", "b"], 0) == {"a": 1, "b": 0}


def test_against_pufferlib_itself():
    pufferlib_emulation = pytest.importorskip("pufferlib.emulation")
    for name, parameters in EMULATION.items():
        theirs = _parameters(getattr(pufferlib_emulation, name))
        assert theirs[: len(parameters)] == parameters or name == "emulate"
    space = gs.Dict({"a": gs.Discrete(3), "b": gs.Box(0, 1, (2,))})
    struct_dtype = spacealg.emulation.dtype_from_space(space)
    sample = {"a": 2, "b": np.array([0.5, 0.25], np.float32)}
    assert np.array_equal(
        spacealg.emulation.emulate_copy(sample, np.uint8, struct_dtype),
        pufferlib_emulation.emulate_copy(sample, np.uint8, struct_dtype),
    )
