// Hand-written CUDA (not fusec's code): softmax over vocabulary-long bf16 rows (Llama 3's 1024 x
// 128256: 256 KB a row) split over a thread-block cluster, to find what the structure fusec's
// `cluster` schedule uses can reach on Hopper, and what lifts it. Variants:
//   softmax_cluster     one row per cluster of CL CTAs of T threads, V 128-bit vectors a thread in
//                       registers; the block maxima and sums merged through distributed shared
//                       memory in two exchanges (max, then sum) or one (online: (max, sum) pairs);
//   softmax_persistent  as many clusters as run at once (cudaOccupancyMaxActiveClusters), each looping
//                       over rows cluster-count apart; PREFETCH loads the next row's vectors before
//                       this row's reductions (a second register set), else after its stores.
// Results (H100, 2026-12-06, bench/results/2026-12-06-h100-session37.md): one row a cluster 46-62% of
// copy whatever the sizes or the number of exchanges; persistent 71-75%; persistent with the
// prefetch 78-85%. On the device:
//     nvcc -arch=sm_90a -O3 -std=c++17 -o /tmp/vocab bench/handwritten/vocab_softmax_cluster.cu && /tmp/vocab
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

template <int T>
__device__ float block_reduce(float v, float* sm, bool is_max) {
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(~0u, v, o); v = is_max ? fmaxf(v, w) : v + w; }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) sm[warp] = v;
  __syncthreads();
  v = lane < T / 32 ? sm[lane] : (is_max ? -INFINITY : 0.f);
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(~0u, v, o); v = is_max ? fmaxf(v, w) : v + w; }
  return v;
}

template <int CL, int T, int V, bool ONLINE>
__global__ void __launch_bounds__(T) softmax_cluster(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int n) {
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float red[32];
  __shared__ float xm[2], xs[2];
  int rank = cluster.block_rank();
  long row = blockIdx.x / CL;
  int chunk = (n + CL - 1) / CL;
  chunk = (chunk + 7) / 8 * 8;
  int begin = rank * chunk, end = min(n, begin + chunk);
  const __nv_bfloat16* xr = x + row * n;
  __nv_bfloat16* yr = y + row * n;
  float v[V][8];
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < V; i++) {
    int e = begin + (i * T + threadIdx.x) * 8;
    if (e + 8 <= end && ((row * n) % 8 == 0)) {
      uint4 raw = *reinterpret_cast<const uint4*>(xr + e);
      const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
      for (int j = 0; j < 8; j++) v[i][j] = __bfloat162float(b[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; j++) v[i][j] = e + j < end ? __bfloat162float(xr[e + j]) : -INFINITY;
    }
#pragma unroll
    for (int j = 0; j < 8; j++) m = fmaxf(m, v[i][j]);
  }
  m = block_reduce<T>(m, red, true);
  float s = 0.f;
  if (ONLINE) {
#pragma unroll
    for (int i = 0; i < V; i++)
#pragma unroll
      for (int j = 0; j < 8; j++) s += __expf(v[i][j] - m);
    __syncthreads();
    s = block_reduce<T>(s, red, false);
    if (threadIdx.x == 0) { xm[0] = m; xs[0] = s; }
    cluster.sync();
    float M = -INFINITY;
    for (int r = 0; r < CL; r++) M = fmaxf(M, *cluster.map_shared_rank(&xm[0], r));
    float S = 0.f;
    for (int r = 0; r < CL; r++) S += *cluster.map_shared_rank(&xs[0], r) * __expf(*cluster.map_shared_rank(&xm[0], r) - M);
    m = M; s = S;
  } else {
    if (threadIdx.x == 0) xm[0] = m;
    cluster.sync();
    float M = -INFINITY;
    for (int r = 0; r < CL; r++) M = fmaxf(M, *cluster.map_shared_rank(&xm[0], r));
    m = M;
#pragma unroll
    for (int i = 0; i < V; i++)
#pragma unroll
      for (int j = 0; j < 8; j++) s += __expf(v[i][j] - m);
    __syncthreads();
    s = block_reduce<T>(s, red, false);
    if (threadIdx.x == 0) xs[0] = s;
    cluster.sync();
    float S = 0.f;
    for (int r = 0; r < CL; r++) S += *cluster.map_shared_rank(&xs[0], r);
    s = S;
  }
  float inv = 1.f / s;
#pragma unroll
  for (int i = 0; i < V; i++) {
    int e = begin + (i * T + threadIdx.x) * 8;
    if (e + 8 <= end && ((row * n) % 8 == 0)) {
      uint4 raw;
      __nv_bfloat16* b = reinterpret_cast<__nv_bfloat16*>(&raw);
#pragma unroll
      for (int j = 0; j < 8; j++) b[j] = __float2bfloat16(__expf(v[i][j] - m) * inv);
      *reinterpret_cast<uint4*>(yr + e) = raw;
    } else {
      for (int j = 0; j < 8; j++) if (e + j < end) yr[e + j] = __float2bfloat16(__expf(v[i][j] - m) * inv);
    }
  }
  cluster.sync();
}


// Persistent: each cluster loops over rows (row = cluster id, += clusters), loading the next row's
// chunk into a second register set before it reduces the current one.
template <int CL, int T, int V, bool PREFETCH>
__global__ void __launch_bounds__(T) softmax_persistent(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int n, int rows) {
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float red[32];
  __shared__ float xm[2], xs[2];
  int rank = cluster.block_rank();
  int nclusters = gridDim.x / CL;
  int chunk = ((n + CL - 1) / CL + 7) / 8 * 8;
  int begin = rank * chunk, end = min(n, begin + chunk);
  uint4 cur[V], nxt[V];
  long row = blockIdx.x / CL;
  auto load = [&](uint4* buf, long r) {
#pragma unroll
    for (int i = 0; i < V; i++) {
      int e = begin + (i * T + threadIdx.x) * 8;
      if (r < rows && e + 8 <= end) buf[i] = *reinterpret_cast<const uint4*>(x + r * n + e);
      else buf[i] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);  // -inf bf16
    }
  };
  load(cur, row);
  int parity = 0;
  for (; row < rows; row += nclusters) {
    if (PREFETCH) load(nxt, row + nclusters);
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < V; i++) { const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&cur[i]);
#pragma unroll
      for (int j = 0; j < 8; j++) m = fmaxf(m, __bfloat162float(b[j])); }
    m = block_reduce<T>(m, red, true);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < V; i++) { const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&cur[i]);
#pragma unroll
      for (int j = 0; j < 8; j++) s += __expf(__bfloat162float(b[j]) - m); }
    __syncthreads();
    s = block_reduce<T>(s, red, false);
    if (threadIdx.x == 0) { xm[parity] = m; xs[parity] = s; }
    cluster.sync();
    float M = -INFINITY, S = 0.f;
    for (int r = 0; r < CL; r++) M = fmaxf(M, *cluster.map_shared_rank(&xm[parity], r));
    for (int r = 0; r < CL; r++) S += *cluster.map_shared_rank(&xs[parity], r) * __expf(*cluster.map_shared_rank(&xm[parity], r) - M);
    float inv = 1.f / S;
#pragma unroll
    for (int i = 0; i < V; i++) {
      int e = begin + (i * T + threadIdx.x) * 8;
      if (e + 8 <= end) {
        const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&cur[i]);
        uint4 raw; __nv_bfloat16* o = reinterpret_cast<__nv_bfloat16*>(&raw);
#pragma unroll
        for (int j = 0; j < 8; j++) o[j] = __float2bfloat16(__expf(__bfloat162float(b[j]) - M) * inv);
        *reinterpret_cast<uint4*>(y + row * n + e) = raw;
      }
    }
#pragma unroll
    if (PREFETCH) { for (int i = 0; i < V; i++) cur[i] = nxt[i]; }
    else load(cur, row + nclusters);
    parity ^= 1;  // the other buffer next row: a peer may still read this one
    __syncthreads();
  }
  cluster.sync();
}

template <int CL, int T, int V, bool PREFETCH = true>
void run_persistent(int rows, int n, __nv_bfloat16* x, __nv_bfloat16* y, double copy_gbs, int per_sm_clusters_scale) {
  int chunk = ((n + CL - 1) / CL + 7) / 8 * 8;
  if (V * T * 8 < chunk) { printf("rows %d n %d cluster %d threads %d: %d vectors a thread hold less than the chunk, skipped\n", rows, n, CL, T, V); return; }
  auto kern = softmax_persistent<CL, T, V, PREFETCH>;
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(T);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CL; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  if (CL > 8) cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cfg.gridDim = dim3(CL);
  int clusters = 0; cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg);
  cfg.gridDim = dim3(clusters * CL * per_sm_clusters_scale);
  float us = time_it([&] { cudaLaunchKernelEx(&cfg, kern, (const __nv_bfloat16*)x, y, n, rows); });
  cudaError_t e = cudaGetLastError();
  double gbs = 2.0 * rows * n * 2 / us / 1e3;
  __nv_bfloat16 h[2];
  cudaMemset(y, 0, 2L * rows * n);
  cudaLaunchKernelEx(&cfg, kern, (const __nv_bfloat16*)x, y, n, rows);
  cudaMemcpy(&h[0], y, 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(&h[1], y + (long)rows * n - 1, 2, cudaMemcpyDeviceToHost);
  float want = 1.f / n;
  bool ok = fabsf(__bfloat162float(h[0]) - want) < want * 0.01f && fabsf(__bfloat162float(h[1]) - want) < want * 0.01f;
  printf("%s ", ok ? "ok" : "WRONG");
  printf("rows %5d n %6d cluster %2d threads %4d V %2d persistent%s x%d: %8.1f us %6.0f GB/s %5.1f%% of copy  active clusters %d %s\n",
         rows, n, CL, T, V, PREFETCH ? "+prefetch" : "", per_sm_clusters_scale, us, gbs, 100 * gbs / copy_gbs, clusters, e ? cudaGetErrorString(e) : "");
}

__global__ void copy_kernel(const uint4* a, uint4* b, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) b[i] = a[i];
}

template <typename F>
float time_it(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; i++) f();
  std::vector<float> ts;
  for (int i = 0; i < 40; i++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float t; cudaEventElapsedTime(&t, a, b); ts.push_back(t * 1000); }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

template <int CL, int T, bool ONLINE>
void run(int rows, int n, __nv_bfloat16* x, __nv_bfloat16* y, double copy_gbs) {
  int chunk = ((n + CL - 1) / CL + 7) / 8 * 8;
  int vneed = (chunk / 8 + T - 1) / T;
  auto launch = [&](auto kern) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(rows * CL); cfg.blockDim = dim3(T);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CL; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr; cfg.numAttrs = 1;
    if (CL > 8) cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    int clusters = 0; cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg);
    float us = time_it([&] { cudaLaunchKernelEx(&cfg, kern, (const __nv_bfloat16*)x, y, n); });
    cudaError_t e = cudaGetLastError();
    double gbs = 2.0 * rows * n * 2 / us / 1e3;
    printf("rows %5d n %6d cluster %2d threads %4d V %2d %s: %8.1f us %6.0f GB/s %5.1f%% of copy  active clusters %d %s\n",
           rows, n, CL, T, vneed, ONLINE ? "online " : "two-ex ", us, gbs, 100 * gbs / copy_gbs, clusters, e ? cudaGetErrorString(e) : "");
  };
  if (vneed <= 2) launch(softmax_cluster<CL, T, 2, ONLINE>);
  else if (vneed <= 4) launch(softmax_cluster<CL, T, 4, ONLINE>);
  else if (vneed <= 8) launch(softmax_cluster<CL, T, 8, ONLINE>);
  else printf("rows %d n %d cluster %d threads %d: %d vectors a thread, skipped\n", rows, n, CL, T, vneed);
}

int main() {
  long maxe = 4096L * 65536;
  __nv_bfloat16 *x, *y; cudaMalloc(&x, maxe * 2); cudaMalloc(&y, maxe * 2);
  cudaMemset(x, 0, maxe * 2);
  long nv = maxe * 2 / 16;
  float cu = time_it([&] { copy_kernel<<<132 * 16, 256>>>((uint4*)x, (uint4*)y, nv); });
  double copy_gbs = 2.0 * maxe * 2 / cu / 1e3;
  printf("copy %.1f us %.0f GB/s\n", cu, copy_gbs);
  int shapes[][2] = {{1024, 128256}, {256, 262144}, {4096, 65536}};
  for (auto& s : shapes) {
    int rows = s[0], n = s[1];
    if (n <= 131072) {
      run<4, 1024, false>(rows, n, x, y, copy_gbs);
      run_persistent<4, 1024, 4, false>(rows, n, x, y, copy_gbs, 1);
      run_persistent<4, 1024, 4, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 256, 8, false>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 256, 8, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 512, 4, false>(rows, n, x, y, copy_gbs, 1);
      run_persistent<4, 512, 8, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<16, 128, 8, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 128, 16, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 256, 4, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<2, 512, 8, true>(rows, n, x, y, copy_gbs, 1);
    } else {
      run<8, 1024, true>(rows, n, x, y, copy_gbs);
      run_persistent<8, 512, 8, false>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 512, 8, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<16, 256, 8, true>(rows, n, x, y, copy_gbs, 1);
      run_persistent<8, 1024, 4, true>(rows, n, x, y, copy_gbs, 1);
    }
  }
  return 0;
}
