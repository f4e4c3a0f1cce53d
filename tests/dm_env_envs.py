"""Small dm_env and TorchRL environments for the foreign checkers and describe (issue 15)."""

import dm_env
import numpy as np
from dm_env import specs


class Catch(dm_env.Environment):
    """A tiny dm_env environment: move left/stay/right toward a target; ends after 5 steps."""
    def __init__(self, bad_discount=False):
        self.bad_discount = bad_discount
        self.t = 0
    def reset(self):
        self.t = 0
        return dm_env.restart(np.zeros(2, np.float32))
    def step(self, action):
        self.t += 1
        obs = np.full(2, self.t / 5, np.float32)
        if self.t >= 5:
            self.t = 0
            return dm_env.termination(1.0, obs)
        return dm_env.transition(0.0, obs, discount=2.0 if self.bad_discount else 1.0)
    def observation_spec(self):
        return specs.BoundedArray((2,), np.float32, 0.0, 1.0, "obs")
    def action_spec(self):
        return specs.DiscreteArray(3, name="action")


def make_torchrl_cartpole():
    """A TorchRL environment: Gymnasium's CartPole through TorchRL's GymEnv."""
    from torchrl.envs import GymEnv

    return GymEnv("CartPole-v1")


def make_gymnax_cartpole():
    """gymnax's CartPole, as the (env, params) pair gymnax.make returns."""
    import gymnax

    return gymnax.make("CartPole-v1")


def make_jumanji_snake():
    """Jumanji's Snake."""
    import jumanji

    return jumanji.make("Snake-v1")


def make_torchrl_cartpole_narrow():
    """CartPole through TorchRL, declaring observations within [-0.01, 0.01]: CartPole leaves them."""
    from torchrl.data import Bounded, Composite

    env = make_torchrl_cartpole()
    env.observation_spec = Composite(observation=Bounded(-0.01, 0.01, shape=(4,)))
    return env
