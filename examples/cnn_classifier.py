"""A small CNN classifier on synthetic 12x12 "digits", with SGD, momentum and a
learning-rate schedule: the shape of PyTorch's MNIST example."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def build():
    torch.manual_seed(0)
    return Net()


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    images = rng.normal(0, 0.3, (n, 1, 12, 12)).astype(np.float32)
    for i, label in enumerate(labels):  # each class lights up one quadrant
        r, c = divmod(int(label), 2)
        images[i, 0, r * 6 : r * 6 + 6, c * 6 : c * 6 + 6] += 1.0
    return torch.from_numpy(images), torch.from_numpy(labels)


def train(model, steps=6):
    images, labels = make_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = StepLR(optimizer, step_size=2, gamma=0.7)
    losses = []
    model.train()
    for _ in range(steps):
        for batch in range(0, len(images), 32):
            optimizer.zero_grad()
            output = model(images[batch : batch + 32])
            loss = F.nll_loss(output, labels[batch : batch + 32])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        correct = (model(images).argmax(dim=1) == labels).sum().item()
    print(f"accuracy {correct / len(labels):.3f}")
    return losses


if __name__ == "__main__":
    for step, value in enumerate(train(build(), steps=20)):
        print(f"step {step} loss {value:.4f}")
