"""The properties :func:`~spacealg.testing.check_jax_env` checks, by name, with their laws and
preconditions."""

from __future__ import annotations

from spacealg.testing.engine.runner import ILLEGAL, MASKED, REPLAYED, STEPPED, Precondition

__all__ = ["EAGER", "JAX_PRECONDITIONS", "JAX_PROPERTIES", "LIMIT"]

JAX_PROPERTIES: dict[str, str] = {
    "declared-spaces": "the environment declares observation and action spaces (gymnax spaces, Jumanji "
    "specs, spacealg spaces) that spacealg's adapters convert and that actions can be drawn from",
    "no-exception": "reset and step trace, compile (jit, vmap, lax.scan) and run without raising",
    "compile-once": "reset's and step's outputs keep one pytree structure, shapes, dtypes and weak-type "
    "flags, the state carried by step has reset's type, and lax.scan over steps traces step once",
    "observation-in-space": "every observation (at reset, after each step, and the final observation of "
    "an episode) is a member of the declared observation space (values and shapes)",
    "declared-dtypes": "every observation leaf has the dtype its space declares (JAX's rule: a 64-bit "
    "declaration holds as its 32-bit form without x64)",
    "action-in-space": "every action drawn by the library's own sampler is a member of its action space",
    "reward-in-space": "every reward is a real (not bool) array of the declared reward shape and dtype "
    "(a scalar where none is declared)",
    "discount-in-space": "every discount is a member of the declared discount spec and lies in [0, 1]",
    "finite-values": "observations and rewards hold no NaN or infinity",
    "episode-end": "episodes end as the library defines them: done/terminated/truncated are bool scalars; "
    "Jumanji and XLand-MiniGrid: reset gives StepType.FIRST and step MID or LAST",
    "max-episode-steps": "where the library promises an episode limit (gymnax's params.max_steps_in_episode, "
    "XLand-MiniGrid's params.max_steps), every episode ends by that step",
    "info-dict": "gymnax's step returns its info as a dict (gymnax 1.x holds the final observation in it)",
    "action-mask": "a published legal-action mask has a shape the action space explains and allows at "
    "least one action in every state the agent acts in (a mask with one row per factor or agent, or "
    "JaxMARL's dict of per-agent masks: in some row or agent, since a finished agent's may be empty)",
    "illegal-action": "an action outside the mask breaks none of the laws above",
    "purity": "the same key and actions give the same trajectory, compiled or not, run after run, and a step "
    "run eagerly leaves the state it is given unchanged",
    "jit-eager": "jit gives what eager execution gives (up to float rounding: compared step by step from "
    "identical inputs)",
    "batching": "row i of the vmapped rollout over keys k_0..k_n equals the unbatched rollout with k_i",
    "global-rng": "reset and step take their randomness from the key only, never from Python's or "
    "NumPy's global random state",
}
"""The properties ``check_jax_env`` checks, by name: what each law states (the report and
the reproduction quote it)."""

LIMIT = Precondition(
    "limit",
    "no episode ran to the promised episode limit: every one ended sooner, or the limit lies beyond the steps "
    "drawn (max_steps, and the long examples' horizon of at most 2,000 steps)",
)
EAGER = Precondition(
    "eager", "no example ran eagerly (one in 64 does, eager_steps of its steps; eager_steps=0: none)"
)

JAX_PRECONDITIONS: dict[str, tuple[Precondition, ...]] = {
    **dict.fromkeys(("no-exception", "reward-in-space", "action-in-space", "info-dict", "episode-end",
                     "discount-in-space"), (STEPPED,)),
    "max-episode-steps": (LIMIT,),
    "action-mask": (MASKED,),
    "illegal-action": (ILLEGAL,),
    **dict.fromkeys(("batching", "purity", "global-rng"), (REPLAYED,)),
    "jit-eager": (EAGER,),
}
"""What an example must reach for each property to count as checked (the others: a reset
or the one-off probes)."""
