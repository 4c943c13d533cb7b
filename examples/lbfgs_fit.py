"""Fitting sine waves with an LSTMCell and L-BFGS in float64 (PyTorch's
time_sequence_prediction example, small)."""

import numpy as np
import torch
import torch.nn as nn


class Sequence(nn.Module):
    def __init__(self, hidden=12):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input):
        outputs = []
        n = input.size(0)
        h_t = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t = torch.zeros(n, self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(n, self.hidden, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            outputs.append(self.linear(h_t2))
        return torch.cat(outputs, dim=1)


def build():
    torch.manual_seed(0)
    return Sequence().double()


def train(model, steps=3):
    x = np.arange(20) + np.random.default_rng(0).integers(-4, 4, (6, 1))
    wave = torch.from_numpy(np.sin(x / 3.0))
    input, target = wave[:, :-1], wave[:, 1:]
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.8, max_iter=4)
    losses = []

    def closure():
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(optimizer.step(closure).item())
    return losses


if __name__ == "__main__":
    for step, value in enumerate(train(build(), steps=10)):
        print(f"step {step} loss {value:.6f}")
