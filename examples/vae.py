"""A variational autoencoder (PyTorch's VAE example, small): reparameterisation,
binary cross-entropy plus the KL term, Adam. The noise comes from NumPy so that runs
are reproducible across frameworks."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, features=36, hidden=20, latent=4):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, features)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x)
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def build():
    torch.manual_seed(0)
    return VAE()


def train(model, steps=8):
    rng = np.random.default_rng(0)
    data = torch.from_numpy((rng.random((32, 36)) > 0.5).astype(np.float32))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        eps = torch.from_numpy(rng.standard_normal((32, 4)).astype(np.float32))
        optimizer.zero_grad()
        recon, mu, logvar = model(data, eps)
        loss = loss_function(recon, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / len(data))
    return losses


if __name__ == "__main__":
    for step, value in enumerate(train(build(), steps=40)):
        print(f"step {step} loss {value:.4f}")
