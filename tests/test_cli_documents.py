"""JSON space documents on the command line (issue 36.4): ``spacealg describe space.json``
and ``spacealg describe -`` describe the space ``from_json`` reads, as ``describe`` does in
Python; a malformed document is ``from_json``'s DocumentError on one line, exit status 2."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given

import spacealg as sa
from spacealg.describe import describe, describe_fields
from spacealg.serialize import DocumentError
from spacealg.strategies import spaces

ROOT = Path(__file__).resolve().parents[1]
SPACE = sa.product(sa.Box(-1, 1, (2,)), ("cat", "dog"), sa.Text(4))


def spacealg_cli(*arguments: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spacealg", *arguments],
        cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_describe_a_document_path(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps(sa.to_json(SPACE)))
    done = spacealg_cli("describe", "space.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"space.json\n{describe(SPACE, title='space')}\n"


def test_describe_a_document_on_stdin_as_json(tmp_path):
    done = spacealg_cli("describe", "-", "--json", cwd=tmp_path, stdin=json.dumps(sa.to_json(SPACE)))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["command"] == "describe" and document["document"] == "-"
    (entry,) = document["spaces"]
    assert entry == {"name": "space", "given": repr(SPACE), **describe_fields(SPACE)}


MALFORMED = [
    "not json",
    '{"kind": "box"}',  # no version
    json.dumps({**sa.to_json(sa.Box(0, 1, (2,))), "version": 99}),
    json.dumps({"format": "spacealg.space", "version": 1, "space": {"kind": "nope"}}),
]


@functools.cache
def _fresh_messages() -> dict[str, str]:
    """from_json's message for each of MALFORMED, read in one fresh process (this process may
    know kinds that other tests registered, which an unknown kind's message lists)."""
    fresh = subprocess.run(
        [sys.executable, "-c", "import json, sys, spacealg, spacealg.serialize\nmessages = {}\n"
         "for text in json.load(sys.stdin):\n    try:\n        spacealg.from_json(text)\n"
         "    except spacealg.serialize.DocumentError as e:\n        messages[text] = str(e)\n"
         "print(json.dumps(messages))"],
        input=json.dumps(MALFORMED), capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert fresh.returncode == 0, fresh.stderr
    return json.loads(fresh.stdout)


@pytest.mark.parametrize("text", MALFORMED)
def test_a_malformed_document_is_from_jsons_error_on_one_line(tmp_path, text):
    """The command's line is from_json's message, as a fresh process reads it."""
    with pytest.raises(DocumentError):
        sa.from_json(text)
    expected = f"spacealg describe: DocumentError: {_fresh_messages()[text].strip()}\n"
    (tmp_path / "bad.json").write_text(text)
    from_path = spacealg_cli("describe", "bad.json", cwd=tmp_path)
    for done in (from_path, spacealg_cli("describe", "-", cwd=tmp_path, stdin=text)):
        assert done.returncode == 2
        assert done.stderr == expected and done.stdout == ""


def test_a_document_that_cannot_be_read_exits_2(tmp_path):
    done = spacealg_cli("describe", "missing.json", "--json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("spacealg describe: cannot read the space document 'missing.json': FileNotFoundError")
    assert json.loads(done.stdout)["status"] == "error"


def test_check_points_a_document_to_describe(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps(sa.to_json(SPACE)))
    done = spacealg_cli("check", "space.json", cwd=tmp_path)
    assert done.returncode == 2
    assert "names a space document, not an environment (spacealg describe space.json" in done.stderr


def test_env_kwargs_do_not_apply_to_a_document(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps(sa.to_json(SPACE)))
    done = spacealg_cli("describe", "space.json", "--env-kwarg", "a=1", cwd=tmp_path)
    assert done.returncode == 2 and "--env-kwarg" in done.stderr


@given(space=spaces())
def test_describe_of_a_document_is_describe_of_its_space(space, tmp_path_factory):
    """Law: for every space ``s``, the command describes
    ``from_json(to_json(s))`` exactly as :func:`spacealg.describe.describe` does (in process:
    the same code path as the subprocess tests above)."""
    from spacealg.cli import main

    text = json.dumps(sa.to_json(space))  # every generated space has a document
    path = tmp_path_factory.mktemp("doc") / "s.json"
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["describe", str(path)]) == 0
    assert out.getvalue() == f"{path}\n{describe(sa.from_json(text), title='space')}\n"
