"""REINFORCE on CartPole (PyTorch's reinforcement-learning example, small): a policy
network outputs action logits, `torch.distributions.Categorical` turns them into a
distribution, and the loss is -log pi(a|s) times the normalised discounted return.

The cart-pole dynamics are written here in pure Python (no gym), with their randomness
from Python's `random`. Actions are drawn by inverting the policy's CDF at uniforms from
that same stream, so a run is a function of its seed alone, whatever framework computes
the policy (pass `uniform=None` to `select_action` to sample from torch's generator)."""

import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class CartPole:
    """The classic cart-pole of Barto, Sutton and Anderson (gym's CartPole-v1 physics)."""

    gravity, cart_mass, pole_mass, half_length = 9.8, 1.0, 0.1, 0.5
    force_magnitude, tau = 10.0, 0.02
    angle_limit, position_limit = 12 * 2 * math.pi / 360, 2.4

    def __init__(self, rng, max_steps=200):
        self.rng = rng
        self.max_steps = max_steps
        self.state = None
        self.steps = 0

    def reset(self):
        self.state = [self.rng.uniform(-0.05, 0.05) for _ in range(4)]
        self.steps = 0
        return list(self.state)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_magnitude if action == 1 else -self.force_magnitude
        total_mass = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.half_length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_moment * theta_dot**2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos**2 / total_mass)
        )
        x_acc = temp - pole_moment * theta_acc * cos / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * x_acc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * theta_acc
        self.state = [x, x_dot, theta, theta_dot]
        self.steps += 1
        fallen = abs(x) > self.position_limit or abs(theta) > self.angle_limit
        return list(self.state), 1.0, fallen or self.steps >= self.max_steps


class Policy(nn.Module):
    def __init__(self, observations=4, hidden=32, actions=2):
        super().__init__()
        self.affine1 = nn.Linear(observations, hidden)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(hidden, actions)

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return self.affine2(x)


def select_action(policy, state, uniform=None):
    """An action and its log-probability; `uniform` in [0, 1) picks the action by
    inverting the CDF (None: sample with torch's generator)."""
    logits = policy(torch.tensor(state, dtype=torch.float32).unsqueeze(0))
    m = Categorical(logits=logits)
    if uniform is None:
        action = m.sample()
    else:
        cdf = m.probs.detach().cumsum(-1)
        action = (cdf < uniform).sum(-1).clamp(max=m.probs.shape[-1] - 1)
    return action.item(), m.log_prob(action), m.entropy()


def finish_episode(log_probs, rewards, entropies, gamma=0.99, entropy_weight=0.01):
    """The REINFORCE loss of one episode: returns normalised as a baseline."""
    returns, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    eps = torch.finfo(torch.float32).eps
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + eps)
    log_probs = torch.cat(log_probs)
    policy_loss = -(log_probs * returns).sum()
    return policy_loss - entropy_weight * torch.cat(entropies).sum()


def build():
    torch.manual_seed(0)
    return Policy()


def train(model, steps=8, seed=543, max_steps=60):
    rng = random.Random(seed)
    env = CartPole(rng, max_steps=max_steps)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        state, done = env.reset(), False
        log_probs, rewards, entropies = [], [], []
        while not done:
            action, log_prob, entropy = select_action(model, state, rng.random())
            state, reward, done = env.step(action)
            log_probs.append(log_prob)
            rewards.append(reward)
            entropies.append(entropy)
        optimizer.zero_grad()
        loss = finish_episode(log_probs, rewards, entropies)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    policy = build()
    for episode, value in enumerate(train(policy, steps=60, max_steps=200)):
        print(f"episode {episode} loss {value:.4f}")
