"""One-off probes run before the search: RNG discipline and API hygiene (each kind's
``probes`` runs them on its API: :func:`run_probes`).

On fresh environments (an instance given by the caller is only reset, never closed):

- ``reset-seed``: where resets are random at all (unseeded resets of one instance differ),
  16 different seeds must not all give the same episode (a reset that ignores its seed
  passes same-seed tests: EnvPool PR #434);
- ``reset-stream``: where different seeds give different episodes, eight successive
  ``reset()`` calls without a seed must not all give the same episode (a reset that
  reseeds instead of continuing the stream);
- ``reset-options``: ``reset(seed=0, options={})`` is accepted (any exception it raises is a
  finding where ``reset(seed=0)`` works; where that fails too, the crash is reported);
- ``close-twice``: ``close()`` twice raises nothing;
- ``render-modes``: the environment's ``render_mode`` (where not None) is one of
  ``metadata["render_modes"]`` (:func:`declared_render_mode`), and each mode of them but ``human`` (headless:
  ``SDL_VIDEODRIVER=dummy``) is built with ``render_mode=mode`` and renders what it
  promises: ``rgb_array`` an (H, W, 3) uint8 array, ``depth_array`` a 2-D array, ``ansi`` a
  str, ``*_list`` a list of those (a vector environment: a tuple or list of such frames, one
  per sub-env);
- warnings (never failures): the declaration lints of :mod:`spacealg.testing.engine.lints` (for
  Gymnasium's own environments only with ``lint=True``), and a step before reset that
  silently returns an observation outside the declared space.

An episode is the first observation and, where no mask is published, three fixed actions
(each kind's ``probe_episode``, in plain Python: the probe runs the lines its snippet shows).
A probe whose environment raises is skipped: the search reports that failure, with a
reproduction. The probes return their findings (:mod:`spacealg.testing.engine.verdicts`):
warnings, the properties they could not check and why (an instance that cannot be rebuilt
in each render mode, a reset that fails, the time budget), and the properties they found
broken, each probe running whatever the others found.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import Any

from spacealg.testing.engine.driver import Budget, describe_exception
from spacealg.testing.engine.episode import plain_checks
from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import close
from spacealg.testing.engine.snippets import RENDER, SEEDING, SEEDS, UNSEEDED
from spacealg.testing.engine.verdicts import NotChecked

__all__ = [
    "api_probes",
    "check_render",
    "declared_render_mode",
    "first_look",
    "outside",
    "rng_probes",
    "run_probes",
    "with_options",
]


def resets_with_options(env: Any) -> bool:
    """The ``reset-options`` probe: ``reset(seed=0, options={})`` is accepted. Where it
    raises (any exception: a TypeError for a refused argument, a KeyError from
    ``options["start"]``, ...), ``reset(seed=0)`` without options is tried: if that works,
    the options are at fault and the property's error is raised; if it fails too, reset
    itself crashes, which is no fault of the options: False (the search reports the crash,
    with a reproduction). True when ``reset(seed=0, options={})`` succeeds."""
    try:
        env.reset(seed=0, options={})
    except Exception as error:
        try:
            env.reset(seed=0)
        except Exception:
            return False
        detail = f"reset(seed=0, options={{}}) raised {describe_exception(error)}, while reset(seed=0) works"
        raise PropertyError("reset-options", detail) from error
    return True


def _fresh(source: EnvSource) -> Callable[[], Any]:
    shared: list[Any] = []

    def make() -> Any:
        if source.owned:
            return source.make()
        if not shared:
            shared.append(source.make())
        return shared[0]

    return make


def rng_probes(
    source: EnvSource,
    actions: list[Any],
    episode: Sequence[str],
    clock: Budget | None = None,
) -> bool:
    """``reset-seed`` and ``reset-stream`` (see the module docstring): the lines of
    :data:`~spacealg.testing.engine.snippets.SEEDING` run with the kind's ``episode`` (lines
    defining ``probe_episode(env, seed, actions)``), the lines that the property's snippet
    shows (law: the snippet replays what the probe compared, as it compared it). False when
    the time budget ran out before they were decided, else True (or their PropertyError,
    which keeps ``actions`` for the snippet)."""
    plain = plain_checks((*SEEDING, *episode))
    run = plain["probe_episode"]
    make = _fresh(source)
    seeded = []
    for seed in range(SEEDS):
        if clock is not None and clock.spent():
            return False
        env = make()
        try:
            seeded.append(run(env, seed, actions))
        finally:
            close(env, source)
    env = make()
    try:
        run(env, 0, actions)
        unseeded = [run(env, None, actions) for _ in range(UNSEEDED)]
    finally:
        close(env, source)
    found = plain["seeding"](seeded, unseeded)
    if found is not None:
        violation = PropertyError(*found)
        violation.context = {"probe_actions": actions}
        raise violation
    return True


def check_render(source: EnvSource, warned: list[Any], act: Callable[[Any], None], batched: bool = False) -> None:
    """``render-modes``: build the environment in each declared mode (but human), reset it,
    ``act`` on it (a step or two) and render (``batched``: a vector environment, which
    renders one frame per sub-env)."""
    if source.build is None or not source.owned:
        warned.append(
            NotChecked(
                "render-modes",
                "the environment was given as an instance or a factory without render_mode, so it cannot be "
                "built in each render mode (pass an id or module:factory)",
            )
        )
        return
    probe = source.make()
    try:
        modes = list((getattr(probe, "metadata", None) or {}).get("render_modes", []) or [])
    finally:
        close(probe, source)
    if not modes:
        warned.append(NotChecked("render-modes", "metadata['render_modes'] declares no render mode"))
        return
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    for mode in modes:
        if mode == "human":
            continue
        try:
            env = source.build(render_mode=mode)
        except TypeError:
            warned.append(NotChecked("render-modes", f"the environment cannot be built with render_mode={mode!r}"))
            return
        except Exception as error:
            _unrendered(mode, error, warned, f"building with render_mode={mode!r}")
            continue
        try:
            act(env)
            try:
                frame = env.render()
            except Exception as error:
                _unrendered(mode, error, warned, f"render() in {mode!r} mode")
                continue
            promised = plain_checks(tuple(RENDER))
            wrong = promised["promised_rows"](mode, frame, env.num_envs) if batched else (
                promised["promised"](mode, frame)
            )
            if wrong is not None:
                raise PropertyError("render-modes", wrong)
        except PropertyError:
            raise
        except Exception:  # the search reports failures of reset and step
            pass
        finally:
            close(env, source)


def _unrendered(mode: str, error: BaseException, warned: list[Any], call: str) -> None:
    """``render-modes`` not checked where ``mode`` needs a dependency that is missing (the
    law holds of each declared mode, so one mode left unrendered leaves it unchecked); else
    ``render-modes`` broken: ``call`` raised ``error``."""
    if not (isinstance(error, ImportError) or type(error).__name__ == "DependencyNotInstalled"):
        raise PropertyError("render-modes", f"{call} raised {describe_exception(error)}") from error
    warned.append(NotChecked("render-modes", f"render mode {mode!r} was not checked: {type(error).__name__}: {error}"))


def declared_render_mode(env: Any, warned: list[Any]) -> None:
    """``render-modes``, on a fresh environment: its ``render_mode``, where not None, is one
    of ``metadata["render_modes"]`` (Gymnasium and PettingZoo promise that a user may pick
    any declared mode; a mode outside them is one no caller could have asked for). A
    violation is added to ``warned``; an environment whose attributes cannot be read is
    left to the search."""
    try:
        mode = getattr(env, "render_mode", None)
        modes = (getattr(env, "metadata", None) or {}).get("render_modes", []) or []
        declared = mode in list(modes)
    except Exception:
        return
    if mode is not None and not declared:
        warned.append(
            PropertyError(
                "render-modes",
                f"render_mode is {mode!r}, which is not among metadata['render_modes'] ({list(modes)!r})",
            )
        )


def lifecycle_probes(
    source: EnvSource, warned: list[Any], start: Callable[[Any], Any], act: Callable[[Any], Any]
) -> None:
    """``close-twice``, and a warning where a step before reset returns what looks like a
    step's result outside the declared spaces instead of failing (a silent wrong answer,
    which matters; a step that fails, with any exception, or that answers within the
    declared spaces from a default state, does not)."""
    if not source.owned:
        warned.append(NotChecked("close-twice", "the environment was given as an instance: closing it is the caller's"))
        return
    env = source.make()
    try:
        wrong = act(env)
    except Exception:
        wrong = None
    if wrong:
        warned.append(f"step before reset did not fail and returned {wrong}")
    with contextlib.suppress(Exception):
        env.close()
    env = source.make()
    try:
        start(env)
    except Exception:
        with contextlib.suppress(Exception):
            env.close()
        return
    for which in ("first", "second"):
        try:
            env.close()
        except Exception as error:
            raise PropertyError("close-twice", f"the {which} close() raised {describe_exception(error)}") from error


def outside(result: Any, space: Any) -> str | None:
    """What is wrong with a single step's ``result`` (None: a 5-tuple whose observation is
    in ``space``)."""
    from spacealg.testing.engine.errors import short
    from spacealg.testing.engine.values import is_member

    if not (isinstance(result, tuple) and len(result) == 5):
        return f"{short(result)}, not a step's 5-tuple"
    if not is_member(result[0], space):
        return f"the observation {short(result[0])}, outside the observation space"
    return None


def run_probes(
    source: EnvSource,
    warned: list[Any],
    actions: list[Any],
    episode: Sequence[str],
    clock: Budget | None,
    act: Callable[[Any], Any],
    start_and_act: Callable[[Any], Any],
) -> list[Any]:
    """The RNG probes (``episode``: the kind's ``probe_episode`` in plain Python, with the
    fixed ``actions``: :func:`rng_probes`), then :func:`api_probes`; returns the warnings."""
    try:
        if not rng_probes(source, actions, episode, clock):
            out_of_time(warned, "reset-seed", "reset-stream")
    except PropertyError as violation:
        warned.append(violation)
    except Exception as error:  # the search reports the crash itself; these two were not checked
        why = f"their probe raised {type(error).__name__}: {error}"
        warned += [NotChecked(p, why) for p in ("reset-seed", "reset-stream")]
    return api_probes(source, warned, clock, act, start_and_act)


def api_probes(
    source: EnvSource,
    warned: list[Any],
    clock: Budget | None,
    act: Callable[[Any], Any],
    start_and_act: Callable[[Any], Any],
    batched: bool = False,
) -> list[Any]:
    """While the budget lasts, the life-cycle and render probes (``close-twice``,
    ``render-modes``; ``act``: one step of a started environment; ``start_and_act``: reset,
    then a step where no mask is published; ``batched``: a vector environment); returns the
    warnings."""
    if clock is not None and clock.spent():
        out_of_time(warned, "close-twice", "render-modes")
        return warned
    rendering_broken = any(isinstance(f, PropertyError) and f.property == "render-modes" for f in warned)
    for run in (
        lambda: lifecycle_probes(source, warned, lambda env: env.reset(seed=0), act),
        lambda: None if rendering_broken else check_render(source, warned, start_and_act, batched),
    ):
        try:
            run()
        except PropertyError as violation:
            warned.append(violation)
    return warned


def out_of_time(warned: list[Any], *properties: str) -> None:
    """Mark ``properties`` not checked: the time budget ran out before their probes."""
    warned += [NotChecked(p, "the time budget ran out before its probe") for p in properties]


def first_look(source: EnvSource, read: Callable[[Any], tuple[list[Any], list[Any]]]) -> tuple[list[Any], Any]:
    """The probes of one fresh environment before the RNG and API ones: the declared render
    mode (:func:`declared_render_mode`), the declaration lints and fixed actions that
    ``read(env)`` gives, and ``reset-options`` (:func:`with_options`). Returns the warnings
    and the actions, None for the actions where reset itself fails (the search reports it)."""
    warned: list[Any] = []
    env = source.make()
    try:
        declared_render_mode(env, warned)
        lints, actions = read(env)
        warned += lints
        return warned, actions if with_options(env, warned) else None
    finally:
        close(env, source)


def with_options(env: Any, warned: list[Any]) -> bool:
    """:func:`resets_with_options`, its violation added to ``warned``; False (and the probes
    that need a working reset marked not checked) where reset itself fails."""
    try:
        if resets_with_options(env):
            return True
    except PropertyError as violation:
        warned.append(violation)
        return True
    why = "reset(seed=0) itself raises (reported as no-exception by the search)"
    needs_reset = ("reset-options", "reset-seed", "reset-stream", "close-twice", "render-modes")
    warned += [NotChecked(p, why) for p in needs_reset]
    return False
