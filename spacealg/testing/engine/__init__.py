"""The checker's engine: what every kind of environment shares (the search and its budget,
the refinement of a failure, replays, verdicts, probes, lints and reproduction snippets).
It knows no kind of environment: the kinds (:mod:`spacealg.testing.kinds`) state theirs in
an :class:`~spacealg.testing.engine.runner.EnvKind` and the registry
(:mod:`spacealg.testing.registry`) holds them."""
