"""Where a zoo model's forward spends host time through torch.compile(backend="fusec"), on a GPU.

    python bench/profile_forward.py llama      # real-width config, bf16, batch 1 x 1 token (decode)

Prints the host time of 100 back-to-back forwards (before the synchronize) for eager, fusec and
Inductor, then cProfile's table of a fusec forward, by own time and by cumulative time.
"""
import time, cProfile, pstats, torch, sys
from fusec.zoo import MODELS
torch.manual_seed(0)
name = sys.argv[1] if len(sys.argv) > 1 else "llama"
m, kw = MODELS[name].build("real"); m = m.eval().cuda().to(torch.bfloat16)
kw = {k: v[:1, :1].cuda() for k, v in kw.items()}
def timeit(f, n=100):
    with torch.no_grad():
        for _ in range(5): f(**kw)
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(n): f(**kw)
        host = (time.perf_counter() - t) / n * 1e6
        torch.cuda.synchronize()
        return host
print("eager host us", timeit(m))
c = torch.compile(m, backend="fusec")
print("fusec host us", timeit(c))
print("fusec host us again", timeit(c))
i = torch.compile(m)
print("inductor host us", timeit(i))
pr = cProfile.Profile(); pr.enable(); timeit(c, 100); pr.disable()
s = pstats.Stats(pr); s.sort_stats("tottime").print_stats(35); s.sort_stats("cumulative").print_stats(35)
