"""The checks by kind: :func:`check` (the checker of the environment's kind, read from the
registry, :mod:`spacealg.testing.registry`), :func:`checker_for`, :func:`replay`, and
one-line environment tests for users' own suites:

>>> from spacealg.testing import env_test
>>> test_cartpole = env_test("CartPole-v1")                  # doctest: +SKIP
>>> test_my_env = env_test("my_pkg.envs:make_env", max_steps=300)   # doctest: +SKIP

``env_test`` returns a test function that pytest collects under the name it is assigned
to; it runs :func:`check` through the plugin's ``spacealg_check`` fixture. Options given
to ``env_test`` win over the ``--spacealg-*``
command-line options of the pytest plugin (:mod:`spacealg.pytest_plugin`), which win over
the checkers' defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Unpack

from spacealg.testing.engine.resolve import resolve
from spacealg.testing.engine.runner import (
    CheckOptions,
    EnvCheckReport,
    EnvKind,
    close,
    finalisers_caught,
    options_of,
    replay_kind,
)
from spacealg.testing.registry import claimant, kind_of

__all__ = ["check", "check_env", "checker_for", "env_test", "kind_for", "replay"]


def kind_for(env: Any) -> EnvKind:
    """The registered kind of ``env`` (an id, ``module:factory``, a factory or an instance):
    the kind that claims the argument itself, else the kind that recognises the instance it
    builds (:mod:`spacealg.testing.registry`)."""
    claimed = claimant(env)
    if claimed is not None:
        return claimed
    source = resolve(env)
    with finalisers_caught():  # its __del__ raising is reported by the check itself
        instance = source.make()
        try:
            return kind_of(instance)
        finally:
            close(instance, source)


def checker_for(env: Any) -> Callable[..., EnvCheckReport]:
    """The checker :func:`check` uses for ``env``: its kind's (:func:`kind_for`):
    ``check_jax_env`` for a functional JAX environment (gymnax, Jumanji, pgx, Brax), the
    dm_env and TorchRL checkers, ``check_aec_env`` (``agent_iter`` and ``last``),
    ``check_parallel_env`` (per-agent space methods), ``check_vector_env`` (``num_envs`` and
    single spaces), else ``check_env``."""
    return kind_for(env).check


def check(env: Any, **options: Any) -> EnvCheckReport:
    """Check ``env`` with the checker of its kind (:func:`checker_for`); ``options`` as
    that checker's."""
    claimed = claimant(env)
    if claimed is not None:  # "gymnax:CartPole-v1", gymnax's (env, params)
        return claimed.check(env, **options)  # type: ignore[no-any-return]
    source = resolve(env)
    return checker_for(source)(source, **options)


def check_env(env: Any, **options: Unpack[CheckOptions]) -> EnvCheckReport:
    """Check a Gymnasium environment's properties on Hypothesis-generated episodes.

    ``env``: an instance, a zero-argument factory, a registered id or ``"module:factory"``.
    Options (keywords, :class:`~spacealg.testing.engine.runner.CheckOptions`):
    ``max_examples`` (100): episodes drawn (before shrinking); ``max_steps`` (100): longest
    episode drawn (episodes that end earlier are reset and continued; one example in eight
    runs up to just past the environment's own ``max_episode_steps`` when it has one);
    ``determinism`` (True): replay each episode and compare; ``random_seed`` (0): the seed of
    Hypothesis' search (None: random, so repeated runs explore differently); ``budget``
    (None): seconds the search may take (and as many for shrinking a failure; the whole
    check ends its work within 3 x budget, episodes stopping between steps, and reports what
    broke by then; None: no limit); ``database`` (None): a directory or a Hypothesis
    ``ExampleDatabase`` where
    failures are saved and replayed first (None: none, nothing written); ``masks`` (True):
    draw legal actions under a published ``info["action_mask"]`` and check the mask;
    ``illegal_actions`` (False): draw some actions outside the mask too; ``hygiene`` (True):
    the one-off RNG and API probes and declaration lints (see
    :mod:`spacealg.testing.engine.probes`); ``max_broken`` (8): stop once this many properties
    are found broken (1: at the first, as ``pytest -x`` does; the others are then not
    checked). Returns an :class:`EnvCheckReport`; raises
    :class:`EnvCheckError` naming the broken property, the seed and the shortest action
    sequence found.

    The registry decides the kind (:func:`check`): a Gymnasium environment gets the
    Gymnasium kind's checker (:func:`spacealg.testing.kinds.gymnasium.check_env`), an
    environment of another API handed to it (a dm_env or TorchRL instance, issue 15) its own
    kind's. Law: ``check_env(env)`` and ``check(env)`` check ``env`` with the same kind. The
    options are validated before anything is built.
    """
    options_of(options)
    return check(env, **options)


def replay(
    env: Any,
    seed: int | None,
    actions: Sequence[Any],
    *,
    determinism: bool = True,
    masks: bool = True,
    ignore_info_keys: Any = (),
) -> None:
    """Run the checks on one seed and action sequence (an :class:`EnvCheckError`'s
    ``seed`` and ``actions``, say, after a fix) on a fresh environment, replaying the whole
    sequence on the same instance for the determinism checks: raises the EnvCheckError of
    the first property that breaks, returns None if none does. For a parallel environment
    each action is the dict of the live agents' actions; for an AEC one, the actions of the
    agents that had to act, in order. ``seed=None`` (a failure of the one-off probes, which
    reports no seed) re-runs the probes. Each kind replays in its own way
    (:attr:`~spacealg.testing.engine.runner.EnvKind.replays`): a vector environment through
    :func:`~spacealg.testing.kinds.vector.replay_vector` (its episode, or with ``seed=None``
    its declared spaces; a changed row's laws need that function's ``row`` and ``changes``).
    ``ignore_info_keys`` as the checkers'."""
    from spacealg.testing.engine.infos import ignoring, info_keys

    kind = kind_for(env)
    source = resolve(env) if claimant(env) is None else env
    with ignoring(info_keys(ignore_info_keys)):
        if kind.replays is not None:
            kind.replays(source, seed, actions, determinism=determinism, masks=masks)
        else:
            replay_kind(kind, resolve(source), seed, actions, determinism=determinism, masks=masks)


def env_test(env: Any, **options: Any) -> Callable[[Any], None]:
    """A pytest test function that checks ``env`` (an id, ``module:factory``, a factory or an
    instance) with :func:`check`; assign it to a ``test_...`` name in a test module. It asks
    for the plugin's ``spacealg_check`` fixture (:mod:`spacealg.pytest_plugin`), which
    brings the command line's options; ``options`` win over them."""

    def test(spacealg_check: Callable[..., Any]) -> None:
        spacealg_check(env, **options)

    label = env if isinstance(env, str) else getattr(env, "__qualname__", type(env).__qualname__)
    test.__name__ = test.__qualname__ = f"test_env[{label}]"
    test.__doc__ = f"spacealg.testing.check({label!r})"
    return test
