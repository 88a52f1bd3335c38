"""T5's relative position buckets (transformers' `T5Attention._relative_position_bucket` and the
positions `compute_bias` builds, models/t5/modeling_t5.py, transformers 5.24), as the encoder
(bidirectional) and the decoder (causal, after `past_seen_tokens` cached tokens) compute them: integer
abs, min with zeros_like, log of the positions cast to float, where, min with full_like, arange
differences. The code below is transformers' own."""

import math

import torch


def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    # now relative_position is in the range [0, inf)

    # half of the buckets are for exact increments in positions
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact

    # The other half of the buckets are for logarithmically bigger bins in positions up to max_distance
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )

    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def compute_buckets(query_length, key_length, past_seen_tokens, bidirectional):
    # transformers passes the device of the bias weight; here the input's (CPU or the GPU)
    device = past_seen_tokens.device
    context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None] + past_seen_tokens
    memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
    relative_position = memory_position - context_position  # shape (query_length, key_length)
    return _relative_position_bucket(relative_position, bidirectional=bidirectional)


class T5Bias(torch.nn.Module):
    """T5's attention bias added to scores [batch, heads, q, k] (`T5Attention.compute_bias`): each
    key - query position's bucket (the encoder's, or with `bidirectional=False` the decoder's), its
    row of the [32, heads] table permuted to [heads, q, k]; `past`, the tokens cached before the
    queries (a tensor), if any."""

    def __init__(self, heads, bidirectional=True):
        super().__init__()
        self.bias = torch.nn.Embedding(32, heads)
        self.bidirectional = bidirectional

    def forward(self, scores, past=None):
        q, k = scores.shape[-2:]
        context = torch.arange(q, device=scores.device)[:, None]
        context = context if past is None else context + past
        rel = torch.arange(k, device=scores.device)[None, :] - context
        return scores + self.bias(_relative_position_bucket(rel, bidirectional=self.bidirectional)).permute(2, 0, 1)


def model(past_seen_tokens):
    return (compute_buckets(256, 300, past_seen_tokens, bidirectional=True),
            compute_buckets(256, 300, past_seen_tokens, bidirectional=False))


example_inputs = (torch.tensor(37),)
