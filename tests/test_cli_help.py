"""What ``spacealg --help`` and the install advice tell a new user (issue 36.2, 36.3): every
ENV_ID form the resolver accepts is named, with its extra, in ``--help`` and docs/cli.md;
advice for an extra that pins an older Gymnasium says so and how to keep the user's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spacealg.adapters.envs import JAX_EXAMPLES, JAX_PREFIXES
from spacealg.cli import build_parser, common
from spacealg.cli.common import FACTORY_KINDS, GYMNASIUM_PINS, OPTIONAL_EXTRAS, install_advice, missing_extra

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def _extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _help(command: str) -> tuple[str, str]:
    """The description and the ENV_ID help of a subcommand, as --help prints them (one line)."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    sub = subparsers.choices[command]
    env_id = next(a for a in sub._actions if a.dest == "env_id")
    return " ".join(sub.description.split()), " ".join(env_id.help.split())


@pytest.mark.parametrize("command", ["describe", "check"])
def test_help_names_every_jax_prefix_with_its_extra(command):
    """Each prefix the resolver routes to a JAX library is named in the ENV_ID help and, with
    an example and its extra, in the description: adding a prefix without an extra of its
    name (the rule the help states) fails."""
    description, env_id = _help(command)
    extras = _extras()
    for prefix in JAX_PREFIXES:
        assert f"{prefix}:" in env_id, (command, prefix)
        assert f"{prefix}:{JAX_EXAMPLES[prefix]} (extra {prefix})" in description, (command, prefix)
        assert prefix in extras, f"the help promises an extra {prefix!r}; pyproject has none"


def test_the_jax_extras_install_the_libraries_the_makers_import():
    """``extra PREFIX`` is true: the module each prefix's maker imports is installed by the
    extra of the prefix's name (what the CLI advises when it is missing)."""
    from spacealg.adapters.envs import MAKERS

    assert set(MAKERS) == set(JAX_PREFIXES)
    for prefix, (module, _, _) in MAKERS.items():
        assert OPTIONAL_EXTRAS[module] == prefix


@pytest.mark.parametrize("command", ["describe", "check"])
def test_help_names_every_other_form(command):
    description, env_id = _help(command)
    for text in (description, env_id):
        assert "registered Gymnasium id (CartPole-v1)" in text and "module:factory" in text
        globs = "or a glob over any of these ('CartPole-*', 'gymnax:*'"
        assert (globs in text) == (command == "check")  # describe expands none
    for kind, package in FACTORY_KINDS:
        assert kind in description
        if package is not None:
            assert f"{kind} (extra {OPTIONAL_EXTRAS[package]})" in description
            assert OPTIONAL_EXTRAS[package] in _extras()
    assert "a JAX env;" in description
    assert ".json" in description and ".json" in env_id if command == "describe" else ".json" not in env_id


def test_the_help_forms_are_what_the_resolver_takes(tmp_path, monkeypatch):
    """Each form the help names resolves to its route: a prefix of the help is a JAX id,
    ``module:factory`` imports the module, anything else is a Gymnasium id (a form the help
    does not name would reach none of these routes untested)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpmod_forms.py").write_text("def make():\n    return 'made'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = common.resolve_target("helpmod_forms:make")
    assert target.make() == "made"
    assert common.resolve_target("CartPole-v1").construction.startswith("env = gymnasium.make('CartPole-v1'")
    for prefix in JAX_PREFIXES:
        assert common.is_jax_id(f"{prefix}:x") and not common.is_jax_id(f"{prefix}:")


def _doc_rows() -> list[list[str]]:
    """The rows of docs/cli.md's ENV_ID table: form, example, extra (backticks dropped)."""
    section = CLI_DOC.split("## Environment ids", 1)[1].split("\n## ", 1)[0]
    return [
        [cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| ENV_ID")
    ]


def test_docs_cli_lists_every_form_with_its_extra():
    rows = _doc_rows()
    examples = {example: extra for _, example, extra in rows}
    for prefix, name in JAX_EXAMPLES.items():
        assert examples.get(f"{prefix}:{name}") == prefix, f"docs/cli.md: no row {prefix}:{name} with extra {prefix}"
    for kind, package in FACTORY_KINDS:
        extra = "none" if package is None else OPTIONAL_EXTRAS[package]
        assert any(kind in form and "module:factory" in form and got == extra for form, _, got in rows), kind
    assert examples.get("CartPole-v1") == "none" and examples.get('"CartPole-*", "gymnax:*"') == "that of the form"
    assert examples.get("space.json, -") == "none"
    assert len(rows) == len(JAX_PREFIXES) + 7  # a new row is a new form: give it a check here


def test_the_check_help_is_the_printed_help():
    done = subprocess.run(
        [sys.executable, "-m", "spacealg", "check", "--help"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    printed = " ".join(done.stdout.split())
    for prefix, name in JAX_EXAMPLES.items():
        assert f"{prefix}:{name} (extra {prefix})" in re.sub(r"(?<=-) ", "", printed), prefix  # argparse wraps at '-'


# -- install advice that says what it does to Gymnasium (36.3) -------------------------------------


def test_advice_for_an_extra_that_pins_gymnasium_says_so(monkeypatch):
    monkeypatch.setattr(common, "_installed_gymnasium", lambda: ("1.4.0", (1, 4, 0)))
    message = missing_extra(ModuleNotFoundError("no gymnax", name="gymnax"))
    assert message is not None
    assert "pip install '.[gymnax]'" in message and "replaces your Gymnasium 1.4.0" in message
    assert message.endswith(f"to keep yours: {GYMNASIUM_PINS['gymnax'].keep}")
    assert "\n" not in message
    assert install_advice("navix").endswith(GYMNASIUM_PINS["navix"].keep)
    assert install_advice("pgx") == "pip install '.[pgx]' (from the spacealg checkout)"  # pins nothing


def test_advice_is_plain_where_the_installed_gymnasium_fits_the_pin(monkeypatch):
    monkeypatch.setattr(common, "_installed_gymnasium", lambda: ("1.3.0", (1, 3, 0)))
    assert install_advice("gymnax") == "pip install '.[gymnax]' (from the spacealg checkout)"
    monkeypatch.setattr(common, "_installed_gymnasium", lambda: None)
    assert install_advice("gymnax") == "pip install '.[gymnax]' (from the spacealg checkout)"


def test_the_installed_gymnasium_is_read():
    import gymnasium

    text, numbers = common._installed_gymnasium()
    assert text == gymnasium.__version__ and numbers[:2] == tuple(int(n) for n in text.split(".")[:2])


@pytest.mark.parametrize("extra", sorted(GYMNASIUM_PINS))
def test_the_keeping_install_holds_what_the_pinning_packages_require(extra):
    """The keeping install brings every requirement of each package it installs with
    ``--no-deps`` (read from its metadata where it is installed) except Gymnasium, and the
    docs give gymnax's command."""
    from importlib import metadata

    pin = GYMNASIUM_PINS[extra]
    assert pin.keep.startswith("pip install '.[jax]' ") and " && pip install --no-deps " in pin.keep
    named = {re.match(r"'?([A-Za-z0-9_.-]+)", word).group(1).lower() for word in pin.dependencies + pin.no_deps}
    checked = 0
    for package in pin.no_deps:
        name = re.match(r"'?([A-Za-z0-9_.-]+)", package).group(1)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        checked += 1
        for requirement in requires:
            if "extra ==" in requirement:
                continue
            required = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
            if required not in ("gymnasium", "jax", "numpy"):  # the pin left out; spacealg's own
                assert required in named, f"{extra}: the keeping install lacks {required}"
    if not checked:
        pytest.skip(f"none of {pin.no_deps} is installed")
    if extra == "gymnax":
        assert pin.keep in CLI_DOC


def test_the_cli_prints_the_advice_on_one_line():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["gymnax"] = None  # import gymnax -> ModuleNotFoundError
        from spacealg.cli import common, main
        common._installed_gymnasium = lambda: ("1.4.0", (1, 4, 0))
        sys.exit(main(["describe", "gymnax:CartPole-v1"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert GYMNASIUM_PINS["gymnax"].keep in done.stderr
