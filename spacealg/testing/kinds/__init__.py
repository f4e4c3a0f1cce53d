"""The kinds of environment the checker knows, one module each, each exporting one
:class:`~spacealg.testing.engine.runner.EnvKind` (listed, in recognition order, by
:mod:`spacealg.testing.registry`)."""
