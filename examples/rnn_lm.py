"""A word-level LSTM language model (PyTorch's word_language_model example, small):
embedding, a 2-layer LSTM, a decoder, truncated backpropagation and gradient clipping."""

import numpy as np
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken=50, ninp=16, nhid=24, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid, self.ntoken = nlayers, nhid, ntoken

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output).view(-1, self.ntoken), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (
            weight.new_zeros(self.nlayers, bsz, self.nhid),
            weight.new_zeros(self.nlayers, bsz, self.nhid),
        )


def build():
    torch.manual_seed(0)
    return RNNModel()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train(model, steps=6, bptt=8, batch_size=4):
    rng = np.random.default_rng(0)
    corpus = torch.from_numpy(rng.integers(0, 50, (steps * bptt + 1) * batch_size))
    data = corpus.view(batch_size, -1).t().contiguous()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    hidden = model.init_hidden(batch_size)
    losses = []
    for i in range(0, steps * bptt, bptt):
        source, target = data[i : i + bptt], data[i + 1 : i + 1 + bptt].reshape(-1)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(source, hidden)
        loss = criterion(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    for step, value in enumerate(train(build(), steps=30)):
        print(f"step {step} loss {value:.4f}")
