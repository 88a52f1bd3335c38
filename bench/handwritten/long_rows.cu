// Hand-written CUDA (not fusec's code): bf16 LayerNorm of long rows, 4096 x 32768 (64 KB a row),
// the one bench entry under 90% of copy before 2026-11-30. fusec's heuristic holds a row in registers
// over 1024 threads (one block an SM: nothing hides a reduction's barrier); its tuned hybrid holds
// half the row over 512 threads and reads the other half again from L2. The variants here:
//   ln         a row over a cluster of CL CTAs, partial sums combined through distributed shared
//              memory (mapa + ld.shared::cluster, split cluster barriers), with or without an L2
//              evict_last policy on the loads; CL = 1 is the plain row in registers;
//   ln_hybrid  part of the row in registers, the rest read again from L2 or stashed in shared
//              memory (each thread its own slots: no extra barrier); fusec's `row_stash`;
//   ln_smem    the whole row in shared memory, copied by cp.async or by one bulk copy (TMA);
//   ln_persistent  two CTAs an SM loop over the rows, half of each in registers and half stashed,
//              optionally refilling each slot with the next row's vector once used (`long_rows
//              persistent` runs these against the two hybrids, launches timed ten at a time).
// Each variant is checked against float64 on four rows and timed with CUDA events (median of 40),
// with a device copy in the same run; bench/README.md has the table. On the device:
//     nvcc -O3 -arch=sm_90 --use_fast_math -o /tmp/long_rows bench/handwritten/long_rows.cu && /tmp/long_rows
#include "common.cuh"

static constexpr int M = 4096, N = 32768;

__device__ __forceinline__ uint4 ld_hint(const uint4 *p, unsigned long long policy) {
  uint4 u;
  asm volatile("ld.global.L2::cache_hint.v4.b32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p), "l"(policy));
  return u;
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ float2 ld_peer(const float2 *local, unsigned rank) {
  unsigned a = (unsigned)__cvta_generic_to_shared(local), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(a), "r"(rank));
  float2 v; asm volatile("ld.shared::cluster.v2.f32 {%0,%1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote));
  return v;
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// (sum, sum of squares) of the block, in every thread.
template <int W>
__device__ __forceinline__ float2 block_sum2(float2 v, float2 *sh, float2 *total, bool cluster) {
  for (int o = 16; o; o >>= 1) { v.x += __shfl_xor_sync(~0u, v.x, o); v.y += __shfl_xor_sync(~0u, v.y, o); }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float2 r = lane < W ? sh[lane] : make_float2(0.f, 0.f);
    for (int o = 16; o; o >>= 1) { r.x += __shfl_xor_sync(~0u, r.x, o); r.y += __shfl_xor_sync(~0u, r.y, o); }
    if (lane == 0) *total = r;
  }
  if (cluster) { cluster_arrive(); cluster_wait(); } else __syncthreads();
  return *total;
}

// Adds the eight values of `u` and their squares to `s`.
__device__ __forceinline__ void add_moments(uint4 u, float2 &s) {
  float f[8]; unpack(u, f);
  for (int k = 0; k < 8; k++) { s.x += f[k]; s.y += f[k] * f[k]; }
}

// (mean, 1 / standard deviation) of a row of N from its (sum, sum of squares).
__device__ __forceinline__ float2 mean_rstd(float2 s) {
  constexpr float INV_N = 1.f / N;
  float mean = s.x * INV_N;
  return make_float2(mean, rsqrtf(fmaxf(s.y * INV_N - mean * mean, 0.f) + 1e-5f));
}

// LayerNorm of the eight values of `u`: (x - mean) * rstd * w + b, back in bf16.
__device__ __forceinline__ uint4 normalize(uint4 u, uint4 w, uint4 b, float2 m) {
  float f[8], fw[8], fb[8];
  unpack(u, f); unpack(w, fw); unpack(b, fb);
  for (int k = 0; k < 8; k++) f[k] = (f[k] - m.x) * m.y * fw[k] + fb[k];
  return pack(f);
}

// A row of CL*T*V uint4 (8 bf16 each); CTA `rank` of the row's cluster holds T*V of them, V a thread.
template <int T, int V, int CL, bool HINT>
__global__ void __launch_bounds__(T) ln(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                        const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = CL * T * V;
  static_assert(NV * 8 == N, "the variant covers one row");
  __shared__ float2 sh[W];
  __shared__ float2 total;
  unsigned rank = CL > 1 ? cluster_rank() : 0;
  int row = blockIdx.x / CL;
  size_t base = (size_t)row * NV + rank * T * V + threadIdx.x;
  unsigned long long policy = 0;
  if (HINT) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  uint4 v[V];
  for (int j = 0; j < V; j++) v[j] = HINT ? ld_hint(x + base + j * T, policy) : x[base + j * T];
  float2 s = make_float2(0.f, 0.f);
  for (int j = 0; j < V; j++) add_moments(v[j], s);
  s = block_sum2<W>(s, sh, &total, CL > 1);
  if (CL > 1) {
    for (unsigned r = 0; r < CL; r++)
      if (r != rank) { float2 p = ld_peer(&total, r); s.x += p.x; s.y += p.y; }
    cluster_arrive();  // this CTA is done reading its peers: they may exit once all have said so
  }
  float2 m = mean_rstd(s);
  size_t col = rank * T * V + threadIdx.x;
  for (int j = 0; j < V; j++) y[base + j * T] = normalize(v[j], w[col + j * T], b[col + j * T], m);
  if (CL > 1) cluster_wait();
}


// The row staged in shared memory instead of registers: 64 KB a row, three CTAs (rows) an SM, so
// one CTA's loads run while another waits at its reduction's barrier. COPY 0: each thread copies its
// own 16-byte vectors with cp.async (no registers, no barrier: a thread reads back only what it
// copied); COPY 1: one thread copies the whole row with a bulk copy (TMA) that an mbarrier counts.
template <int T, int COPY>
__global__ void __launch_bounds__(T) ln_smem(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                             const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = N / 8;
  extern __shared__ uint4 srow[];
  __shared__ float2 sh[W];
  __shared__ float2 total;
  __shared__ __align__(8) unsigned long long bar;
  int row = blockIdx.x;
  size_t base = (size_t)row * NV;
  unsigned s0 = (unsigned)__cvta_generic_to_shared(srow);
  if (COPY == 0) {
    for (int i = threadIdx.x; i < NV; i += T)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s0 + 16 * i), "l"(x + base + i) : "memory");
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
  } else {
    unsigned mb = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(mb));
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(mb), "r"(NV * 16) : "memory");
      for (int c = 0; c < 4; c++)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(s0 + c * NV * 4), "l"(x + base + c * NV / 4), "r"(NV * 4), "r"(mb) : "memory");
    }
    asm volatile("{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n@!p bra WAIT;\n}" :: "r"(mb) : "memory");
  }
  float2 s = make_float2(0.f, 0.f);
  for (int i = threadIdx.x; i < NV; i += T) add_moments(srow[i], s);
  s = block_sum2<W>(s, sh, &total, false);
  float2 m = mean_rstd(s);
  for (int i = threadIdx.x; i < NV; i += T) y[base + i] = normalize(srow[i], w[i], b[i], m);
}

// fusec's hybrid: V vectors a thread, the first H kept in registers; the rest read again from L2
// for the epilogue (SMEM false, as fusec does) or stashed in shared memory (SMEM true, the
// thread's own slots: no barrier), so that two CTAs of 512 threads share an SM.
template <int T, int V, int H, bool SMEM>
__global__ void __launch_bounds__(T) ln_hybrid(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                               const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = T * V;
  static_assert(NV * 8 == N, "one row");
  extern __shared__ uint4 stash[];
  __shared__ float2 sh[W];
  __shared__ float2 total;
  size_t base = (size_t)blockIdx.x * NV + threadIdx.x;
  uint4 v[H];
  float2 s = make_float2(0.f, 0.f);
  for (int j = 0; j < V; j++) {
    uint4 u = x[base + j * T];
    if (j < H) v[j < H ? j : 0] = u;
    else if (SMEM) stash[(j - H) * T + threadIdx.x] = u;
    add_moments(u, s);
  }
  s = block_sum2<W>(s, sh, &total, false);
  float2 m = mean_rstd(s);
  for (int j = 0; j < V; j++)
    y[base + j * T] = normalize(j < H ? v[j < H ? j : 0] : SMEM ? stash[(j - H) * T + threadIdx.x] : x[base + j * T],
                                w[threadIdx.x + j * T], b[threadIdx.x + j * T], m);
}

// Persistent rows: gridDim.x CTAs (two an SM) loop over the rows, half of each row in registers and
// half stashed in shared memory as ln_hybrid<SMEM true> does. With PREFETCH, the epilogue of one row
// refills each slot with the next row's vector as soon as it has used it (a register slot by a plain
// load, a stash slot by cp.async: no registers, no barrier), so the next row's reads are in flight
// while this row is written: no gap between a row's last load and the next row's first.
template <int T, int V, int H, bool PREFETCH>
__global__ void __launch_bounds__(T, 2) ln_persistent(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                                      const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = T * V;
  static_assert(NV * 8 == N, "one row");
  extern __shared__ uint4 stash[];
  __shared__ float2 sh[W];
  __shared__ float2 total;
  unsigned s0 = (unsigned)__cvta_generic_to_shared(stash);
  uint4 v[H];
  // slot j of the row at `base`: a register slot by a plain load, a stash slot by cp.async
#define FETCH(j, base)                                                                                    \
  if ((j) < H) v[(j) < H ? (j) : 0] = x[(base) + (j) * T];                                                  \
  else asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s0 + 16 * (((j) - H) * T + threadIdx.x)), \
                    "l"(x + (base) + (j) * T) : "memory")
  int row = blockIdx.x;
  if (row < M)
#pragma unroll
    for (int j = 0; j < V; j++) { FETCH(j, (size_t)row * NV + threadIdx.x); }
  for (; row < M; row += gridDim.x) {
    size_t base = (size_t)row * NV + threadIdx.x, next = base + (size_t)gridDim.x * NV;
    bool more = row + gridDim.x < M;
    unsigned opaque;  // 0, which the compiler cannot see: else it hoists w and b out of the row loop (64 registers)
    asm volatile("mov.u32 %0, 0;" : "=r"(opaque));
    asm volatile("cp.async.wait_all;" ::: "memory");
    float2 s = make_float2(0.f, 0.f);
    for (int j = 0; j < V; j++) add_moments(j < H ? v[j < H ? j : 0] : stash[(j - H) * T + threadIdx.x], s);
    s = block_sum2<W>(s, sh, &total, false);
    float2 m = mean_rstd(s);
    for (int j = 0; j < V; j++) {
      uint4 u = j < H ? v[j < H ? j : 0] : stash[(j - H) * T + threadIdx.x];
      if (PREFETCH && more && j < H) { FETCH(j, next); }
      y[base + j * T] = normalize(u, w[opaque + threadIdx.x + j * T], b[opaque + threadIdx.x + j * T], m);
      if (PREFETCH && more && j >= H) { FETCH(j, next); }  // after the slot's value is used
    }
    if (!PREFETCH && more)
#pragma unroll
      for (int j = 0; j < V; j++) { FETCH(j, next); }
  }
#undef FETCH
}

static double copy_GBs;

static double error(const __nv_bfloat16 *y, const std::vector<__nv_bfloat16> &hx, const std::vector<__nv_bfloat16> &hw,
                    const std::vector<__nv_bfloat16> &hb) {
  double err = 0;
  std::vector<__nv_bfloat16> hy(N);
  for (int r : {0, 1, M / 2, M - 1}) {
    CK(cudaMemcpy(hy.data(), y + (size_t)r * N, N * 2, cudaMemcpyDeviceToHost));
    auto X = [&](int i) { return (double)__bfloat162float(hx[(size_t)r * N + i]); };
    double s = 0, q = 0;
    for (int i = 0; i < N; i++) s += X(i);
    double mean = s / N;
    for (int i = 0; i < N; i++) q += (X(i) - mean) * (X(i) - mean);
    double rstd = 1 / sqrt(q / N + 1e-5);
    for (int i = 0; i < N; i++)
      err = std::max(err, fabs((X(i) - mean) * rstd * __bfloat162float(hw[i]) + __bfloat162float(hb[i]) - __bfloat162float(hy[i])));
  }
  return err;
}

using Kernel = void (*)(const uint4 *, const uint4 *, const uint4 *, uint4 *, int);

struct Rows {  // the input, weight, bias and output on the device, and the host copies checked against
  __nv_bfloat16 *x, *w, *b, *y;
  std::vector<__nv_bfloat16> hx, hw, hb;
};

// One variant: `threads` a CTA, `cluster` CTAs a row (M * cluster CTAs, or `grid` CTAs), `smem` bytes
// of dynamic shared memory; checked, timed (`batch` launches between the events, so that the time of
// a launch does not count), and printed with the CTAs an SM can hold.
static void measure(const char *name, Kernel kernel, int threads, int cluster, int smem, const Rows &d, int grid = 0,
                    int batch = 1) {
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid ? grid : M * cluster); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster; attr.val.clusterDim.y = 1; attr.val.clusterDim.z = 1;
  cfg.attrs = &attr; cfg.numAttrs = cluster > 1;
  auto go = [&] { CK(cudaLaunchKernelEx(&cfg, kernel, (const uint4 *)d.x, (const uint4 *)d.w, (const uint4 *)d.b,
                                        (uint4 *)d.y, M)); };
  CK(cudaMemset(d.y, 0xff, (size_t)M * N * 2));
  go(); CK(cudaDeviceSynchronize());
  double err = error(d.y, d.hx, d.hw, d.hb);
  float us = time_us([&] { for (int i = 0; i < batch; i++) go(); }) / batch;
  double GBs = (2.0 * M * N * 2 + 2.0 * N * 2) / us / 1e3;
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  printf("LN bf16 %dx%d %-34s %d CTA/SM: %8.1f us %6.0f GB/s %5.1f%% copy  err %.1e\n", M, N, name, blocks, us, GBs,
         100 * GBs / copy_GBs, err);
}

int main(int argc, char **argv) {
  bool persistent = argc > 1 && std::string(argv[1]) == "persistent";
  size_t n = (size_t)M * N;
  Rows d;
  d.hx.resize(n); d.hw.resize(N); d.hb.resize(N);
  srand(0);
  for (auto &e : d.hx) e = __float2bfloat16(rand() / (float)RAND_MAX * 4.f - 1.f);
  for (auto &e : d.hw) e = __float2bfloat16(rand() / (float)RAND_MAX * 2.f - 1.f);
  for (auto &e : d.hb) e = __float2bfloat16(rand() / (float)RAND_MAX * 2.f - 1.f);
  CK(cudaMalloc(&d.x, n * 2)); CK(cudaMalloc(&d.y, n * 2)); CK(cudaMalloc(&d.w, N * 2)); CK(cudaMalloc(&d.b, N * 2));
  CK(cudaMemcpy(d.x, d.hx.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.w, d.hw.data(), N * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.b, d.hb.data(), N * 2, cudaMemcpyHostToDevice));
  int batch = persistent ? 10 : 1;
  float copy = time_us([&] { for (int i = 0; i < batch; i++) CK(cudaMemcpyAsync(d.y, d.x, n * 2, cudaMemcpyDeviceToDevice)); }) / batch;
  copy_GBs = 2.0 * n * 2 / copy / 1e3;
  printf("device copy %zu MB: %.1f us %.0f GB/s\n", n * 2 >> 20, copy, copy_GBs);
  if (persistent) {  // `long_rows persistent`: the persistent rows against the hybrids, timed in batches
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (int round = 0; round < 3; round++) {
      measure("512 threads, 4 of 8 in regs, L2 (fusec)", ln_hybrid<512, 8, 4, false>, 512, 1, 0, d, 0, batch);
      measure("512 threads, 4 of 8 in regs, smem", ln_hybrid<512, 8, 4, true>, 512, 1, 4 * 512 * 16, d, 0, batch);
      measure("persistent 2/SM, 4 of 8 in regs, smem", ln_persistent<512, 8, 4, false>, 512, 1, 4 * 512 * 16, d,
              2 * sms, batch);
      measure("persistent 2/SM, 4 of 8 in regs, smem, prefetch", ln_persistent<512, 8, 4, true>, 512, 1,
              4 * 512 * 16, d, 2 * sms, batch);
    }
    return 0;
  }
  for (int round = 0; round < 2; round++) {
    measure("1024 threads, 1 CTA (fusec heuristic)", ln<1024, 4, 1, false>, 1024, 1, 0, d);
    measure("512 threads, 1 CTA, 64 in registers", ln<512, 8, 1, false>, 512, 1, 0, d);
    measure("512 threads x 2-CTA cluster", ln<512, 4, 2, false>, 512, 2, 0, d);
    measure("512 threads x 2-CTA cluster, evict_last", ln<512, 4, 2, true>, 512, 2, 0, d);
    measure("256 threads x 4-CTA cluster", ln<256, 4, 4, false>, 256, 4, 0, d);
    measure("256 threads x 2-CTA cluster, 64 regs", ln<256, 8, 2, false>, 256, 2, 0, d);
    measure("256 threads x 8-CTA cluster", ln<256, 2, 8, false>, 256, 8, 0, d);
    measure("512 threads x 4-CTA cluster, 16 regs", ln<512, 2, 4, false>, 512, 4, 0, d);
    measure("512 threads, 4 of 8 in regs, L2 (fusec)", ln_hybrid<512, 8, 4, false>, 512, 1, 0, d);
    measure("512 threads, 5 of 8 in regs, L2", ln_hybrid<512, 8, 5, false>, 512, 1, 0, d);
    measure("512 threads, 4 of 8 in regs, smem", ln_hybrid<512, 8, 4, true>, 512, 1, 4 * 512 * 16, d);
    measure("512 threads, 5 of 8 in regs, smem", ln_hybrid<512, 8, 5, true>, 512, 1, 3 * 512 * 16, d);
    measure("512 threads, 6 of 8 in regs, smem", ln_hybrid<512, 8, 6, true>, 512, 1, 2 * 512 * 16, d);
    measure("1024 threads, 2 of 4 in regs, smem", ln_hybrid<1024, 4, 2, true>, 1024, 1, 2 * 1024 * 16, d);
    measure("1024 threads, 2 of 4 in regs, L2", ln_hybrid<1024, 4, 2, false>, 1024, 1, 0, d);
    measure("256 threads, 8 of 16 in regs, smem", ln_hybrid<256, 16, 8, true>, 256, 1, 8 * 256 * 16, d);
    measure("256 threads, row in smem, cp.async", ln_smem<256, 0>, 256, 1, N * 2, d);
    measure("512 threads, row in smem, cp.async", ln_smem<512, 0>, 512, 1, N * 2, d);
    measure("1024 threads, row in smem, cp.async", ln_smem<1024, 0>, 1024, 1, N * 2, d);
    measure("256 threads, row in smem, bulk copy", ln_smem<256, 1>, 256, 1, N * 2, d);
    measure("512 threads, row in smem, bulk copy", ln_smem<512, 1>, 512, 1, N * 2, d);
  }
  return 0;
}
