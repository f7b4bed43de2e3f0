// The builtin kernels on the GPU, with exactly the simulator's semantics (docs/kernels.md).
//
// ABI (cuda/include/quiesce/cuda/kernels.h): one {address, bytes} pair per binding, then the parameter
// bytes. Every kernel walks its whole range with a grid-stride loop, so its result does not depend on the
// launch dimensions; arithmetic is on unsigned integers, so wrap-around is mod 2^32 or 2^64 exactly as on
// the host.
#include <cstdint>

namespace {

template <class T>
struct Span {
  T* data;
  unsigned long long bytes;
};

__device__ unsigned long long global_thread_index() {
  const unsigned long long block =
      blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  const unsigned long long thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return block * (blockDim.x * blockDim.y * blockDim.z) + thread;
}

__device__ unsigned long long global_thread_count() {
  return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z * blockDim.x * blockDim.y *
         blockDim.z;
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

}  // namespace

struct FillParams {
  unsigned int value;
};
struct SaxpyParams {
  unsigned int a;
};
struct DelayParams {
  unsigned long long duration_ns;
};

// fill [0 Write] {u32 value}: every whole u32 word of the binding becomes value.
extern "C" __global__ void quiesce_fill(Span<unsigned int> out, FillParams params) {
  const unsigned long long words = out.bytes / 4;
  for (unsigned long long i = global_thread_index(); i < words; i += global_thread_count()) {
    out.data[i] = params.value;
  }
}

// copy [0 Read src, 1 Write dst]: the first min(src, dst) bytes of src into dst.
extern "C" __global__ void quiesce_copy(Span<const unsigned char> source, Span<unsigned char> target) {
  const unsigned long long bytes = source.bytes < target.bytes ? source.bytes : target.bytes;
  for (unsigned long long i = global_thread_index(); i < bytes; i += global_thread_count()) {
    target.data[i] = source.data[i];
  }
}

// saxpy [0 Read x, 1 ReadWrite y] {u32 a}: y[i] = a * x[i] + y[i] mod 2^32 over min(words).
extern "C" __global__ void quiesce_saxpy(Span<const unsigned int> x, Span<unsigned int> y, SaxpyParams params) {
  const unsigned long long x_words = x.bytes / 4;
  const unsigned long long y_words = y.bytes / 4;
  const unsigned long long words = x_words < y_words ? x_words : y_words;
  for (unsigned long long i = global_thread_index(); i < words; i += global_thread_count()) {
    y.data[i] = params.a * x.data[i] + y.data[i];
  }
}

// checksum [0 Read data, 1 Write out >= 8 bytes]: out = sum (i + 1) * word[i] mod 2^64, a u64 (little
// endian, the GPU's byte order). One block computes it (blocks other than the first return), so no
// cross-block ordering is needed and the sum is the same for every launch shape.
extern "C" __global__ void quiesce_checksum(Span<const unsigned int> data, Span<unsigned long long> out) {
  __shared__ unsigned long long total;
  if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0) return;
  const unsigned int thread = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
  if (thread == 0) total = 0;
  __syncthreads();
  unsigned long long partial = 0;
  const unsigned long long words = data.bytes / 4;
  for (unsigned long long i = thread; i < words; i += threads) {
    partial += (i + 1) * static_cast<unsigned long long>(data.data[i]);
  }
  atomicAdd(&total, partial);
  __syncthreads();
  if (thread == 0 && out.bytes >= 8) out.data[0] = total;
}

// delay [any bindings, unused] {u64 duration_ns}: the first thread spins on %globaltimer for duration_ns; touches no memory.
extern "C" __global__ void quiesce_delay(DelayParams params) {
  if (global_thread_index() != 0) return;
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < params.duration_ns) {
  }
}

// fault [0 any]: a write through an address no allocation covers (the binding is not touched). The device
// raises CUDA_ERROR_ILLEGAL_ADDRESS, a sticky error: the context is lost (CUDA-FACTS.md).
extern "C" __global__ void quiesce_fault(Span<unsigned int> unused) {
  (void)unused;
  if (global_thread_index() != 0) return;
  volatile unsigned int* illegal = reinterpret_cast<volatile unsigned int*>(0x10ULL);
  *illegal = 0xDEADu;
}
