"""BERT's embeddings: word + position + token type, then LayerNorm; 4 sequences of 16 tokens, a
vocabulary of 1000, width 64 fp32. Three gathers, an iota and a LayerNorm."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)  # the same example inputs on every run


def bert_embeddings(ids, token_types, word, position, token_type, weight, bias):
    positions = torch.arange(ids.shape[1])
    h = F.embedding(ids, word) + F.embedding(positions, position) + F.embedding(token_types, token_type)
    return F.layer_norm(h, (h.shape[-1],), weight, bias, eps=1e-12)


model = bert_embeddings
example_inputs = (torch.randint(0, 1000, (4, 16)), torch.randint(0, 2, (4, 16)), torch.randn(1000, 64),
                  torch.randn(16, 64), torch.randn(2, 64), torch.rand(64) + 0.5, torch.randn(64))
