"""transformers' BertEmbeddings, as a module of its own: word + position + token type embeddings,
then LayerNorm (test/CPU/Inputs/gather_checks.py, bench/layout_gathers.py)."""

import torch


class BertEmbeddings(torch.nn.Module):
    def __init__(self, vocab, width, positions):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, width)
        self.position = torch.nn.Embedding(positions, width)
        self.token_type = torch.nn.Embedding(2, width)
        self.norm = torch.nn.LayerNorm(width, eps=1e-12)

    def forward(self, ids, token_types):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.norm(self.word(ids) + self.position(positions) + self.token_type(token_types))
