#include "probes/catalog.hpp"

namespace cudadiag::probes {

std::string_view to_string(ComponentKind kind) {
  switch (kind) {
  case ComponentKind::dynamic_lib: return "dynamic_lib";
  case ComponentKind::headers: return "headers";
  case ComponentKind::binary: return "binary";
  }
  return "unknown";
}

namespace {

using K = ComponentKind;
using P = Packaging;

// Toolkit library directories: cuda-pathfinder's anchors first (lib64, lib), then the
// targets/<triple> layout that toolkits and conda also use.
#define CUDADIAG_CTK_LIB_DIRS {"lib64", "lib", "targets/{triple}/lib", "targets/{triple}/lib64"}, 2

std::vector<ComponentSpec> build_catalog() {
  // clang-format off
  return {
    // name        kind          packaging    description
    {"cuda",      K::dynamic_lib, P::driver,  "CUDA driver API (libcuda); loaded by every CUDA program, installed with the NVIDIA driver",
     {"libcuda.so.1"}, {}, {}, 0, {}, {}, {}, {}, {}},
    {"nvml",      K::dynamic_lib, P::driver,  "NVIDIA Management Library; used by nvidia-smi, monitoring agents and frameworks",
     {"libnvidia-ml.so.1"}, {}, {}, 0, {}, {}, {}, {}, {}},
    {"cudart",    K::dynamic_lib, P::toolkit, "CUDA runtime API (shared); loaded by programs not linked to cudart_static",
     {"libcudart.so.13", "libcudart.so.12"}, {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"}, {"cuda-cudart"}, {"cuda_cudart"}},
    {"nvrtc",     K::dynamic_lib, P::toolkit, "runtime compiler for CUDA C++; used by CuPy, Numba, PyTorch JIT, cuda.core",
     {"libnvrtc.so.13", "libnvrtc.so.12"}, {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"}, {"cuda-nvrtc"}, {"cuda_nvrtc"}},
    {"nvJitLink", K::dynamic_lib, P::toolkit, "JIT linker for LTO-IR and cubins; used with NVRTC, cuSPARSE and cuSOLVER",
     {"libnvJitLink.so.13", "libnvJitLink.so.12"}, {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-nvjitlink", "nvidia-nvjitlink-cu12"}, {"libnvjitlink"}, {"libnvjitlink"}},
    {"nvvm",      K::dynamic_lib, P::toolkit, "NVVM IR compiler; used by Numba-CUDA and other LLVM-based front ends",
     {"libnvvm.so.4", "libnvvm.so"}, {"nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"},
     {"nvvm/lib64", "lib64", "lib"}, 1, {}, {},
     {"nvidia-nvvm", "nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"}, {"libnvvm", "cuda-nvvm"}, {"cuda_nvvm", "cuda_nvcc"}, true},
    {"nvfatbin",  K::dynamic_lib, P::toolkit, "fatbinary builder library; used by JIT pipelines that bundle cubins",
     {"libnvfatbin.so.13", "libnvfatbin.so.12"}, {"nvidia/cu13/lib", "nvidia/nvfatbin/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-nvfatbin", "nvidia-nvfatbin-cu12"}, {"libnvfatbin"}, {"libnvfatbin"}},
    {"cupti",     K::dynamic_lib, P::toolkit, "CUDA profiling tools interface; used by profilers and framework tracers",
     {"libcupti.so.13", "libcupti.so.12"}, {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"},
     {"extras/CUPTI/lib64", "lib", "lib64", "targets/{triple}/lib"}, 2, {}, {},
     {"nvidia-cuda-cupti", "nvidia-cuda-cupti-cu12"}, {"cuda-cupti"}, {"cuda_cupti"}, true},
    {"cublas",    K::dynamic_lib, P::toolkit, "dense linear algebra (BLAS); used by PyTorch, CuPy, JAX",
     {"libcublas.so.13", "libcublas.so.12"}, {"nvidia/cu13/lib", "nvidia/cublas/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cublas", "nvidia-cublas-cu12"}, {"libcublas"}, {"libcublas"}},
    {"cublasLt",  K::dynamic_lib, P::toolkit, "lightweight matmul library behind cuBLAS; used by PyTorch and cuDNN",
     {"libcublasLt.so.13", "libcublasLt.so.12"}, {"nvidia/cu13/lib", "nvidia/cublas/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cublas", "nvidia-cublas-cu12"}, {"libcublas"}, {"libcublas"}},
    {"cufft",     K::dynamic_lib, P::toolkit, "fast Fourier transforms",
     {"libcufft.so.12", "libcufft.so.11"}, {"nvidia/cu13/lib", "nvidia/cufft/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cufft", "nvidia-cufft-cu12"}, {"libcufft"}, {"libcufft"}},
    {"curand",    K::dynamic_lib, P::toolkit, "random number generation",
     {"libcurand.so.11", "libcurand.so.10"}, {"nvidia/cu13/lib", "nvidia/curand/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-curand", "nvidia-curand-cu12"}, {"libcurand"}, {"libcurand"}},
    {"cusolver",  K::dynamic_lib, P::toolkit, "dense and sparse direct solvers",
     {"libcusolver.so.12", "libcusolver.so.11"}, {"nvidia/cu13/lib", "nvidia/cusolver/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cusolver", "nvidia-cusolver-cu12"}, {"libcusolver"}, {"libcusolver"}},
    {"cusparse",  K::dynamic_lib, P::toolkit, "sparse linear algebra",
     {"libcusparse.so.12"}, {"nvidia/cu13/lib", "nvidia/cusparse/lib"}, CUDADIAG_CTK_LIB_DIRS, {}, {},
     {"nvidia-cusparse", "nvidia-cusparse-cu12"}, {"libcusparse"}, {"libcusparse"}},
    {"nccl",      K::dynamic_lib, P::other,   "collective communication across GPUs; used by PyTorch distributed, JAX",
     {"libnccl.so.2"}, {"nvidia/nccl/lib"}, CUDADIAG_CTK_LIB_DIRS, {"NCCL_HOME"}, {"lib", "lib64", "build/lib"},
     {"nvidia-nccl-cu13", "nvidia-nccl-cu12"}, {"nccl"}, {}},
    {"cudnn",     K::dynamic_lib, P::other,   "deep neural network primitives; used by PyTorch, TensorFlow, JAX",
     {"libcudnn.so.9"}, {"nvidia/cudnn/lib"}, CUDADIAG_CTK_LIB_DIRS, {"CUDNN_PATH"}, {"lib", "lib64"},
     {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12"}, {"cudnn"}, {}},

    {"cccl",      K::headers, P::toolkit, "CUDA C++ Core Libraries (libcu++, CUB, Thrust); NVRTC and host compilers need -I to it",
     {"cuda/std/version"}, {"nvidia/cu13/include/cccl", "nvidia/cuda_cccl/include"},
     {"include/cccl", "include", "targets/{triple}/include/cccl", "targets/{triple}/include"}, 2, {}, {},
     {"nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"}, {"cuda-cccl", "cuda-cccl_linux-64"}, {"cuda_cccl"}, true},
    {"cudart",    K::headers, P::toolkit, "CUDA runtime headers (cuda_runtime.h); needed to compile CUDA C++ with NVRTC or a host compiler",
     {"cuda_runtime.h"}, {"nvidia/cu13/include", "nvidia/cuda_runtime/include"},
     {"include", "targets/{triple}/include"}, 1, {}, {},
     {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"}, {"cuda-cudart-dev", "cuda-cudart"}, {"cuda_cudart"}, true},
    {"nvrtc",     K::headers, P::toolkit, "NVRTC header (nvrtc.h); needed to build programs that call NVRTC",
     {"nvrtc.h"}, {"nvidia/cu13/include", "nvidia/cuda_nvrtc/include"},
     {"include", "targets/{triple}/include"}, 1, {}, {},
     {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"}, {"cuda-nvrtc-dev", "cuda-nvrtc"}, {"cuda_nvrtc"}, true},

    {"nvcc",      K::binary, P::toolkit, "CUDA compiler driver",
     {"nvcc"}, {"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"}, {"bin"}, 1, {}, {},
     {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"}, {"cuda-nvcc"}, {"cuda_nvcc"}, true},
    {"ptxas",     K::binary, P::toolkit, "PTX assembler used by nvcc",
     {"ptxas"}, {"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"}, {"bin"}, 1, {}, {},
     {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"}, {"cuda-nvcc"}, {"cuda_nvcc"}, true},
  };
  // clang-format on
}

#undef CUDADIAG_CTK_LIB_DIRS

} // namespace

const std::vector<ComponentSpec>& catalog() {
  static const std::vector<ComponentSpec> table = build_catalog();
  return table;
}

const ComponentSpec* find_component(std::string_view name, std::optional<ComponentKind> kind) {
  for (const auto& spec : catalog()) {
    if (spec.name == name && (!kind || spec.kind == *kind)) {
      return &spec;
    }
  }
  return nullptr;
}

} // namespace cudadiag::probes
