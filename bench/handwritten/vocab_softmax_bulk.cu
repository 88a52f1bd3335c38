// Hand-written CUDA (not fusec's code): softmax over vocabulary-long bf16 rows split over a cluster,
// each block's chunk of the row brought into shared memory by the Hopper bulk copy engine
// (`cp.async.bulk`, the 1-D form of TMA: one instruction a chunk, completion counted in bytes on an
// mbarrier) instead of by its threads' loads into registers. The question it answers for fusec's
// long-row schedules: does a structure whose next rows are always in flight, without registers to
// hold them, pass the ~85% of copy that the register structure of vocab_softmax_cluster.cu reached
// (session 37: persistent clusters, the next row prefetched into a second register set)?
//
//   softmax_bulk<CL, T, NBUF>  persistent clusters of CL blocks of T threads; each block keeps NBUF
//                              chunk buffers in shared memory, NBUF - 1 rows ahead in flight; the
//                              row's max and sum of exp read from shared memory, merged over the
//                              cluster through distributed shared memory as (max, sum) pairs; the
//                              output written from registers with 128-bit stores.
//
// Every variant is checked on three rows against a double-precision softmax on the host.
//     nvcc -arch=sm_90a -O3 -std=c++17 -o /tmp/bulk bench/handwritten/vocab_softmax_bulk.cu && /tmp/bulk
#include <cooperative_groups.h>
#include <cstdint>
#include "common.cuh"  // CK, unpack, time_us
namespace cg = cooperative_groups;

// A failed call skips the variant (a cluster size or shared-memory size the GPU refuses), not the run.
#define SKIP_ON_ERROR(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("  skipped: CUDA %s at line %d\n", cudaGetErrorString(e), __LINE__); cudaGetLastError(); return; } } while (0)

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count));
}

// One arrival that also expects `bytes` from the copies issued next.
__device__ __forceinline__ void mbar_expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}

__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

template <int T>
__device__ float block_reduce(float v, float* sm, bool is_max) {
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(~0u, v, o); v = is_max ? fmaxf(v, w) : v + w; }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) sm[warp] = v;
  __syncthreads();
  v = lane < T / 32 ? sm[lane] : (is_max ? -INFINITY : 0.f);
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(~0u, v, o); v = is_max ? fmaxf(v, w) : v + w; }
  return v;
}

// `chunk` elements a block (a multiple of 8; the last block's part may be shorter), rows of `n`
// elements (a multiple of 8: every chunk starts 16-byte aligned).
template <int CL, int T, int NBUF>
__global__ void __launch_bounds__(T) softmax_bulk(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                                  int n, int rows, int chunk) {
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(128) uint4 buf[];  // NBUF chunks
  __shared__ uint64_t bars[NBUF];
  __shared__ float red[32];
  __shared__ float xm[2], xs[2];
  const int rank = cluster.block_rank();
  const int nclusters = gridDim.x / CL;
  const int begin = rank * chunk, end = min(n, begin + chunk);
  const int count = max(0, end - begin);          // elements of this block's part
  const uint32_t bytes = count * 2;
  const int vecs = count / 8;
  const int chunk_vecs = chunk / 8;
  long row = blockIdx.x / CL;
  if (threadIdx.x == 0) {
    for (int b = 0; b < NBUF; b++) mbar_init(&bars[b], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](long r, int b) {  // thread 0: row r's part into buffer b
    if (r >= rows) return;
    mbar_expect(&bars[b], bytes);
    const char* src = reinterpret_cast<const char*>(x + r * n + begin);
    char* dst = reinterpret_cast<char*>(buf + (long)b * chunk_vecs);
    for (uint32_t off = 0; off < bytes; off += 32768)
      bulk_load(dst + off, src + off, min(32768u, bytes - off), &bars[b]);
  };
  if (threadIdx.x == 0)
    for (int k = 0; k < NBUF - 1; k++) issue(row + (long)k * nclusters, k);
  for (int it = 0; row < rows; row += nclusters, it++) {
    const int b = it % NBUF;
    if (threadIdx.x == 0) issue(row + (long)(NBUF - 1) * nclusters, (it + NBUF - 1) % NBUF);
    mbar_wait(&bars[b], (it / NBUF) & 1);
    const uint4* part = buf + (long)b * chunk_vecs;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < vecs; i += T) {
      float f[8]; unpack(part[i], f);
#pragma unroll
      for (int j = 0; j < 8; j++) m = fmaxf(m, f[j]);
    }
    m = block_reduce<T>(m, red, true);
    float s = 0.f;
    for (int i = threadIdx.x; i < vecs; i += T) {
      float f[8]; unpack(part[i], f);
#pragma unroll
      for (int j = 0; j < 8; j++) s += __expf(f[j] - m);
    }
    s = block_reduce<T>(s, red, false);
    const int parity = it & 1;
    if (threadIdx.x == 0) { xm[parity] = m; xs[parity] = s; }
    cluster.sync();
    float M = -INFINITY, S = 0.f;
    for (int r = 0; r < CL; r++) M = fmaxf(M, *cluster.map_shared_rank(&xm[parity], r));
    for (int r = 0; r < CL; r++) S += *cluster.map_shared_rank(&xs[parity], r) * __expf(*cluster.map_shared_rank(&xm[parity], r) - M);
    const float inv = 1.f / S;
    uint4* out = reinterpret_cast<uint4*>(y + row * n + begin);
    for (int i = threadIdx.x; i < vecs; i += T) {
      float f[8]; unpack(part[i], f);
      uint4 raw; __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
      for (int j = 0; j < 4; j++) o[j] = __floats2bfloat162_rn(__expf(f[2 * j] - M) * inv, __expf(f[2 * j + 1] - M) * inv);
      out[i] = raw;
    }
    __syncthreads();  // every read of buffer b done before the next iteration's copy may refill it
  }
  cluster.sync();  // no block leaves while a peer may still read its exchange slots
}

__global__ void fill(__nv_bfloat16* x, long n) {  // a fixed pseudo-random pattern in [-8, 8)
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ static_cast<uint32_t>(i >> 32) * 40503u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = __float2bfloat16((h & 0xffff) / 4096.f - 8.f);
  }
}

__global__ void copy_kernel(const uint4* a, uint4* b, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) b[i] = a[i];
}

// The worst relative error of rows 0, rows/2 and rows-1 against a double-precision softmax.
double check(const __nv_bfloat16* x, const __nv_bfloat16* y, int rows, int n) {
  std::vector<__nv_bfloat16> hx(n), hy(n);
  double worst = 0;
  for (long r : {0L, (long)rows / 2, (long)rows - 1}) {
    cudaMemcpy(hx.data(), x + r * n, 2L * n, cudaMemcpyDeviceToHost);
    cudaMemcpy(hy.data(), y + r * n, 2L * n, cudaMemcpyDeviceToHost);
    double m = -INFINITY, s = 0;
    for (int i = 0; i < n; i++) m = std::max(m, (double)__bfloat162float(hx[i]));
    for (int i = 0; i < n; i++) s += std::exp(__bfloat162float(hx[i]) - m);
    for (int i = 0; i < n; i++) {
      double want = std::exp(__bfloat162float(hx[i]) - m) / s;
      worst = std::max(worst, std::fabs(__bfloat162float(hy[i]) - want) / want);
    }
  }
  return worst;
}

template <int CL, int T, int NBUF>
void run(int rows, int n, __nv_bfloat16* x, __nv_bfloat16* y, double copy_gbs) {
  const int chunk = ((n + CL - 1) / CL + 7) / 8 * 8;
  const size_t smem = (size_t)NBUF * chunk * 2;
  auto kern = softmax_bulk<CL, T, NBUF>;
  if (smem > 227 * 1024) { printf("rows %5d n %6d cluster %2d threads %4d buffers %d: %zu bytes of shared memory, skipped\n", rows, n, CL, T, NBUF, smem); return; }
  SKIP_ON_ERROR(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  if (CL > 8) SKIP_ON_ERROR(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(T);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CL; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  cfg.gridDim = dim3(CL);
  int clusters = 0;
  SKIP_ON_ERROR(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg));
  if (clusters == 0) { printf("rows %5d n %6d cluster %2d threads %4d buffers %d: no cluster fits, skipped\n", rows, n, CL, T, NBUF); return; }
  cfg.gridDim = dim3(clusters * CL);
  SKIP_ON_ERROR(cudaMemset(y, 0, 2L * rows * n));
  SKIP_ON_ERROR(cudaLaunchKernelEx(&cfg, kern, (const __nv_bfloat16*)x, y, n, rows, chunk));
  SKIP_ON_ERROR(cudaDeviceSynchronize());
  double err = check(x, y, rows, n);
  float us = time_us([&] { cudaLaunchKernelEx(&cfg, kern, (const __nv_bfloat16*)x, y, n, rows, chunk); });
  SKIP_ON_ERROR(cudaGetLastError());
  double gbs = 2.0 * rows * n * 2 / us / 1e3;
  printf("%s rows %5d n %6d cluster %2d threads %4d buffers %d (%3zu KB): %8.1f us %6.0f GB/s %5.1f%% of copy  clusters %3d  rel err %.1e\n",
         err < 2e-2 ? "ok   " : "WRONG", rows, n, CL, T, NBUF, smem / 1024, us, gbs, 100 * gbs / copy_gbs, clusters, err);
}

int main() {
  const long maxe = 1024L * 262144;  // 512 MB of bf16 each way
  __nv_bfloat16 *x, *y;
  cudaMalloc(&x, maxe * 2); cudaMalloc(&y, maxe * 2);
  fill<<<1024, 256>>>(x, maxe);
  const long nv = maxe * 2 / 16;
  float cu = time_us([&] { copy_kernel<<<132 * 16, 256>>>((uint4*)x, (uint4*)y, nv); });
  double copy_gbs = 2.0 * maxe * 2 / cu / 1e3;
  printf("copy %.1f us %.0f GB/s\n", cu, copy_gbs);
  // Llama 3's vocabulary (the rows of 256 KB that reached 83% in registers)
  run<4, 256, 2>(1024, 128256, x, y, copy_gbs);
  run<4, 512, 2>(1024, 128256, x, y, copy_gbs);
  run<8, 256, 2>(1024, 128256, x, y, copy_gbs);
  run<8, 256, 3>(1024, 128256, x, y, copy_gbs);
  run<8, 512, 3>(1024, 128256, x, y, copy_gbs);
  run<16, 256, 3>(1024, 128256, x, y, copy_gbs);
  run<2, 512, 2>(4096, 32768, x, y, copy_gbs);
  // rows of 512 KB: 72% in registers
  run<8, 256, 2>(256, 262144, x, y, copy_gbs);
  run<8, 512, 3>(256, 262144, x, y, copy_gbs);
  run<16, 256, 3>(256, 262144, x, y, copy_gbs);
  run<8, 256, 2>(1024, 262144, x, y, copy_gbs);
  run<16, 256, 3>(1024, 262144, x, y, copy_gbs);
  // 4096 x 65536 (87% in registers), and a row a block
  run<2, 512, 2>(4096, 65536, x, y, copy_gbs);
  run<4, 256, 3>(4096, 65536, x, y, copy_gbs);
  run<1, 512, 2>(8192, 32768, x, y, copy_gbs);
  run<1, 512, 3>(8192, 16384, x, y, copy_gbs);
  return 0;
}
