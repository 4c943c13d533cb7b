"""A character-level GPT (the shape of nanoGPT / minGPT, small): token and position
embeddings, causal self-attention with a `tril` mask buffer, pre-norm blocks with GELU,
AdamW with weight-decay groups, gradient clipping, then sampling with top-k."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "to be or not to be that is the question whether tis nobler in the mind to suffer "


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd)
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=16, n_layer=2, n_head=2, n_embd=32):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, lr):
        decay = [p for n, p in self.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.named_parameters() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, top_k=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size :])
            logits = logits[:, -1, :]
            if top_k is not None and hasattr(torch, "topk"):
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            if hasattr(torch, "multinomial"):
                idx_next = torch.multinomial(probs, num_samples=1)
            else:
                idx_next = probs.argmax(dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


CHARS = sorted(set(TEXT))


def build():
    torch.manual_seed(0)
    return GPT(len(CHARS))


def train(model, steps=5, batch_size=4):
    data = torch.tensor([CHARS.index(c) for c in TEXT], dtype=torch.long)
    rng = np.random.default_rng(0)
    optimizer = model.configure_optimizers(weight_decay=0.1, lr=3e-3)
    losses = []
    for _ in range(steps):
        starts = rng.integers(0, len(data) - model.block_size - 1, batch_size)
        x = torch.stack([data[s : s + model.block_size] for s in starts])
        y = torch.stack([data[s + 1 : s + 1 + model.block_size] for s in starts])
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


def sample(model, length=20):
    model.eval()
    start = torch.zeros((1, 1), dtype=torch.long)
    return "".join(CHARS[i] for i in model.generate(start, length, top_k=5)[0].tolist())


if __name__ == "__main__":
    model = build()
    for step, value in enumerate(train(model, steps=100)):
        print(f"step {step} loss {value:.4f}")
    print(sample(model))
