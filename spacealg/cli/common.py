"""What every ``spacealg`` subcommand shares: the options ``--json`` and ``--env-kwarg``,
making the environment named by ENV_ID, and turning failures into one-line messages.

Exit statuses (the same for every subcommand): 0 success, 1 a checked property broke,
2 the command could not do its job (bad option, an environment that cannot be made, a
missing optional package), 130 interrupted by Ctrl-C.

ENV_ID is resolved the same way by every subcommand (:func:`resolve_target`):

- ``module:attribute``: the module is imported (the working directory first, as with
  ``python -m``) and the attribute, a class or a function, is called with the
  ``--env-kwarg`` keywords; if the module has no such attribute but registers a Gymnasium id
  of that name, ``gymnasium.make("module:attribute")`` (Gymnasium's own syntax) makes it;
- ``LIBRARY:NAME`` for LIBRARY one of :data:`~spacealg.adapters.envs.JAX_PREFIXES`
  (``gymnax:CartPole-v1``, ``brax:ant``, ...): a JAX environment, made by that library
  (``gymnax.make(NAME, **kwargs)``, ...);
- anything else is a registered Gymnasium id, made by ``gymnasium.make(ENV_ID, **kwargs)``.

:func:`env_id_forms` says all this in the words of ``--help``, with the extra each form needs.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import itertools
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spacealg.adapters.envs import JAX_EXAMPLES, is_jax_id

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "GYMNASIUM_PINS",
    "OPTIONAL_EXTRAS",
    "CannotMakeError",
    "CommandError",
    "GymnasiumPin",
    "Target",
    "add_common_arguments",
    "emit_json",
    "env_id_forms",
    "env_source",
    "failed_document",
    "install_advice",
    "interrupts",
    "is_space_document",
    "json_stdout",
    "jsonable",
    "making",
    "missing_extra",
    "one_line",
    "parse_env_kwargs",
    "passed_document",
    "read_space_document",
    "resolve_target",
]

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Optional packages the commands may need -> the pyproject extra that installs them.
OPTIONAL_EXTRAS: dict[str, str] = {
    "hypothesis": "check",
    "ray": "ray",
    "tqdm": "check",
    "pettingzoo": "pettingzoo",
    "gym": "gym",
    "torch": "torch",
    "jax": "jax",
    "jaxlib": "jax",
    "dm_env": "dm_env",
    "torchrl": "torchrl",
    "tensordict": "torchrl",
    "gymnax": "gymnax",
    "jumanji": "jumanji",
    "pgx": "pgx",
    "craftax": "craftax",
    "jaxmarl": "jaxmarl",
    "navix": "navix",
    "xminigrid": "xminigrid",
    "brax": "brax",
    "mujoco_playground": "playground",
    "matplotlib": "notebooks",
}


#: What ``module:factory`` may make, with the optional package it needs (None: none).
FACTORY_KINDS: tuple[tuple[str, str | None], ...] = (
    ("a Gymnasium env", None),
    ("a Gymnasium vector env", None),
    ("a PettingZoo AEC or parallel env", "pettingzoo"),
    ("a dm_env env", "dm_env"),
    ("a TorchRL env", "torchrl"),
)


def _with_extra(text: str, package: str | None) -> str:
    return text if package is None else f"{text} (extra {OPTIONAL_EXTRAS[package]})"


def env_id_forms(*, globs: bool = False, short: bool = False) -> str:
    """Every form of ENV_ID that :func:`resolve_target` accepts, each with the extra of
    pyproject that installs what it needs, for ``--help`` (``globs``: the command expands
    globs over the registry too; ``short``: one example per form, the JAX libraries by
    prefix). A JAX library's extra bears its prefix's name."""
    registry = "a registered Gymnasium id (CartPole-v1)"
    many = (
        "; or a glob over any of these ('CartPole-*', 'gymnax:*', 'pettingzoo.classic.*_v?:env'): several "
        "environments are a sweep, each checked in a process of its own"
    ) if globs else ""
    if short:
        prefixes = ", ".join(f"{prefix}:" for prefix in JAX_EXAMPLES)
        return (f"{registry}, module:factory, or LIBRARY:NAME of a JAX library ({prefixes}; its extra bears its "
                f"name){many}")
    factories = ", ".join(_with_extra(text, package) for text, package in FACTORY_KINDS)
    jax = ", ".join(f"{prefix}:{name} (extra {prefix})" for prefix, name in JAX_EXAMPLES.items())
    return (
        f"{registry}; module:factory, a class or function (its module imported from the working "
        f"directory too) that makes {factories} or a JAX env; or LIBRARY:NAME, a JAX env that "
        f"LIBRARY makes: {jax}{many}"
    )


class CommandError(Exception):
    """A failure the command reports as one line, with exit status 2 (``main`` prints it).
    ``reason`` says what kind, for ``--json`` (and a sweep reading it): ``"cannot make"``
    (the environment cannot be made here: its constructor, an unknown id, a missing
    package), ``"timeout"`` (the check did not end within its limit) or ``"error"``."""

    reason = "error"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class CannotMakeError(CommandError):
    """The environment named by ENV_ID cannot be made here (its constructor raised or
    called ``sys.exit``, an unknown id or module, a missing package)."""

    reason = "cannot make"


def one_line(error: BaseException) -> str:
    """``Type: message`` of an exception, on one line (a multi-line message is joined)."""
    message = "; ".join(part.strip() for part in str(error).splitlines() if part.strip())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


@dataclass(frozen=True)
class GymnasiumPin:
    """An extra whose install by pip replaces a Gymnasium newer than ``below`` with an older
    one: ``why``, and the install that keeps the user's Gymnasium: the ``dependencies``
    (with the ``jax`` extra), then the packages that pin it, ``--no-deps`` (they work with
    the newer Gymnasium)."""

    below: tuple[int, int]
    why: str
    dependencies: tuple[str, ...]
    no_deps: tuple[str, ...]

    @property
    def keep(self) -> str:
        """The install, as one shell line run from the checkout."""
        return f"pip install '.[jax]' {' '.join(self.dependencies)} && pip install --no-deps {' '.join(self.no_deps)}"


_GYMNAX = "gymnax 1.0.1 requires gymnasium<1.4 (and works with 1.4)"
_GYMNAX_DEPENDENCIES = ("flax", "matplotlib", "seaborn", "six")
#: Extras whose ``pip install`` downgrades Gymnasium 1.4 (found with ``pip install --dry-run``;
#: ``rllib``'s too, but no command advises it: its ``ray`` package is the ``ray`` extra's).
GYMNASIUM_PINS: dict[str, GymnasiumPin] = {
    "gymnax": GymnasiumPin((1, 4), _GYMNAX, _GYMNAX_DEPENDENCIES, ("gymnax==1.0.1",)),
    "navix": GymnasiumPin(
        (1, 4), f"its ToGymnax wrapper needs gymnax, and {_GYMNAX}", ("'navix>=0.7'", *_GYMNAX_DEPENDENCIES),
        ("gymnax==1.0.1",),
    ),
    "jaxmarl": GymnasiumPin(
        (1, 4),
        f"jaxmarl requires gymnax, and {_GYMNAX}",
        (*_GYMNAX_DEPENDENCIES, "chex", "'jaxtyping>=0.2.28'", "pillow", "safetensors"),
        ("gymnax==1.0.1", "'jaxmarl>=0.1'"),
    ),
}


def _installed_gymnasium() -> tuple[str, tuple[int, ...]] | None:
    """The installed Gymnasium's version, as text and as its leading numbers; None if unknown."""
    from importlib import metadata

    try:
        text = metadata.version("gymnasium")
    except metadata.PackageNotFoundError:
        return None
    numbers = []
    for part in text.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return text, tuple(numbers)


def install_advice(extra: str) -> str:
    """The command that installs ``extra`` from the checkout; for an extra of
    :data:`GYMNASIUM_PINS` while a newer Gymnasium is installed, also what that install does
    to it, and the install that keeps it."""
    advice = f"pip install '.[{extra}]' (from the spacealg checkout)"
    pin = GYMNASIUM_PINS.get(extra)
    installed = _installed_gymnasium()
    if pin is None or installed is None or installed[1] < pin.below:
        return advice
    bound = ".".join(map(str, pin.below))
    return (
        f"{advice}, which replaces your Gymnasium {installed[0]} with one older than {bound} "
        f"({pin.why}); to keep yours: {pin.keep}"
    )


def missing_extra(error: BaseException) -> str | None:
    """The message for a ModuleNotFoundError of an optional package spacealg knows, naming
    the extra that installs it (:func:`install_advice`); None for any other error."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    package = error.name.partition(".")[0]
    extra = OPTIONAL_EXTRAS.get(package)
    if extra is None:
        return None
    return (
        f"needs the optional package {package!r}, which is not installed; install spacealg with "
        f"its {extra!r} extra: {install_advice(extra)}"
    )


def parse_env_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["key=value", ...]`` as keywords; a value is a Python literal (``50``, ``True``,
    ``None``, ``0.5``, ``'text'``, ``[1, 2]``) or else the plain string. Raises CommandError
    for a pair without ``=`` or with an empty or non-identifier key."""
    kwargs: dict[str, Any] = {}
    for pair in pairs or ():
        key, equals, text = pair.partition("=")
        key = key.strip()
        if not equals or not key.isidentifier():
            raise CommandError(f"--env-kwarg takes KEY=VALUE with KEY a Python name, got {pair!r}")
        try:
            kwargs[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            kwargs[key] = text
    return kwargs


def add_common_arguments(parser: argparse.ArgumentParser, environments: bool = True) -> None:
    """The options every subcommand takes: ``--json``, and ``--env-kwarg KEY=VALUE`` where
    it makes ``environments``."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of the text report"
    )
    if not environments:
        return
    parser.add_argument(
        "--env-kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="env_kwarg",
        help="a keyword for the environment's constructor (or gymnasium.make), repeatable; "
        "VALUE is a Python literal (50, True, 'x', [1, 2]) or else a string",
    )


@dataclass
class Target:
    """An environment named on the command line, and how to make it (again)."""

    env_id: str
    factory: Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    construction: str = ""  # Python that makes it, for reproduction snippets
    imports: tuple[str, ...] = ()

    def make(self) -> Any:
        """A new environment; exceptions propagate (wrap the call in :func:`making`); a
        factory that returns None (it forgot its ``return``) is a TypeError saying so."""
        built = self.factory(**self.kwargs)
        if built is None:
            raise TypeError(f"{self.env_id} returned None, not an environment (does the factory return it?)")
        return built


def _call_text(callee: str, positional: Sequence[str], kwargs: dict[str, Any]) -> str:
    return f"{callee}({', '.join([*positional, *(f'{k}={v!r}' for k, v in kwargs.items())])})"


def _gymnasium_target(env_id: str, kwargs: dict[str, Any], checker: bool) -> Target:
    import gymnasium

    options = {} if checker else {"disable_env_checker": True}

    def make(**given: Any) -> Any:
        return gymnasium.make(env_id, **options, **given)

    construction = "env = " + _call_text("gymnasium.make", [repr(env_id)], {**options, **kwargs})
    return Target(env_id, make, kwargs, construction, ("import gymnasium",))


def _registered(env_id: str) -> bool:
    import gymnasium

    return env_id in gymnasium.registry


def _module_target(env_id: str, kwargs: dict[str, Any], checker: bool) -> Target:
    module_name, _, attribute = env_id.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise CannotMakeError(
                f"cannot make {env_id!r}: there is no module {module_name!r} (looked in the working "
                f"directory and the installed packages); ENV_ID is a registered Gymnasium id or module:factory"
            ) from None
        reason = missing_extra(error) or one_line(error)
        raise CannotMakeError(f"cannot make {env_id!r}: importing {module_name!r} failed: {reason}") from error
    except Exception as error:
        raise CannotMakeError(f"cannot make {env_id!r}: importing {module_name!r} failed: {one_line(error)}") from error
    factory = getattr(module, attribute, None) if attribute.isidentifier() else None
    if factory is None:
        if _registered(env_id) or _registered(attribute):  # Gymnasium's "module:EnvId" syntax
            return _gymnasium_target(env_id, kwargs, checker)
        raise CannotMakeError(
            f"cannot make {env_id!r}: module {module_name!r} ({getattr(module, '__file__', None) or 'namespace'}) "
            f"has no attribute {attribute!r}, and {attribute!r} is not a registered Gymnasium id"
        )
    if not callable(factory):
        raise CannotMakeError(
            f"cannot make {env_id!r}: {module_name}.{attribute} is a {type(factory).__name__}, "
            "not a class or function that makes an environment"
        )
    head = attribute
    construction = "env = " + _call_text(head, [], kwargs)
    return Target(env_id, factory, kwargs, construction, (f"from {module_name} import {head}",))


def resolve_target(env_id: str, env_kwargs: Sequence[str] | None = None, *, checker: bool = False) -> Target:
    """The :class:`Target` named by ENV_ID (see the module docstring), with the keywords of
    ``--env-kwarg``. ``checker=False`` turns Gymnasium's passive env checker off (spacealg
    checks for itself). Raises CommandError when ENV_ID cannot name an environment."""
    if is_space_document(env_id):
        raise CommandError(
            f"{env_id!r} names a space document, not an environment (spacealg describe {env_id} describes its space)"
        )
    kwargs = parse_env_kwargs(env_kwargs)
    if os.getcwd() not in sys.path:  # module:factory resolves from the working directory, as python -m
        sys.path.insert(0, os.getcwd())
    if is_jax_id(env_id):  # gymnax:CartPole-v1, jumanji:Snake-v1, pgx:connect_four (issue 24)
        return _jax_target(env_id, kwargs)
    if ":" in env_id and not env_id.startswith(":"):
        return _module_target(env_id, kwargs, checker)
    return _gymnasium_target(env_id, kwargs, checker)


def _jax_target(env_id: str, kwargs: dict[str, Any]) -> Target:
    """``library:name``: the library's maker (``gymnax.make(name, **kwargs)``, ...; see
    :data:`spacealg.adapters.envs.MAKERS`), the library imported lazily (a missing
    one: CommandError naming the extra that installs it)."""
    from spacealg.adapters.envs import jax_maker

    def make(**given: Any) -> Any:
        return jax_maker(env_id, given)[0]()

    try:
        _, construction, imports = jax_maker(env_id, kwargs)
    except ModuleNotFoundError as error:
        raise CannotMakeError(f"cannot make {env_id!r}: {missing_extra(error) or one_line(error)}") from None
    return Target(env_id, make, kwargs, construction, imports)


def is_space_document(argument: str) -> bool:
    """Whether a command-line argument names a JSON space document rather than an
    environment: ``-`` (standard input) or a path ending in ``.json``."""
    return argument == "-" or argument.lower().endswith(".json")


def read_space_document(argument: str) -> Any:
    """The space of the JSON document at path ``argument`` (``-``: standard input), read by
    :func:`spacealg.from_json`. Raises CommandError for a file that cannot be read, and
    for a malformed document with ``from_json``'s DocumentError as one line."""
    from spacealg.serialize import from_json

    try:
        text = sys.stdin.read() if argument == "-" else Path(argument).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        where = "standard input" if argument == "-" else repr(argument)
        raise CommandError(f"cannot read the space document {where}: {one_line(error)}") from None
    try:
        return from_json(text)
    except ValueError as error:  # DocumentError, and any check of a space's constructor
        raise CommandError(one_line(error)) from None


@contextlib.contextmanager
def making(env_id: str) -> Iterator[None]:
    """Turn any exception raised inside (a constructor that raises, an unknown id, a
    missing dependency) into a one-line CommandError naming ENV_ID; Ctrl-C passes through."""
    try:
        yield
    except CommandError:
        raise
    except SystemExit as error:  # sys.exit() in a constructor or its module: not the command's own exit
        raise CannotMakeError(f"cannot make {env_id!r}: it called sys.exit({error.code!r})") from None
    except Exception as error:
        extra = missing_extra(error)
        if extra is not None:
            raise CannotMakeError(f"cannot make {env_id!r}: {extra}") from error
        raise CannotMakeError(f"cannot make {env_id!r}: {one_line(error)}") from error


def env_source(env_id: str, env_kwargs: Sequence[str] | None = None) -> Any:
    """The :class:`spacealg.testing.engine.resolve.EnvSource` that ``spacealg check`` hands to the
    checkers: ENV_ID resolved by :func:`resolve_target` (so ``check`` and ``describe`` agree,
    ``--env-kwarg`` included), with a reproduction snippet that makes it the same way."""
    from spacealg.testing.engine.resolve import EnvSource

    target = resolve_target(env_id, env_kwargs)

    def build(**given: Any) -> Any:  # render_mode=...: the render probes, as the API's
        return target.factory(**{**target.kwargs, **given})

    return EnvSource(target.make, env_id, target.construction, target.imports, build=build)


def passed_document(env_id: str, spaces: Sequence[tuple[str, str]], report: Any) -> dict[str, Any]:
    """``spacealg check --json`` for a check that passed (an EnvCheckReport): every property
    held or not checked (with why), the warnings
    (:func:`spacealg.testing.engine.verdicts.report_document`)."""
    from spacealg.testing.engine.verdicts import report_document

    return _document(env_id, spaces, report_document(report))


def failed_document(env_id: str, spaces: Sequence[tuple[str, str]], error: Any) -> dict[str, Any]:
    """``spacealg check --json`` for broken properties (an EnvCheckError), every one with
    its reproduction (:func:`spacealg.testing.engine.verdicts.error_document`)."""
    from spacealg.testing.engine.verdicts import error_document

    return _document(env_id, spaces, error_document(error))


def _document(env_id: str, spaces: Sequence[tuple[str, str]], body: dict[str, Any]) -> dict[str, Any]:
    status = EXIT_OK if body["status"] == "passed" else EXIT_FAILED
    return {"command": "check", "env_id": env_id, "spaces": dict(spaces), "exit_status": status, **body}


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (:func:`spacealg.testing.engine.verdicts.jsonable`)."""
    from spacealg.testing.engine.verdicts import jsonable as as_json

    return as_json(value)


#: Seconds between a Ctrl-C and the forced exit, if the KeyboardInterrupt gets swallowed.
INTERRUPT_GRACE = 3.0


@contextlib.contextmanager
def interrupts(command: str) -> Iterator[None]:
    """Ctrl-C inside ends the command cleanly, whatever is running.

    The first Ctrl-C raises KeyboardInterrupt (the command unwinds, closing what it opened,
    and :func:`spacealg.cli.main` prints one line and returns 130). Code that swallows it (an
    environment's ``__del__`` or a callback, where Python only prints the exception) cannot
    keep the command running: :data:`INTERRUPT_GRACE` seconds later, or at a second Ctrl-C,
    the process prints the same line and exits with status 130. Such swallowed interrupts
    are not printed as tracebacks. Outside the main thread this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    message = f"spacealg {command}: interrupted (Ctrl-C)\n"
    timers: list[threading.Timer] = []

    def exit_now() -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.write(message)
            sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)

    def on_sigint(signum: int, frame: Any) -> None:
        if timers:  # a second Ctrl-C, or the first one was swallowed
            exit_now()
        timer = threading.Timer(INTERRUPT_GRACE, exit_now)
        timer.daemon = True
        timers.append(timer)
        timer.start()
        raise KeyboardInterrupt

    def unraisable(info: Any) -> None:
        if not isinstance(info.exc_value, KeyboardInterrupt):
            previous_hook(info)

    previous_handler = signal.signal(signal.SIGINT, on_sigint)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        for timer in timers:
            timer.cancel()
        signal.signal(signal.SIGINT, previous_handler)
        sys.unraisablehook = previous_hook


JSON_STREAM: list[Any] = []
"""Where :func:`emit_json` writes (the real stdout, held while :func:`json_stdout` sends
everything else printed, by the environment or its module too, to stderr)."""


@contextlib.contextmanager
def json_stdout(enabled: bool) -> Iterator[None]:
    """With ``--json``: inside, ``print`` goes to stderr, so that stdout holds the one JSON
    document :func:`emit_json` writes and nothing else."""
    if not enabled:
        yield
        return
    JSON_STREAM.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        JSON_STREAM.pop()


def emit_json(document: dict[str, Any]) -> None:
    """Print ``document`` as one JSON document on stdout (see :func:`jsonable`)."""
    stream = JSON_STREAM[-1] if JSON_STREAM else sys.stdout
    print(json.dumps(jsonable(document), indent=2), file=stream, flush=True)
