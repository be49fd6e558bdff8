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
using enum Importance;
using enum LoadFirst;

std::vector<ComponentSpec> build_catalog() {
  // Toolkit library directories: cuda-pathfinder's two anchors (lib64, lib), then the
  // targets/<triple> layout that toolkits and conda also use.
  const std::vector<std::string_view> ctk_lib_dirs = {"lib64", "lib", "targets/{triple}/lib", "targets/{triple}/lib64"};
  // clang-format off
  return {
    // Driver libraries: only the system loader finds them (cuda-pathfinder's rule).
    {.name = "cuda", .kind = K::dynamic_lib, .packaging = P::driver,
     .description = "CUDA driver API (libcuda); loaded by every CUDA program, installed with the NVIDIA driver",
     .file_names = {"libcuda.so.1"},
     .verify = VerifyWith{.probe = "driver", .first = loader}, .importance = core},
    {.name = "nvml", .kind = K::dynamic_lib, .packaging = P::driver,
     .description = "NVIDIA Management Library; used by nvidia-smi, monitoring agents and frameworks",
     .file_names = {"libnvidia-ml.so.1"},
     .verify = VerifyWith{.probe = "nvml", .first = loader}, .importance = core},

    // Toolkit libraries.
    {.name = "cudart", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "CUDA runtime API (shared); loaded by programs not linked to cudart_static",
     .file_names = {"libcudart.so.13", "libcudart.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"},
     .conda_packages = {"cuda-cudart"}, .toolkit_json_keys = {"cuda_cudart"},
     .verify = VerifyWith{.probe = "cudart", .first = python}, .importance = core},
    {.name = "nvrtc", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "runtime compiler for CUDA C++; used by CuPy, Numba, PyTorch JIT, cuda.core",
     .file_names = {"libnvrtc.so.13", "libnvrtc.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"},
     .conda_packages = {"cuda-nvrtc"}, .toolkit_json_keys = {"cuda_nvrtc"},
     .verify = VerifyWith{.probe = "nvrtc", .first = python}, .importance = core},
    {.name = "nvJitLink", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "JIT linker for LTO-IR and cubins; used with NVRTC, cuSPARSE and cuSOLVER",
     .file_names = {"libnvJitLink.so.13", "libnvJitLink.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-nvjitlink", "nvidia-nvjitlink-cu12"},
     .conda_packages = {"libnvjitlink"}, .toolkit_json_keys = {"libnvjitlink"},
     .verify = VerifyWith{.probe = "nvjitlink", .first = python}, .importance = core},
    {.name = "nvvm", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NVVM IR compiler; used by Numba-CUDA and other LLVM-based front ends",
     .file_names = {"libnvvm.so.4", "libnvvm.so"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"},
     .toolkit_dirs = {"nvvm/lib64", "lib64", "lib"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvvm", "nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"libnvvm", "cuda-nvvm"}, .toolkit_json_keys = {"cuda_nvvm", "cuda_nvcc"},
     .uses_ctk_root_canary = true, .importance = core},
    {.name = "nvfatbin", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "fatbinary builder library; used by JIT pipelines that bundle cubins",
     .file_names = {"libnvfatbin.so.13", "libnvfatbin.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/nvfatbin/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-nvfatbin", "nvidia-nvfatbin-cu12"},
     .conda_packages = {"libnvfatbin"}, .toolkit_json_keys = {"libnvfatbin"}},
    {.name = "cupti", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "CUDA profiling tools interface; used by profilers and framework tracers",
     .file_names = {"libcupti.so.13", "libcupti.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"},
     .toolkit_dirs = {"extras/CUPTI/lib64", "lib", "lib64", "targets/{triple}/lib"}, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-cupti", "nvidia-cuda-cupti-cu12"},
     .conda_packages = {"cuda-cupti"}, .toolkit_json_keys = {"cuda_cupti"},
     .uses_ctk_root_canary = true},
    {.name = "cublas", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "dense linear algebra (BLAS); used by PyTorch, CuPy, JAX",
     .file_names = {"libcublas.so.13", "libcublas.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cublas/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12"},
     .conda_packages = {"libcublas"}, .toolkit_json_keys = {"libcublas"}},
    {.name = "cublasLt", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "lightweight matmul library behind cuBLAS; used by PyTorch and cuDNN",
     .file_names = {"libcublasLt.so.13", "libcublasLt.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cublas/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12"},
     .conda_packages = {"libcublas"}, .toolkit_json_keys = {"libcublas"}},
    {.name = "cufft", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "fast Fourier transforms",
     .file_names = {"libcufft.so.12", "libcufft.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cufft/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cufft", "nvidia-cufft-cu12"},
     .conda_packages = {"libcufft"}, .toolkit_json_keys = {"libcufft"}},
    {.name = "curand", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "random number generation",
     .file_names = {"libcurand.so.11", "libcurand.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/curand/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-curand", "nvidia-curand-cu12"},
     .conda_packages = {"libcurand"}, .toolkit_json_keys = {"libcurand"}},
    {.name = "cusolver", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "dense and sparse direct solvers",
     .file_names = {"libcusolver.so.12", "libcusolver.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusolver/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusolver", "nvidia-cusolver-cu12"},
     .conda_packages = {"libcusolver"}, .toolkit_json_keys = {"libcusolver"}},
    {.name = "cusparse", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "sparse linear algebra",
     .file_names = {"libcusparse.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusparse/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusparse", "nvidia-cusparse-cu12"},
     .conda_packages = {"libcusparse"}, .toolkit_json_keys = {"libcusparse"}},

    // Separately shipped NVIDIA libraries: their product-root variables come before CUDA_PATH.
    {.name = "nccl", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "collective communication across GPUs; used by PyTorch distributed, JAX",
     .file_names = {"libnccl.so.2"},
     .wheel_dirs = {"nvidia/nccl/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .product_root_vars = {"NCCL_HOME"}, .product_root_dirs = {"lib", "lib64", "build/lib"},
     .wheel_distributions = {"nvidia-nccl-cu13", "nvidia-nccl-cu12"},
     .conda_packages = {"nccl"}},
    {.name = "cudnn", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "deep neural network primitives; used by PyTorch, TensorFlow, JAX",
     .file_names = {"libcudnn.so.9"},
     .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = ctk_lib_dirs, .pathfinder_toolkit_dirs = 2,
     .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12"},
     .conda_packages = {"cudnn"}},

    // Header sets: the answer is the directory that holds the anchor file.
    {.name = "cccl", .kind = K::headers, .packaging = P::toolkit,
     .description = "CUDA C++ Core Libraries (libcu++, CUB, Thrust); NVRTC and host compilers need -I to it",
     .file_names = {"cuda/std/version"},
     .wheel_dirs = {"nvidia/cu13/include/cccl", "nvidia/cuda_cccl/include"},
     .toolkit_dirs = {"include/cccl", "include", "targets/{triple}/include/cccl", "targets/{triple}/include"},
     .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"},
     .conda_packages = {"cuda-cccl", "cuda-cccl_linux-64"}, .toolkit_json_keys = {"cuda_cccl"},
     .uses_ctk_root_canary = true, .importance = core},
    {.name = "cudart", .kind = K::headers, .packaging = P::toolkit,
     .description = "CUDA runtime headers (cuda_runtime.h); needed to compile CUDA C++ with NVRTC or a host compiler",
     .file_names = {"cuda_runtime.h"},
     .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_runtime/include"},
     .toolkit_dirs = {"include", "targets/{triple}/include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"},
     .conda_packages = {"cuda-cudart-dev", "cuda-cudart"}, .toolkit_json_keys = {"cuda_cudart"},
     .uses_ctk_root_canary = true},
    {.name = "nvrtc", .kind = K::headers, .packaging = P::toolkit,
     .description = "NVRTC header (nvrtc.h); needed to build programs that call NVRTC",
     .file_names = {"nvrtc.h"},
     .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_nvrtc/include"},
     .toolkit_dirs = {"include", "targets/{triple}/include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"},
     .conda_packages = {"cuda-nvrtc-dev", "cuda-nvrtc"}, .toolkit_json_keys = {"cuda_nvrtc"},
     .uses_ctk_root_canary = true},

    // Binaries: the answer is the executable, found as PATH lookup finds it for the loader column.
    {.name = "nvcc", .kind = K::binary, .packaging = P::toolkit,
     .description = "CUDA compiler driver",
     .file_names = {"nvcc"},
     .wheel_dirs = {"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"},
     .toolkit_dirs = {"bin"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "ptxas", .kind = K::binary, .packaging = P::toolkit,
     .description = "PTX assembler used by nvcc",
     .file_names = {"ptxas"},
     .wheel_dirs = {"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"},
     .toolkit_dirs = {"bin"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
  };
  // clang-format on
}

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
