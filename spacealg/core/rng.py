"""Random number generators: the one place that turns an ``rng`` argument into a Generator."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["RngLike", "accepted_forms", "as_generator", "no_extra", "register_rng_form", "seed"]

RngLike = None | int | np.integer | np.random.Generator | np.random.SeedSequence

_shared = np.random.default_rng()

#: What an ``rng`` argument may be: NumPy's forms here, a backend's generator once the
#: backend registers it (:func:`register_rng_form`).
_FORMS: dict[str, str] = {
    "none": "None",
    "seed": "a non-negative int seed",
    "numpy": "a numpy.random.Generator",
    "seed_sequence": "a numpy.random.SeedSequence",
}


def register_rng_form(name: str, description: str) -> None:
    """``description`` (say ``"a torch.Generator"``) is an accepted ``rng`` of backend
    ``name``: the message of a rejected ``rng`` names it."""
    _FORMS[name] = description


def accepted_forms() -> str:
    """Every accepted ``rng`` form, in words (``"None, a non-negative int seed, ... or ..."``)."""
    forms = list(_FORMS.values())
    return ", ".join(forms[:-1]) + " or " + forms[-1]


def no_extra(extra: dict[str, object], backend: str | None = None) -> None:
    """Nothing for ``extra`` keywords (a ``sample`` call's beyond ``rng``/``size``) that are all
    None; else the TypeError naming them and the ``backend`` whose generator does not take them."""
    given = sorted(key for key, value in extra.items() if value is not None)
    if given:
        rng = f"a {backend} rng" if backend else "this rng"
        raise TypeError(f"sample: {given} are not supported with {rng}")


def as_generator(rng: RngLike) -> np.random.Generator:
    """The Generator that ``rng`` names.

    Laws: an int (or SeedSequence) gives a fresh generator seeded with it, so the same seed
    gives the same draws; a Generator is returned as is (its state advances); ``None`` gives
    the module's shared generator (see :func:`seed`).
    """
    if rng is None:
        return _shared
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng: a seed must be a non-negative integer, got {rng}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected {accepted_forms()}, got {type(rng).__qualname__}")


def seed(value: int | None = None) -> None:
    """Reseed the shared generator used when ``rng=None`` (None: fresh OS entropy)."""
    global _shared
    _shared = np.random.default_rng(value)
