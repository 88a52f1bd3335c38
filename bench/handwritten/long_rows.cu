// Hand-written CUDA: bf16 LayerNorm of long rows (4096 x 32768) with a row split over a cluster of
// CTAs that combine their partial sums through distributed shared memory (not fusec's code). The
// question: does a row in registers over 2 (or 4) CTAs of 512 (or 256) threads, two of them per SM,
// beat fusec's one block of 1024 threads a row (one per SM: nothing hides a reduction's barrier) and
// its hybrid of 512 threads that reads half the row again from L2? Each variant is checked against
// float64 on four rows and timed with CUDA events (median of 40), with a device copy in the same run.
// On the device:
//     nvcc -O3 -arch=sm_90 --use_fast_math -o /tmp/ln_cluster bench/handwritten/ln_cluster.cu && /tmp/ln_cluster
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>

static constexpr int N_ = 32768;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

__device__ __forceinline__ void unpack(uint4 u, float *f) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
  for (int i = 0; i < 4; i++) { float2 t = __bfloat1622float2(h[i]); f[2 * i] = t.x; f[2 * i + 1] = t.y; }
}
__device__ __forceinline__ uint4 pack(const float *f) {
  uint4 u; __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&u);
  for (int i = 0; i < 4; i++) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return u;
}

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

// A row of CL*T*V uint4 (8 bf16 each); CTA `rank` of the row's cluster holds T*V of them, V a thread.
template <int T, int V, int CL, bool HINT>
__global__ void __launch_bounds__(T) ln(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                        const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = CL * T * V;
  constexpr float INV_N = 1.f / (NV * 8);
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
  for (int j = 0; j < V; j++) {
    float f[8]; unpack(v[j], f);
    for (int i = 0; i < 8; i++) { s.x += f[i]; s.y += f[i] * f[i]; }
  }
  s = block_sum2<W>(s, sh, &total, CL > 1);
  if (CL > 1) {
    for (unsigned r = 0; r < CL; r++)
      if (r != rank) { float2 p = ld_peer(&total, r); s.x += p.x; s.y += p.y; }
    cluster_arrive();  // this CTA is done reading its peers: they may exit once all have said so
  }
  float mean = s.x * INV_N, rstd = rsqrtf(fmaxf(s.y * INV_N - mean * mean, 0.f) + 1e-5f);
  size_t col = rank * T * V + threadIdx.x;
  for (int j = 0; j < V; j++) {
    float f[8], fw[8], fb[8];
    unpack(v[j], f); unpack(w[col + j * T], fw); unpack(b[col + j * T], fb);
    for (int i = 0; i < 8; i++) f[i] = (f[i] - mean) * rstd * fw[i] + fb[i];
    y[base + j * T] = pack(f);
  }
  if (CL > 1) cluster_wait();
}


// The row staged in shared memory instead of registers: 64 KB a row, three CTAs (rows) an SM, so
// one CTA's loads run while another waits at its reduction's barrier. COPY 0: each thread copies its
// own 16-byte vectors with cp.async (no registers, no barrier: a thread reads back only what it
// copied); COPY 1: one thread copies the whole row with a bulk copy (TMA) that an mbarrier counts.
template <int T, int COPY>
__global__ void __launch_bounds__(T) ln_smem(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                             const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = N_ / 8;
  constexpr float INV_N = 1.f / N_;
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
  for (int i = threadIdx.x; i < NV; i += T) {
    float f[8]; unpack(srow[i], f);
    for (int k = 0; k < 8; k++) { s.x += f[k]; s.y += f[k] * f[k]; }
  }
  s = block_sum2<W>(s, sh, &total, false);
  float mean = s.x * INV_N, rstd = rsqrtf(fmaxf(s.y * INV_N - mean * mean, 0.f) + 1e-5f);
  for (int i = threadIdx.x; i < NV; i += T) {
    float f[8], fw[8], fb[8];
    unpack(srow[i], f); unpack(w[i], fw); unpack(b[i], fb);
    for (int k = 0; k < 8; k++) f[k] = (f[k] - mean) * rstd * fw[k] + fb[k];
    y[base + i] = pack(f);
  }
}

// fusec's hybrid: V vectors a thread, the first H kept in registers; the rest read again from L2
// for the epilogue (SMEM false, as fusec does) or stashed in shared memory (SMEM true, the
// thread's own slots: no barrier), so that two CTAs of 512 threads share an SM.
template <int T, int V, int H, bool SMEM>
__global__ void __launch_bounds__(T) ln_hybrid(const uint4 *__restrict__ x, const uint4 *__restrict__ w,
                                               const uint4 *__restrict__ b, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, NV = T * V;
  constexpr float INV_N = 1.f / N_;
  static_assert(NV * 8 == N_, "one row");
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
    float f[8]; unpack(u, f);
    for (int k = 0; k < 8; k++) { s.x += f[k]; s.y += f[k] * f[k]; }
  }
  s = block_sum2<W>(s, sh, &total, false);
  float mean = s.x * INV_N, rstd = rsqrtf(fmaxf(s.y * INV_N - mean * mean, 0.f) + 1e-5f);
  for (int j = 0; j < V; j++) {
    float f[8], fw[8], fb[8];
    unpack(j < H ? v[j < H ? j : 0] : SMEM ? stash[(j - H) * T + threadIdx.x] : x[base + j * T], f);
    unpack(w[threadIdx.x + j * T], fw); unpack(b[threadIdx.x + j * T], fb);
    for (int k = 0; k < 8; k++) f[k] = (f[k] - mean) * rstd * fw[k] + fb[k];
    y[base + j * T] = pack(f);
  }
}

template <typename F>
float time_us(F launch, int reps = 40) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; i++) launch();
  CK(cudaGetLastError());
  std::vector<float> t;
  for (int i = 0; i < reps; i++) {
    CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1e3f);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static const int M = 4096, N = N_;
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

template <int T, int V, int CL, bool HINT>
void run(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *w, __nv_bfloat16 *b, __nv_bfloat16 *y,
         const std::vector<__nv_bfloat16> &hx, const std::vector<__nv_bfloat16> &hw, const std::vector<__nv_bfloat16> &hb) {
  static_assert(CL * T * V * 8 == N, "the variant covers one row");
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(M * CL); cfg.blockDim = dim3(T);
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = CL; attr.val.clusterDim.y = 1; attr.val.clusterDim.z = 1;
  cfg.attrs = &attr; cfg.numAttrs = 1;
  auto go = [&] { CK(cudaLaunchKernelEx(&cfg, ln<T, V, CL, HINT>, (const uint4 *)x, (const uint4 *)w, (const uint4 *)b,
                                        (uint4 *)y, M)); };
  CK(cudaMemset(y, 0xff, (size_t)M * N * 2));
  go(); CK(cudaDeviceSynchronize());
  double err = error(y, hx, hw, hb);
  float us = time_us(go);
  double GBs = (2.0 * M * N * 2 + 2.0 * N * 2) / us / 1e3;
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ln<T, V, CL, HINT>, T, 0));
  printf("LN bf16 %dx%d %-34s %d CTA/SM: %8.1f us %6.0f GB/s %5.1f%% copy  err %.1e\n", M, N, name, blocks, us, GBs,
         100 * GBs / copy_GBs, err);
}

template <int T, int COPY>
void run_smem(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *w, __nv_bfloat16 *b, __nv_bfloat16 *y,
              const std::vector<__nv_bfloat16> &hx, const std::vector<__nv_bfloat16> &hw, const std::vector<__nv_bfloat16> &hb) {
  int smem = N * 2;
  CK(cudaFuncSetAttribute(ln_smem<T, COPY>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto go = [&] { ln_smem<T, COPY><<<M, T, smem>>>((const uint4 *)x, (const uint4 *)w, (const uint4 *)b, (uint4 *)y, M); };
  CK(cudaMemset(y, 0xff, (size_t)M * N * 2));
  go(); CK(cudaDeviceSynchronize());
  double err = error(y, hx, hw, hb);
  float us = time_us(go);
  double GBs = (2.0 * M * N * 2 + 2.0 * N * 2) / us / 1e3;
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ln_smem<T, COPY>, T, smem));
  printf("LN bf16 %dx%d %-34s %d CTA/SM: %8.1f us %6.0f GB/s %5.1f%% copy  err %.1e\n", M, N, name, blocks, us, GBs,
         100 * GBs / copy_GBs, err);
}

template <int T, int V, int H, bool SMEM>
void run_hybrid(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *w, __nv_bfloat16 *b, __nv_bfloat16 *y,
                const std::vector<__nv_bfloat16> &hx, const std::vector<__nv_bfloat16> &hw, const std::vector<__nv_bfloat16> &hb) {
  int smem = SMEM ? (V - H) * T * 16 : 0;
  CK(cudaFuncSetAttribute(ln_hybrid<T, V, H, SMEM>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto go = [&] { ln_hybrid<T, V, H, SMEM><<<M, T, smem>>>((const uint4 *)x, (const uint4 *)w, (const uint4 *)b, (uint4 *)y, M); };
  CK(cudaMemset(y, 0xff, (size_t)M * N * 2));
  go(); CK(cudaDeviceSynchronize());
  double err = error(y, hx, hw, hb);
  float us = time_us(go);
  double GBs = (2.0 * M * N * 2 + 2.0 * N * 2) / us / 1e3;
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ln_hybrid<T, V, H, SMEM>, T, smem));
  printf("LN bf16 %dx%d %-34s %d CTA/SM: %8.1f us %6.0f GB/s %5.1f%% copy  err %.1e\n", M, N, name, blocks, us, GBs,
         100 * GBs / copy_GBs, err);
}

int main() {
  size_t n = (size_t)M * N;
  std::vector<__nv_bfloat16> hx(n), hw(N), hb(N);
  srand(0);
  for (auto &e : hx) e = __float2bfloat16(rand() / (float)RAND_MAX * 4.f - 1.f);
  for (auto &e : hw) e = __float2bfloat16(rand() / (float)RAND_MAX * 2.f - 1.f);
  for (auto &e : hb) e = __float2bfloat16(rand() / (float)RAND_MAX * 2.f - 1.f);
  __nv_bfloat16 *x, *w, *b, *y;
  CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&y, n * 2)); CK(cudaMalloc(&w, N * 2)); CK(cudaMalloc(&b, N * 2));
  CK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw.data(), N * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), N * 2, cudaMemcpyHostToDevice));
  float copy = time_us([&] { CK(cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice)); });
  copy_GBs = 2.0 * n * 2 / copy / 1e3;
  printf("device copy %zu MB: %.1f us %.0f GB/s\n", n * 2 >> 20, copy, copy_GBs);
  for (int round = 0; round < 2; round++) {
    run<1024, 4, 1, false>("1024 threads, 1 CTA (fusec heuristic)", x, w, b, y, hx, hw, hb);
    run<512, 8, 1, false>("512 threads, 1 CTA, 64 in registers", x, w, b, y, hx, hw, hb);
    run<512, 4, 2, false>("512 threads x 2-CTA cluster", x, w, b, y, hx, hw, hb);
    run<512, 4, 2, true>("512 threads x 2-CTA cluster, evict_last", x, w, b, y, hx, hw, hb);
    run<256, 4, 4, false>("256 threads x 4-CTA cluster", x, w, b, y, hx, hw, hb);
    run<256, 8, 2, false>("256 threads x 2-CTA cluster, 64 regs", x, w, b, y, hx, hw, hb);
    run<256, 2, 8, false>("256 threads x 8-CTA cluster", x, w, b, y, hx, hw, hb);
    run<512, 2, 4, false>("512 threads x 4-CTA cluster, 16 regs", x, w, b, y, hx, hw, hb);
    run_hybrid<512, 8, 4, false>("512 threads, 4 of 8 in regs, L2 (fusec)", x, w, b, y, hx, hw, hb);
    run_hybrid<512, 8, 5, false>("512 threads, 5 of 8 in regs, L2", x, w, b, y, hx, hw, hb);
    run_hybrid<512, 8, 4, true>("512 threads, 4 of 8 in regs, smem", x, w, b, y, hx, hw, hb);
    run_hybrid<512, 8, 5, true>("512 threads, 5 of 8 in regs, smem", x, w, b, y, hx, hw, hb);
    run_hybrid<512, 8, 6, true>("512 threads, 6 of 8 in regs, smem", x, w, b, y, hx, hw, hb);
    run_hybrid<1024, 4, 2, true>("1024 threads, 2 of 4 in regs, smem", x, w, b, y, hx, hw, hb);
    run_hybrid<1024, 4, 2, false>("1024 threads, 2 of 4 in regs, L2", x, w, b, y, hx, hw, hb);
    run_hybrid<256, 16, 8, true>("256 threads, 8 of 16 in regs, smem", x, w, b, y, hx, hw, hb);
    run_smem<256, 0>("256 threads, row in smem, cp.async", x, w, b, y, hx, hw, hb);
    run_smem<512, 0>("512 threads, row in smem, cp.async", x, w, b, y, hx, hw, hb);
    run_smem<1024, 0>("1024 threads, row in smem, cp.async", x, w, b, y, hx, hw, hb);
    run_smem<256, 1>("256 threads, row in smem, bulk copy", x, w, b, y, hx, hw, hb);
    run_smem<512, 1>("512 threads, row in smem, bulk copy", x, w, b, y, hx, hw, hb);
  }
  return 0;
}
