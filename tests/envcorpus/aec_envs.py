"""Small PettingZoo AEC environments: a sound game and variants with one bug each."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector

PILE = 20


class TakeAway(AECEnv):
    """Two players take 1, 2 or 3 stones in turn from a pile of 10 to 15 (drawn from the
    seed); who takes the last stone wins. The observation is the pile and the mask of
    legal takes (``observation["action_mask"]``, int8); taking more than the pile is an
    illegal move that loses at once (PettingZoo's convention for its classic games). The
    state is the pile and the turn; ``max_cycles`` bounds a game (it is never reached)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "take_away_v0", "render_modes": ["ansi"], "is_parallelizable": False}
    TOLL = 0.0  # a reward every take costs the taker
    MAX_CYCLES = 20

    def __init__(self, render_mode: str | None = None) -> None:
        self.possible_agents = self.players = ["player_0", "player_1"]
        self.render_mode = render_mode
        self.max_cycles = self.MAX_CYCLES
        self.state_space = spaces.Box(0, PILE, shape=(2,), dtype=np.int64)
        self.rng = np.random.default_rng()

    @functools.cache  # noqa: B019 - the same object per agent, as PettingZoo wants
    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Dict(
            {
                "observation": spaces.Box(0, PILE, shape=(1,), dtype=np.int64),
                "action_mask": spaces.Box(0, 1, shape=(3,), dtype=np.int8),
            }
        )

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(3)  # take action + 1 stones

    def _start(self) -> int:
        return int(self.rng.integers(10, 16))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.pile = self._start()
        self.agents = list(self.players)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()
        self.turns = 0

    def _mask(self) -> np.ndarray:
        return np.array([self.pile >= k for k in (1, 2, 3)], dtype=np.int8)

    def observe(self, agent: str) -> Any:
        return {"observation": np.array([self.pile], dtype=np.int64), "action_mask": self._mask()}

    def state(self) -> np.ndarray:
        return np.array([self.pile, self.players.index(self.agent_selection)], dtype=np.int64)

    def _end(self, winner: str, loser: str, illegal: bool = False) -> None:
        self.rewards[winner], self.rewards[loser] = 1.0, -1.0
        self.terminations = dict.fromkeys(self.agents, True)
        if illegal:
            self.infos[loser] = {"illegal_move": True}

    def _finish_dead(self, action: Any) -> None:
        self._was_dead_step(action)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._finish_dead(action)
            return
        other = self.players[1 - self.players.index(agent)]
        self._settle(agent)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.TOLL:
            self.rewards[agent] = -self.TOLL
        take = self._take(action)
        if take > self.pile:
            self._end(other, agent, illegal=True)
        else:
            self.pile -= take
            if self.pile == 0:
                self._end(agent, other)
        self.turns += 1
        self._limit()
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()

    def _take(self, action: Any) -> int:
        return int(action) + 1

    def _settle(self, agent: str) -> None:
        """The agent acts: what it was owed has been paid by last()."""
        self._cumulative_rewards[agent] = 0.0

    def _limit(self) -> None:
        if self.turns >= self.max_cycles * len(self.players):
            self.truncations = dict.fromkeys(self.agents, True)

    def render(self) -> Any:
        return "o" * self.pile if self.render_mode == "ansi" else None

    def close(self) -> None:
        pass


class StuckTakeAway(TakeAway):
    """Bug: with exactly four stones left the mask is computed for a pile of zero, so it
    allows no move although the player must act (an action sequence reaching pile 4)."""

    def _mask(self) -> np.ndarray:
        if self.pile == 4:
            return np.zeros(3, dtype=np.int8)
        return super()._mask()


class LingeringTakeAway(TakeAway):
    """Bug: stepping a finished player with None does not remove it from ``env.agents``
    (``_was_dead_step`` forgotten), so the game never empties (only after a game ends)."""

    def _finish_dead(self, action: Any) -> None:
        self.agent_selection = self._selector.next()


class FreshSpaceTakeAway(TakeAway):
    """Bug: ``observation_space(agent)`` builds a new space on every call (the cache was
    dropped), breaking identity and per-space seeding."""

    def observation_space(self, agent: str) -> spaces.Space:  # type: ignore[override]
        return TakeAway.observation_space.__wrapped__(self, agent)  # type: ignore[attr-defined]


class DeepPileTakeAway(TakeAway):
    """Bug: some seeds start with a pile of 21, beyond the state and observation spaces'
    high of 20 (a specific seed)."""

    def _start(self) -> int:
        return int(self.rng.integers(10, 22))


class _SeededOnce:
    """The bug of a generator seeded once, when the game is built, and a reset that ignores its
    seed (mixed in before the game's class)."""

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode)  # type: ignore[call-arg]
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=None, options=options)  # type: ignore[misc]


class SeedlessTakeAway(_SeededOnce, TakeAway):
    """Bug: reset ignores its seed (the generator is seeded once, when the game is built):
    every seed starts the same pile, while successive resets differ."""


class GustyTakeAway(TakeAway):
    """A sound game without a mask (a take beyond the pile loses at once) whose pile always
    starts at 12, where a gust drawn from the seeded generator blows away one more stone now
    and then: different seeds differ only after the first take."""

    @functools.cache  # noqa: B019 - the same object per agent, as PettingZoo wants
    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Box(0, PILE, shape=(1,), dtype=np.int64)

    def observe(self, agent: str) -> Any:
        return np.array([self.pile], dtype=np.int64)

    def _start(self) -> int:
        return 12

    def _take(self, action: Any) -> int:
        take = int(action) + 1
        if take > self.pile:
            return take
        return min(take + int(self.rng.integers(0, 2)), self.pile)


class SeededOnceGustyTakeAway(_SeededOnce, GustyTakeAway):
    """Bug: the generator is seeded once, when the game is built, and reset ignores its
    seed; the pile always starts at 12, so only the gusts of the takes show it (16 seeds on
    fresh games, then a take)."""


class EndlessTakeAway(TakeAway):
    """Bug: declares ``max_cycles`` = 3 but never enforces it, so a game of small takes
    runs past three cycles (an action sequence of small takes)."""

    MAX_CYCLES = 3

    def _limit(self) -> None:
        pass


class CrashingTakeAway(TakeAway):
    """Bug: an illegal take (more stones than the pile) is not handled: it indexes past a
    table and raises IndexError (found only with ``illegal_actions=True``)."""

    def _take(self, action: Any) -> int:
        take = int(action) + 1
        if take > self.pile:
            return (1, 2, 3)[take + 3]
        return take


class TollTakeAway(TakeAway):
    """Sound: every take costs the taker 0.1, so rewards arrive at every step and the
    cumulative rewards of ``last()`` are sums over several steps."""

    TOLL = 0.1


class ForgetfulTakeAway(TollTakeAway):
    """Bug: ``_cumulative_rewards[agent]`` is not zeroed when the agent acts, so ``last()``
    pays old tolls again (``last()`` still equals ``_cumulative_rewards``: an action
    sequence in which a player acts twice)."""

    def _settle(self, agent: str) -> None:
        pass


class SharedBoardTakeAway(TakeAway):
    """Bug: ``observe`` hands out one observation dict whose arrays it updates in place, so
    the observation ``last()`` gave a player changes when the next player observes (the
    agent-step after any take)."""

    def observe(self, agent: str) -> Any:
        board = self.__dict__.setdefault(
            "board", {"observation": np.zeros(1, dtype=np.int64), "action_mask": np.zeros(3, dtype=np.int8)}
        )
        board["observation"][0] = self.pile
        board["action_mask"][:] = self._mask()
        return board


class PerPlayerBoardTakeAway(TakeAway):
    """Bug: ``observe`` keeps one observation dict per player and updates its arrays in
    place (a reset makes new ones), so the observation ``last()`` gave a player changes when
    that player next observes, two agent-steps later (after any two takes)."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.boards: dict[str, dict[str, np.ndarray]] = {}
        super().reset(seed, options)

    def observe(self, agent: str) -> Any:
        board = self.boards.setdefault(
            agent, {"observation": np.zeros(1, dtype=np.int64), "action_mask": np.zeros(3, dtype=np.int8)}
        )
        board["observation"][0] = self.pile
        board["action_mask"][:] = self._mask()
        return board


class PerPlayerFreshBoardTakeAway(PerPlayerBoardTakeAway):
    """Sound: ``observe`` keeps one observation dict per player but hands out a copy of it,
    so an observation once returned is never changed (the twin of
    :class:`PerPlayerBoardTakeAway`)."""

    def observe(self, agent: str) -> Any:
        board = super().observe(agent)
        return {key: value.copy() for key, value in board.items()}


class UnlistedTakeAway(TakeAway):
    """Sound: declares no ``possible_agents`` (as an environment whose agents spawn) and a
    ``max_cycles`` of 3 that truncates most games (a game takes 4 to 15 turns)."""

    MAX_CYCLES = 3

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        del self.possible_agents


class UnlistedEndlessTakeAway(EndlessTakeAway):
    """Bug: declares ``max_cycles`` = 3 but never enforces it, and no ``possible_agents``
    (so the bound was never applied: an action sequence of small takes)."""

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        del self.possible_agents


class BufferPerPlayerTakeAway(TakeAway):
    """Bug: ``observe`` hands out one observation dict per player, updated in place whenever
    that player observes again, so what ``last()`` gave a player changes at its next turn
    (two agent-steps later: each player's buffer is its own)."""

    def observe(self, agent: str) -> Any:
        boards = self.__dict__.setdefault("boards", {})
        board = boards.setdefault(
            agent, {"observation": np.zeros(1, dtype=np.int64), "action_mask": np.zeros(3, dtype=np.int8)}
        )
        board["observation"][0] = self.pile
        board["action_mask"][:] = self._mask()
        return board


class ArrayRewardTakeAway(TakeAway):
    """Bug: every reward is a (1,)-shaped array (``last()`` too), not a scalar."""

    def step(self, action: Any) -> None:
        super().step(action)
        self.rewards = {a: np.array([r]) for a, r in self.rewards.items()}
        self._cumulative_rewards = {a: np.array([r]).reshape(-1)[:1] for a, r in self._cumulative_rewards.items()}
