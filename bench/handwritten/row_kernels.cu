// Hand-written CUDA row kernels: the experiment behind the `l2_evict_last` knob (not fusec's code;
// docs/walkthroughs/09-l2-evict-last.md has its table). LayerNorm fp32 and softmax bf16, one block
// per row as fusec lays them out, against variants: more threads a row, the row read twice as
// Inductor's kernel does, L1/L2 eviction-priority hints on the loads (ld.global.L2::cache_hint with
// createpolicy), a re-touch after use, persistent blocks that prefetch the next row. Each variant is
// checked against a float64 reference on four rows and timed with CUDA events (median of 40).
// main() runs the last round (the hint variants, and Inductor's loop); the other kernels are the
// earlier rounds', kept for reference. On the device:
//     nvcc -O3 -arch=sm_90 --use_fast_math -o /tmp/row_kernels bench/handwritten/row_kernels.cu && /tmp/row_kernels
#include "common.cuh"

__host__ __device__ constexpr int pow2(int w) { return w <= 1 ? 1 : 2 * pow2((w + 1) / 2); }

template <int W>
__device__ __forceinline__ float2 block_sum2(float2 v, float2 *sh) {
  for (int o = 16; o; o >>= 1) { v.x += __shfl_xor_sync(~0u, v.x, o); v.y += __shfl_xor_sync(~0u, v.y, o); }
  if (W == 1) return v;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  constexpr int P = pow2(W);
  float2 r = (lane % P) < W ? sh[lane % P] : make_float2(0.f, 0.f);
  for (int o = pow2(W) / 2; o; o >>= 1) { r.x += __shfl_xor_sync(~0u, r.x, o); r.y += __shfl_xor_sync(~0u, r.y, o); }
  return r;
}

template <int W, bool MAX>
__device__ __forceinline__ float block_red(float v, float *sh) {
  for (int o = 16; o; o >>= 1) { float u = __shfl_xor_sync(~0u, v, o); v = MAX ? fmaxf(v, u) : v + u; }
  if (W == 1) return v;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  constexpr int P = pow2(W);
  float r = (lane % P) < W ? sh[lane % P] : (MAX ? -INFINITY : 0.f);
  for (int o = pow2(W) / 2; o; o >>= 1) { float u = __shfl_xor_sync(~0u, r, o); r = MAX ? fmaxf(r, u) : r + u; }
  return r;
}

// ---- LayerNorm fp32: T threads, V float4 per thread, N = 4*T*V ----
template <int T, int V, bool PERSIST, bool WB_EARLY>
__global__ void __launch_bounds__(T) ln(const float4 *__restrict__ x, const float4 *__restrict__ w,
                                        const float4 *__restrict__ b, float4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N4 = T * V;
  __shared__ float2 sh[2][W];
  int row = blockIdx.x;
  float4 cur[V], nxt[V];
  if (row < M)
    for (int j = 0; j < V; j++) cur[j] = x[(size_t)row * N4 + threadIdx.x + j * T];
  for (int it = 0; row < M; it++) {
    int next = row + gridDim.x;
    if (PERSIST && next < M)
      for (int j = 0; j < V; j++) nxt[j] = x[(size_t)next * N4 + threadIdx.x + j * T];
    float4 wv[V], bv[V];
    if (WB_EARLY)
      for (int j = 0; j < V; j++) { wv[j] = w[threadIdx.x + j * T]; bv[j] = b[threadIdx.x + j * T]; }
    float2 s = make_float2(0.f, 0.f);
    for (int j = 0; j < V; j++) {
      s.x += cur[j].x + cur[j].y + cur[j].z + cur[j].w;
      s.y += cur[j].x * cur[j].x + cur[j].y * cur[j].y + cur[j].z * cur[j].z + cur[j].w * cur[j].w;
    }
    s = block_sum2<W>(s, sh[it & 1]);
    float mean = s.x * (1.f / (4 * N4)), rstd = rsqrtf(s.y * (1.f / (4 * N4)) - mean * mean + 1e-5f);
    for (int j = 0; j < V; j++) {
      if (!WB_EARLY) { wv[j] = w[threadIdx.x + j * T]; bv[j] = b[threadIdx.x + j * T]; }
      float4 o;
      o.x = (cur[j].x - mean) * rstd * wv[j].x + bv[j].x;
      o.y = (cur[j].y - mean) * rstd * wv[j].y + bv[j].y;
      o.z = (cur[j].z - mean) * rstd * wv[j].z + bv[j].z;
      o.w = (cur[j].w - mean) * rstd * wv[j].w + bv[j].w;
      y[(size_t)row * N4 + threadIdx.x + j * T] = o;
    }
    if (!PERSIST) break;
    row = next;
    for (int j = 0; j < V; j++) cur[j] = nxt[j];
  }
}

// A float4 load with L1 (0 none, 1 evict_first, 2 evict_last) and L2 (same, via createpolicy) hints.
template <int L1, int L2>
__device__ __forceinline__ float4 ldh(const float4 *p) {
  float4 v;
  if (L2 == 0) {
    if (L1 == 0) return *p;
    if (L1 == 1) asm volatile("ld.global.L1::evict_first.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    if (L1 == 2) asm volatile("ld.global.L1::evict_last.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
  }
  unsigned long long pol;
  if (L2 == 1) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  else asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  if (L1 == 0) asm volatile("ld.global.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  if (L1 == 1) asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  if (L1 == 2) asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
  return v;
}

// ln_hloop is Inductor's layout: T threads, C chunks of one float4 per thread; x read in a loop for
// the sums and again (from L1) for the output. ln_hblock reads x once, into registers.
// H: 0 none; 1 Inductor's (first x read L1+L2 evict_last, second L1+L2 evict_first, w/b L1+L2
// evict_last); 2 L2 only (same); 3 L1 only (same). For ln_hblock (x read once): 1 x L1+L2
// evict_first, w/b L1+L2 evict_last; 2 L2 only; 3 x L2 evict_first only.
template <int T, int C, int H>
__global__ void __launch_bounds__(T) ln_hloop(const float4 *__restrict__ x, const float4 *__restrict__ w,
                                             const float4 *__restrict__ b, float4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N4 = T * C;
  constexpr int A1 = H == 1 || H == 3 ? 2 : 0, A2 = H == 1 || H == 2 ? 2 : 0;
  constexpr int B1 = H == 1 || H == 3 ? 1 : 0, B2 = H == 1 || H == 2 ? 1 : 0;
  __shared__ float2 sh[W];
  const float4 *xr = x + (size_t)blockIdx.x * N4;
  float2 s = make_float2(0.f, 0.f);
#pragma unroll
  for (int c = 0; c < C; c++) {
    float4 v = ldh<A1, A2>(xr + threadIdx.x + c * T);
    s.x += v.x + v.y + v.z + v.w;
    s.y += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  s = block_sum2<W>(s, sh);
  float mean = s.x * (1.f / (4 * N4)), rstd = rsqrtf(s.y * (1.f / (4 * N4)) - mean * mean + 1e-5f);
#pragma unroll
  for (int c = 0; c < C; c++) {
    int i = threadIdx.x + c * T;
    float4 v = ldh<B1, B2>(xr + i);
    float4 wv = ldh<A1, A2>(w + i), bv = ldh<A1, A2>(b + i);
    float4 o;
    o.x = (v.x - mean) * rstd * wv.x + bv.x;
    o.y = (v.y - mean) * rstd * wv.y + bv.y;
    o.z = (v.z - mean) * rstd * wv.z + bv.z;
    o.w = (v.w - mean) * rstd * wv.w + bv.w;
    y[(size_t)blockIdx.x * N4 + i] = o;
  }
}

// H: first-load hint of x (XL1,XL2), touch after use (TL1,TL2; TL1 < 0: no touch), w/b hint (WL1,WL2)
template <int T, int V, int H>
__global__ void __launch_bounds__(T) ln_hblock(const float4 *__restrict__ x, const float4 *__restrict__ w,
                                               const float4 *__restrict__ b, float4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N4 = T * V;
  // H table
  constexpr int XL1 = H == 4 || H == 7 || H == 10 ? 2 : 0;
  constexpr int XL2 = H == 4 || H == 6 || H == 7 || H == 10 || H == 11 ? 2 : 0;
  constexpr int TL1 = H == 4 || H == 5 || H == 10 ? 1 : H == 6 || H == 12 ? 0 : -1;
  constexpr int TL2 = H == 4 || H == 5 || H == 6 || H == 10 || H == 12 ? 1 : 0;
  constexpr int WL1 = H == 4 || H == 7 ? 2 : 0, WL2 = H == 4 || H == 7 ? 2 : 0;
  constexpr bool APPLY = H == 11;
  __shared__ float2 sh[W];
  const float4 *xr = x + (size_t)blockIdx.x * N4;
  float4 cur[V];
  float2 s = make_float2(0.f, 0.f);
#pragma unroll
  for (int j = 0; j < V; j++) {
    cur[j] = ldh<XL1, XL2>(xr + threadIdx.x + j * T);
    s.x += cur[j].x + cur[j].y + cur[j].z + cur[j].w;
    s.y += cur[j].x * cur[j].x + cur[j].y * cur[j].y + cur[j].z * cur[j].z + cur[j].w * cur[j].w;
  }
  s = block_sum2<W>(s, sh);
  float mean = s.x * (1.f / (4 * N4)), rstd = rsqrtf(s.y * (1.f / (4 * N4)) - mean * mean + 1e-5f);
#pragma unroll
  for (int j = 0; j < V; j++) {
    int i = threadIdx.x + j * T;
    float4 wv = ldh<WL1, WL2>(w + i), bv = ldh<WL1, WL2>(b + i);
    if (TL1 >= 0) { float4 t = ldh<TL1 < 0 ? 0 : TL1, TL2>(xr + i); cur[j].x += t.x * 0.f; }
    if (APPLY && (i % 8) == 0) asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(xr + i));
    float4 o;
    o.x = (cur[j].x - mean) * rstd * wv.x + bv.x;
    o.y = (cur[j].y - mean) * rstd * wv.y + bv.y;
    o.z = (cur[j].z - mean) * rstd * wv.z + bv.z;
    o.w = (cur[j].w - mean) * rstd * wv.w + bv.w;
    y[(size_t)blockIdx.x * N4 + i] = o;
  }
}

// softmax bf16, row in registers, with touch: x L1+L2 evict_last, re-touched evict_first after use
template <int T, int V, int H>
__global__ void __launch_bounds__(T) sm_touch(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N8 = T * V;
  __shared__ float sh[2][W];
  const uint4 *xr = x + (size_t)blockIdx.x * N8;
  float f[V][8];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < V; j++) {
    float4 t = H ? ldh<2, 2>(reinterpret_cast<const float4 *>(xr + threadIdx.x + j * T)) : reinterpret_cast<const float4 *>(xr)[threadIdx.x + j * T];
    unpack(*reinterpret_cast<uint4 *>(&t), f[j]);
    for (int i = 0; i < 8; i++) m = fmaxf(m, f[j][i]);
  }
  m = block_red<W, true>(m, sh[0]);
  float s = 0.f;
  for (int j = 0; j < V; j++) for (int i = 0; i < 8; i++) { f[j][i] = exp2f((f[j][i] - m) * 1.4426950408889634f); s += f[j][i]; }
  s = block_red<W, false>(s, sh[1]);
  float r = 1.f / s;
#pragma unroll
  for (int j = 0; j < V; j++) {
    if (H) { float4 t = ldh<1, 1>(reinterpret_cast<const float4 *>(xr + threadIdx.x + j * T)); f[j][0] += t.x * 0.f; }
    for (int i = 0; i < 8; i++) f[j][i] *= r;
    y[(size_t)blockIdx.x * N8 + threadIdx.x + j * T] = pack(f[j]);
  }
}

// ---- softmax bf16: T threads, V uint4 (8 bf16) per thread ----
__device__ __forceinline__ uint4 ld_l2first(const uint4 *p) {
  uint4 v; unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.b32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
template <int T, int V, bool PERSIST, bool HINT = false>
__global__ void __launch_bounds__(T) softmax(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N8 = T * V;
  __shared__ float sh[4][W];
  int row = blockIdx.x;
  uint4 cur[V], nxt[V];
  if (row < M)
    for (int j = 0; j < V; j++) cur[j] = HINT ? ld_l2first(x + (size_t)row * N8 + threadIdx.x + j * T) : x[(size_t)row * N8 + threadIdx.x + j * T];
  for (int it = 0; row < M; it++) {
    int next = row + gridDim.x;
    if (PERSIST && next < M)
      for (int j = 0; j < V; j++) nxt[j] = x[(size_t)next * N8 + threadIdx.x + j * T];
    float f[V][8];
    float m = -INFINITY;
    for (int j = 0; j < V; j++) { unpack(cur[j], f[j]); for (int i = 0; i < 8; i++) m = fmaxf(m, f[j][i]); }
    m = block_red<W, true>(m, sh[2 * (it & 1)]);
    float s = 0.f;
    for (int j = 0; j < V; j++) for (int i = 0; i < 8; i++) { f[j][i] = exp2f((f[j][i] - m) * 1.4426950408889634f); s += f[j][i]; }
    s = block_red<W, false>(s, sh[2 * (it & 1) + 1]);
    float r = 1.f / s;
    for (int j = 0; j < V; j++) {
      for (int i = 0; i < 8; i++) f[j][i] *= r;
      y[(size_t)row * N8 + threadIdx.x + j * T] = pack(f[j]);
    }
    if (!PERSIST) break;
    row = next;
    for (int j = 0; j < V; j++) cur[j] = nxt[j];
  }
}

template <int L1, int L2>
__device__ __forceinline__ uint4 ldh8(const uint4 *p) {
  float4 f = ldh<L1, L2>(reinterpret_cast<const float4 *>(p));
  return *reinterpret_cast<uint4 *>(&f);
}
// softmax in Inductor's loop form: x read for the max, again for the sum, again for the output.
// H 1: reads 1-2 L1+L2 evict_last, read 3 evict_first. H 0: no hints. ONLINE: max and sum in one read.
template <int T, int C, int H, bool ONLINE>
__global__ void __launch_bounds__(T) sm_loop(const uint4 *__restrict__ x, uint4 *__restrict__ y, int M) {
  constexpr int W = T / 32, N8 = T * C;
  constexpr int A = H ? 2 : 0, B = H ? 1 : 0;
  __shared__ float sh[2][W];
  const uint4 *xr = x + (size_t)blockIdx.x * N8;
  float m = -INFINITY, s = 0.f;
  if (ONLINE) {
#pragma unroll
    for (int c = 0; c < C; c++) {
      float f[8]; unpack(ldh8<A, A>(xr + threadIdx.x + c * T), f);
      float mc = m; for (int i = 0; i < 8; i++) mc = fmaxf(mc, f[i]);
      s *= exp2f((m - mc) * 1.4426950408889634f);
      for (int i = 0; i < 8; i++) s += exp2f((f[i] - mc) * 1.4426950408889634f);
      m = mc;
    }
    float gm = block_red<W, true>(m, sh[0]);
    s = block_red<W, false>(s * exp2f((m - gm) * 1.4426950408889634f), sh[1]);
    m = gm;
  } else {
#pragma unroll
    for (int c = 0; c < C; c++) {
      float f[8]; unpack(ldh8<A, A>(xr + threadIdx.x + c * T), f);
      for (int i = 0; i < 8; i++) m = fmaxf(m, f[i]);
    }
    m = block_red<W, true>(m, sh[0]);
#pragma unroll
    for (int c = 0; c < C; c++) {
      float f[8]; unpack(ldh8<A, A>(xr + threadIdx.x + c * T), f);
      for (int i = 0; i < 8; i++) s += exp2f((f[i] - m) * 1.4426950408889634f);
    }
    s = block_red<W, false>(s, sh[1]);
  }
  float r = 1.f / s;
#pragma unroll
  for (int c = 0; c < C; c++) {
    float f[8]; unpack(ldh8<B, B>(xr + threadIdx.x + c * T), f);
    for (int i = 0; i < 8; i++) f[i] = exp2f((f[i] - m) * 1.4426950408889634f) * r;
    y[(size_t)blockIdx.x * N8 + threadIdx.x + c * T] = pack(f);
  }
}

__global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = x[i];
}

static double copy_GBs;
static int sms;

// Largest error of a LayerNorm's output against float64, on four rows.
static double ln_error(const float *y, int M, int N, const std::vector<float> &hx, const std::vector<float> &hw,
                       const std::vector<float> &hb) {
  double err = 0;
  std::vector<float> hy(N);
  for (int r : {0, 1, M / 2, M - 1}) {
    CK(cudaMemcpy(hy.data(), y + (size_t)r * N, N * 4, cudaMemcpyDeviceToHost));
    double s = 0, q = 0;
    for (int i = 0; i < N; i++) s += hx[(size_t)r * N + i];
    double mean = s / N;
    for (int i = 0; i < N; i++) q += (hx[(size_t)r * N + i] - mean) * (hx[(size_t)r * N + i] - mean);
    double rstd = 1 / sqrt(q / N + 1e-5);
    for (int i = 0; i < N; i++) err = std::max(err, fabs((hx[(size_t)r * N + i] - mean) * rstd * hw[i] + hb[i] - hy[i]));
  }
  return err;
}

// Largest error of a softmax's output against float64, times the row length, on four rows.
static double softmax_error(const __nv_bfloat16 *y, int M, int N, const std::vector<__nv_bfloat16> &hx) {
  double err = 0;
  std::vector<__nv_bfloat16> hy(N);
  for (int r : {0, 1, M / 2, M - 1}) {
    CK(cudaMemcpy(hy.data(), y + (size_t)r * N, N * 2, cudaMemcpyDeviceToHost));
    double m = -1e30, s = 0;
    for (int i = 0; i < N; i++) m = std::max(m, (double)__bfloat162float(hx[(size_t)r * N + i]));
    for (int i = 0; i < N; i++) s += exp(__bfloat162float(hx[(size_t)r * N + i]) - m);
    for (int i = 0; i < N; i++) err = std::max(err, fabs(exp(__bfloat162float(hx[(size_t)r * N + i]) - m) / s - __bfloat162float(hy[i])) * N);
  }
  return err;
}

// One LayerNorm variant launched by `go` on `grid` blocks: checked against float64, timed, printed.
template <typename F>
void report_ln(const char *name, F go, int grid, float *y, int M, int N, const std::vector<float> &hx,
               const std::vector<float> &hw, const std::vector<float> &hb) {
  CK(cudaMemset(y, 0xff, (size_t)M * N * 4));
  go(); CK(cudaDeviceSynchronize());
  double err = ln_error(y, M, N, hx, hw, hb);
  float us = time_us(go);
  double GBs = (2.0 * M * N * 4 + 2.0 * N * 4) / us / 1e3;
  printf("LN fp32 %dx%d %-28s grid %6d: %8.1f us %6.0f GB/s %5.1f%% copy  err %.1e\n", M, N, name, grid, us, GBs, 100 * GBs / copy_GBs, err);
}

template <int T, int V, bool P, bool WBE>
void run_ln(const char *name, float *x, float *w, float *b, float *y, int M, int N, int per_sm, const std::vector<float> &hx,
            const std::vector<float> &hw, const std::vector<float> &hb) {
  if (N != 4 * T * V) return;
  int grid = P ? std::min(M, sms * per_sm) : M;
  report_ln(name, [&] { ln<T, V, P, WBE><<<grid, T>>>((float4 *)x, (float4 *)w, (float4 *)b, (float4 *)y, M); },
            grid, y, M, N, hx, hw, hb);
}

template <int T, int C, int H, bool LOOP>
void run_lnh(const char *name, float *x, float *w, float *b, float *y, int M, int N, const std::vector<float> &hx,
             const std::vector<float> &hw, const std::vector<float> &hb) {
  if (N != 4 * T * C) return;
  report_ln(name, [&] {
    if (LOOP) ln_hloop<T, C, H><<<M, T>>>((float4 *)x, (float4 *)w, (float4 *)b, (float4 *)y, M);
    else ln_hblock<T, C, H><<<M, T>>>((float4 *)x, (float4 *)w, (float4 *)b, (float4 *)y, M);
  }, M, y, M, N, hx, hw, hb);
}

// One softmax variant launched by `go` on `grid` blocks: checked against float64, timed, printed.
template <typename F>
void report_sm(const char *name, F go, int grid, __nv_bfloat16 *y, int M, int N, const std::vector<__nv_bfloat16> &hx) {
  CK(cudaMemset(y, 0xff, (size_t)M * N * 2));
  go(); CK(cudaDeviceSynchronize());
  double err = softmax_error(y, M, N, hx);
  float us = time_us(go);
  double GBs = (2.0 * M * N * 2) / us / 1e3;
  printf("SM bf16 %dx%d %-28s grid %6d: %8.1f us %6.0f GB/s %5.1f%% copy  err*N %.1e\n", M, N, name, grid, us, GBs, 100 * GBs / copy_GBs, err);
}

template <int T, int C, int H, bool ON>
void run_sml(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *y, int M, int N, const std::vector<__nv_bfloat16> &hx) {
  if (N != 8 * T * C) return;
  report_sm(name, [&] { sm_loop<T, C, H, ON><<<M, T>>>((uint4 *)x, (uint4 *)y, M); }, M, y, M, N, hx);
}

template <int T, int V, int H>
void run_smt(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *y, int M, int N, const std::vector<__nv_bfloat16> &hx) {
  if (N != 8 * T * V) return;
  report_sm(name, [&] { sm_touch<T, V, H><<<M, T>>>((uint4 *)x, (uint4 *)y, M); }, M, y, M, N, hx);
}

template <int T, int V, bool P, bool H = false>
void run_sm(const char *name, __nv_bfloat16 *x, __nv_bfloat16 *y, int M, int N, int per_sm, const std::vector<__nv_bfloat16> &hx) {
  if (N != 8 * T * V) return;
  int grid = P ? std::min(M, sms * per_sm) : M;
  report_sm(name, [&] { softmax<T, V, P, H><<<grid, T>>>((uint4 *)x, (uint4 *)y, M); }, grid, y, M, N, hx);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); sms = p.multiProcessorCount;
  const size_t BYTES = 1ull << 30;
  float *a, *c; CK(cudaMalloc(&a, BYTES)); CK(cudaMalloc(&c, BYTES));
  CK(cudaMemset(a, 0, BYTES));
  float us = time_us([&] { CK(cudaMemcpyAsync(c, a, BYTES, cudaMemcpyDeviceToDevice)); });
  copy_GBs = 2.0 * BYTES / us / 1e3;
  float us2 = time_us([&] { copy4<<<sms * 16, 256>>>((float4 *)a, (float4 *)c, BYTES / 16); });
  printf("%s, %d SMs: cudaMemcpy D2D %.0f GB/s; float4 grid-stride copy %.0f GB/s\n", p.name, sms, copy_GBs, 2.0 * BYTES / us2 / 1e3);
  CK(cudaFree(a)); CK(cudaFree(c));

  int shapes[][2] = {{32768, 4096}, {16384, 5120}, {16384, 8192}, {4096, 32768}};
  for (auto &sh : shapes) {
    int M = sh[0], N = sh[1];
    std::vector<float> hx((size_t)M * N), hw(N), hb(N);
    srand(1);
    for (auto &v : hx) v = rand() / (float)RAND_MAX * 4 - 2;
    for (auto &v : hw) v = rand() / (float)RAND_MAX + 0.5f;
    for (auto &v : hb) v = rand() / (float)RAND_MAX - 0.5f;
    float *x, *w, *b, *y;
    CK(cudaMalloc(&x, hx.size() * 4)); CK(cudaMalloc(&y, hx.size() * 4)); CK(cudaMalloc(&w, N * 4)); CK(cudaMalloc(&b, N * 4));
    CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), N * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(b, hb.data(), N * 4, cudaMemcpyHostToDevice));
    // N = 4096: T*V = 1024; N = 5120: T*V = 1280
    for (int rep = 0; rep < 2; rep++) {
    run_lnh<256, 4, 0, false>("block T256 V4 (fusec-like)", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 0, false>("block T512 V2", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 0, true>("loop T512 C2 (row read twice)", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 1, true>("loop T512 C2 h1 (inductor)", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 4, false>("T512 V2 4 last/touch first", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 5, false>("T512 V2 5 plain/touch first", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 6, false>("T512 V2 6 L2 only last/first", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 7, false>("T512 V2 7 last, no touch", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 10, false>("T512 V2 10 as 4, w/b plain", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 11, false>("T512 V2 11 L2 last/applyprio", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 2, 12, false>("T512 V2 12 plain/touch L2first", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<256, 4, 0, false>("block T256 V4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<256, 4, 6, false>("T256 V4 6 L2 only", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<1024, 1, 4, false>("T1024 V1 4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<640, 2, 0, false>("block T640 V2", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<640, 2, 4, false>("T640 V2 4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<640, 2, 6, false>("T640 V2 6 L2 only", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<640, 2, 10, false>("T640 V2 10", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<320, 4, 4, false>("T320 V4 4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<1024, 8, 0, false>("block T1024 V8", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<1024, 8, 4, false>("T1024 V8 4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<1024, 8, 6, false>("T1024 V8 6", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 4, 4, false>("T512 V4 4", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<512, 4, 6, false>("T512 V4 6", x, w, b, y, M, N, hx, hw, hb);
    run_lnh<1024, 2, 4, false>("T1024 V2 4", x, w, b, y, M, N, hx, hw, hb);
    }
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(w)); CK(cudaFree(b));

    std::vector<__nv_bfloat16> hs((size_t)M * N);
    for (auto &v : hs) v = __float2bfloat16(rand() / (float)RAND_MAX * 8 - 4);
    __nv_bfloat16 *sx, *sy;
    CK(cudaMalloc(&sx, hs.size() * 2)); CK(cudaMalloc(&sy, hs.size() * 2));
    CK(cudaMemcpy(sx, hs.data(), hs.size() * 2, cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 2; rep++) {
    run_smt<128, 4, 0>("T128 V4 (fusec-like)", sx, sy, M, N, hs);
    run_smt<128, 4, 1>("T128 V4 touch", sx, sy, M, N, hs);
    run_smt<256, 2, 1>("T256 V2 touch", sx, sy, M, N, hs);
    run_smt<512, 1, 1>("T512 V1 touch", sx, sy, M, N, hs);
    run_smt<128, 5, 0>("T128 V5 (fusec-like)", sx, sy, M, N, hs);
    run_smt<128, 5, 1>("T128 V5 touch", sx, sy, M, N, hs);
    run_smt<320, 2, 1>("T320 V2 touch", sx, sy, M, N, hs);
    run_smt<128, 8, 0>("T128 V8 (fusec-like)", sx, sy, M, N, hs);
    run_smt<128, 8, 1>("T128 V8 touch", sx, sy, M, N, hs);
    run_smt<256, 4, 1>("T256 V4 touch", sx, sy, M, N, hs);
    run_smt<512, 2, 1>("T512 V2 touch", sx, sy, M, N, hs);
    run_smt<1024, 4, 0>("T1024 V4 (fusec-like)", sx, sy, M, N, hs);
    run_smt<1024, 4, 1>("T1024 V4 touch", sx, sy, M, N, hs);
    }
    CK(cudaFree(sx)); CK(cudaFree(sy));
  }
  return 0;
}
