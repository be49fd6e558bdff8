#include "probes/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cudadiag::probes {

std::string_view to_string(ComponentKind kind) {
  switch (kind) {
  case ComponentKind::dynamic_lib: return "dynamic_lib";
  case ComponentKind::headers: return "headers";
  case ComponentKind::binary: return "binary";
  case ComponentKind::static_lib: return "static_lib";
  case ComponentKind::bitcode_lib: return "bitcode_lib";
  }
  return "unknown";
}

std::optional<ComponentKind> kind_from_string(std::string_view text) {
  constexpr std::pair<std::string_view, ComponentKind> k_names[] = {
      {"dynamic_lib", ComponentKind::dynamic_lib}, {"lib", ComponentKind::dynamic_lib},
      {"headers", ComponentKind::headers},         {"binary", ComponentKind::binary},
      {"static_lib", ComponentKind::static_lib},   {"static", ComponentKind::static_lib},
      {"bitcode_lib", ComponentKind::bitcode_lib}, {"bitcode", ComponentKind::bitcode_lib},
  };
  for (const auto& [name, kind] : k_names) {
    if (name == text) {
      return kind;
    }
  }
  return std::nullopt;
}

namespace {

using K = ComponentKind;
using P = Packaging;
using enum Importance;
using enum LoadFirst;
using Names = std::vector<std::string_view>;

std::vector<ComponentSpec> build_catalog() {
  // Toolkit library directories: cuda-pathfinder's two anchors (lib64, lib), then the
  // targets/<triple> layout that toolkits and conda also use. Separately shipped libraries are
  // searched under the same anchors in conda and CUDA_PATH.
  const Names lib_dirs = {"lib64", "lib", "targets/{triple}/lib", "targets/{triple}/lib64"};
  // Toolkit header directories: cuda-pathfinder's anchor (include), then targets/<triple>/include.
  const Names include_dirs = {"include", "targets/{triple}/include"};
  const Names bin_dirs = {"bin"};
  // The CUDA 12 wheel of nvcc and the CUDA 13 wheel's bin/ (cuda-pathfinder's order).
  const Names nvcc_bins = {"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"};
  const Names nvcc_dists = {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"};
  const Names npp_wheels = {"nvidia/cu13/lib", "nvidia/npp/lib"};
  const Names npp_dists = {"nvidia-npp", "nvidia-npp-cu12", "nvidia-npp-cu11"};
  const Names cuquantum_lib = {"cuquantum/lib"};
  const Names cuquantum_include = {"cuquantum/include"};
  const Names cudnn_dists = {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11"};
  const Names cutensor_dists = {"cutensor-cu13", "cutensor-cu12", "cutensor-cu11"};
  const Names cutlass_include = {"cutlass_library/source/include"};
  // cuDNN and NCCL headers where distributions install them (cuDNN also in the multiarch dir).
  const Names system_includes = {"/usr/include", "/usr/local/include"};
  // clang-format off
  return {
    // ---- Driver libraries: only the system loader finds them (cuda-pathfinder's rule).
    {.name = "cuda", .kind = K::dynamic_lib, .packaging = P::driver,
     .description = "CUDA driver API (libcuda); loaded by every CUDA program, installed with the NVIDIA driver",
     .file_names = {"libcuda.so.1"},
     .verify = VerifyWith{.probe = "driver", .first = loader}, .importance = core},
    {.name = "nvml", .kind = K::dynamic_lib, .packaging = P::driver,
     .description = "NVIDIA Management Library; used by nvidia-smi, monitoring agents and frameworks",
     .file_names = {"libnvidia-ml.so.1"},
     .verify = VerifyWith{.probe = "nvml", .first = loader}, .importance = core},
    {.name = "nvcudla", .kind = K::dynamic_lib, .packaging = P::driver,
     .description = "driver side of the Deep Learning Accelerator runtime (Jetson/DRIVE); loaded by cuDLA",
     .file_names = {"libnvcudla.so"}},

    // ---- Toolkit libraries.
    {.name = "cudart", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "CUDA runtime API (shared); loaded by programs not linked to cudart_static",
     .file_names = {"libcudart.so.13", "libcudart.so.12"}, .older_sonames = {"libcudart.so.11.0", "libcudart.so.10.2"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"},
     .conda_packages = {"cuda-cudart"}, .toolkit_json_keys = {"cuda_cudart"},
     .verify = VerifyWith{.probe = "cudart", .first = python}, .importance = core},
    {.name = "nvrtc", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "runtime compiler for CUDA C++; used by CuPy, Numba, PyTorch JIT, cuda.core",
     .file_names = {"libnvrtc.so.13", "libnvrtc.so.12"}, .older_sonames = {"libnvrtc.so.11.2", "libnvrtc.so.11.1", "libnvrtc.so.11.0", "libnvrtc.so.10.2"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc-cu11"},
     .conda_packages = {"cuda-nvrtc"}, .toolkit_json_keys = {"cuda_nvrtc"},
     .verify = VerifyWith{.probe = "nvrtc", .first = python}, .importance = core},
    {.name = "nvJitLink", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "JIT linker for LTO-IR and cubins; used with NVRTC, cuSPARSE and cuSOLVER",
     .file_names = {"libnvJitLink.so.13", "libnvJitLink.so.12"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
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
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
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
     .file_names = {"libcublas.so.13", "libcublas.so.12"}, .older_sonames = {"libcublas.so.11", "libcublas.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cublas/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12", "nvidia-cublas-cu11"},
     .conda_packages = {"libcublas"}, .toolkit_json_keys = {"libcublas"},
     .dependencies = {"cublasLt"}, .release_group = "cublas"},
    {.name = "cublasLt", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "lightweight matmul library behind cuBLAS; used by PyTorch and cuDNN",
     .file_names = {"libcublasLt.so.13", "libcublasLt.so.12"}, .older_sonames = {"libcublasLt.so.11", "libcublasLt.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cublas/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12", "nvidia-cublas-cu11"},
     .conda_packages = {"libcublas"}, .toolkit_json_keys = {"libcublas"}, .release_group = "cublas"},
    {.name = "nvblas", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "drop-in BLAS that offloads level-3 calls to cuBLAS; preloaded under CPU BLAS programs",
     .file_names = {"libnvblas.so.13", "libnvblas.so.12"}, .older_sonames = {"libnvblas.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cublas/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12", "nvidia-cublas-cu11"},
     .conda_packages = {"libcublas"}, .toolkit_json_keys = {"libcublas"},
     .dependencies = {"cublas", "cublasLt"}, .release_group = "cublas"},
    {.name = "cufft", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "fast Fourier transforms",
     .file_names = {"libcufft.so.12", "libcufft.so.11"}, .older_sonames = {"libcufft.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cufft/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cufft", "nvidia-cufft-cu12", "nvidia-cufft-cu11"},
     .conda_packages = {"libcufft"}, .toolkit_json_keys = {"libcufft"}, .release_group = "cufft"},
    {.name = "cufftw", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "FFTW-compatible interface over cuFFT",
     .file_names = {"libcufftw.so.12", "libcufftw.so.11"}, .older_sonames = {"libcufftw.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cufft/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cufft", "nvidia-cufft-cu12", "nvidia-cufft-cu11"},
     .conda_packages = {"libcufft"}, .toolkit_json_keys = {"libcufft"},
     .dependencies = {"cufft"}, .release_group = "cufft"},
    {.name = "curand", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "random number generation",
     .file_names = {"libcurand.so.11", "libcurand.so.10"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/curand/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-curand", "nvidia-curand-cu12", "nvidia-curand-cu11"},
     .conda_packages = {"libcurand"}, .toolkit_json_keys = {"libcurand"}},
    {.name = "cusolver", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "dense and sparse direct solvers",
     .file_names = {"libcusolver.so.12", "libcusolver.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusolver/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusolver", "nvidia-cusolver-cu12", "nvidia-cusolver-cu11"},
     .conda_packages = {"libcusolver"}, .toolkit_json_keys = {"libcusolver"},
     .dependencies = {"nvJitLink", "cusparse", "cublasLt", "cublas"}, .release_group = "cusolver"},
    {.name = "cusolverMg", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "multi-GPU dense solvers on one node",
     .file_names = {"libcusolverMg.so.12", "libcusolverMg.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusolver/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusolver", "nvidia-cusolver-cu12", "nvidia-cusolver-cu11"},
     .conda_packages = {"libcusolver"}, .toolkit_json_keys = {"libcusolver"},
     .dependencies = {"nvJitLink", "cublasLt", "cublas"}, .release_group = "cusolver"},
    {.name = "cusparse", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "sparse linear algebra",
     .file_names = {"libcusparse.so.12"}, .older_sonames = {"libcusparse.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusparse/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusparse", "nvidia-cusparse-cu12", "nvidia-cusparse-cu11"},
     .conda_packages = {"libcusparse"}, .toolkit_json_keys = {"libcusparse"},
     .dependencies = {"nvJitLink"}},
    {.name = "nppc", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP core (image and signal primitives); every other npp* library needs it",
     .file_names = {"libnppc.so.13", "libnppc.so.12"}, .older_sonames = {"libnppc.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"}, .release_group = "npp"},
    {.name = "nppial", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image arithmetic and logic",
     .file_names = {"libnppial.so.13", "libnppial.so.12"}, .older_sonames = {"libnppial.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppicc", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image colour conversion",
     .file_names = {"libnppicc.so.13", "libnppicc.so.12"}, .older_sonames = {"libnppicc.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppidei", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image data exchange and initialisation",
     .file_names = {"libnppidei.so.13", "libnppidei.so.12"}, .older_sonames = {"libnppidei.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppif", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image filters",
     .file_names = {"libnppif.so.13", "libnppif.so.12"}, .older_sonames = {"libnppif.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppig", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image geometry transforms",
     .file_names = {"libnppig.so.13", "libnppig.so.12"}, .older_sonames = {"libnppig.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppim", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image morphology",
     .file_names = {"libnppim.so.13", "libnppim.so.12"}, .older_sonames = {"libnppim.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppist", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image statistics",
     .file_names = {"libnppist.so.13", "libnppist.so.12"}, .older_sonames = {"libnppist.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppisu", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image memory support",
     .file_names = {"libnppisu.so.13", "libnppisu.so.12"}, .older_sonames = {"libnppisu.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nppitc", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP image threshold and compare",
     .file_names = {"libnppitc.so.13", "libnppitc.so.12"}, .older_sonames = {"libnppitc.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "npps", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NPP signal processing",
     .file_names = {"libnpps.so.13", "libnpps.so.12"}, .older_sonames = {"libnpps.so.11"}, .wheel_dirs = npp_wheels,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp"}, .toolkit_json_keys = {"libnpp"},
     .dependencies = {"nppc"}, .release_group = "npp"},
    {.name = "nvjpeg", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "GPU JPEG decoding and encoding; used by torchvision and DALI",
     .file_names = {"libnvjpeg.so.13", "libnvjpeg.so.12"}, .older_sonames = {"libnvjpeg.so.11"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/nvjpeg/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-nvjpeg", "nvidia-nvjpeg-cu12", "nvidia-nvjpeg-cu11"},
     .conda_packages = {"libnvjpeg"}, .toolkit_json_keys = {"libnvjpeg"}},
    {.name = "cufile", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "GPUDirect Storage (cuFile): file I/O straight into GPU memory; used by KvikIO and cuDF",
     .file_names = {"libcufile.so.0"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cufile/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cufile", "nvidia-cufile-cu12"},
     .conda_packages = {"libcufile"}, .toolkit_json_keys = {"libcufile"}},
    {.name = "cudla", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "Deep Learning Accelerator runtime (Jetson/DRIVE)",
     .file_names = {"libcudla.so.1"},
     .wheel_dirs = {"nvidia/cu13/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cudla"}, .conda_packages = {"libcudla"}},

    // ---- Separately shipped NVIDIA libraries: product-root variables come before CUDA_PATH.
    {.name = "cublasmp", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "distributed (multi-process) cuBLAS",
     .file_names = {"libcublasmp.so.0"},
     .wheel_dirs = {"nvidia/cublasmp/cu13/lib", "nvidia/cublasmp/cu12/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cublasmp-cu13", "nvidia-cublasmp-cu12"}, .conda_packages = {"libcublasmp"},
     .dependencies = {"cublas", "cublasLt", "nvshmem_host"}},
    {.name = "cufftMp", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "distributed (multi-process) cuFFT over NVSHMEM",
     .file_names = {"libcufftMp.so.12", "libcufftMp.so.11"},
     .wheel_dirs = {"nvidia/cufftmp/cu13/lib", "nvidia/cufftmp/cu12/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cufftmp-cu13", "nvidia-cufftmp-cu12"}, .conda_packages = {"libcufftmp"},
     .dependencies = {"nvshmem_host"}},
    {.name = "cudnn", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "deep neural network primitives; used by PyTorch, TensorFlow, JAX",
     .file_names = {"libcudnn.so.9"}, .older_sonames = {"libcudnn.so.8"},
     .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11"},
     .conda_packages = {"cudnn"},
     .dependencies = {"cublasLt"}, .optional_dependencies = {"nvrtc"}, .release_group = "cudnn"},
    {.name = "cusolverMp", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "distributed (multi-process) dense solvers",
     .file_names = {"libcusolverMp.so.0"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cu12/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusolvermp-cu13", "nvidia-cusolvermp-cu12"}, .conda_packages = {"libcusolvermp"},
     .dependencies = {"cublas", "cudart", "cusolver", "nccl"}},
    {.name = "mathdx", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "MathDx device-extension runtime (cuBLASDx, cuFFTDx); used by nvmath-python",
     .file_names = {"libmathdx.so.0"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cu12/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-libmathdx-cu13", "nvidia-libmathdx-cu12"}, .conda_packages = {"libmathdx"},
     .dependencies = {"nvrtc"}},
    {.name = "cudss", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "direct sparse solvers; used by nvmath-python and CuPy",
     .file_names = {"libcudss.so.1", "libcudss.so.0"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cu12/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cudss-cu13", "nvidia-cudss-cu12"}, .conda_packages = {"libcudss"},
     .dependencies = {"cublas", "cublasLt"}, .optional_dependencies = {"nvrtc"}},
    {.name = "cusparseLt", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "structured-sparsity matmul; required by PyTorch wheels",
     .file_names = {"libcusparseLt.so.0"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cusparselt/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cusparselt-cu13", "nvidia-cusparselt-cu12"}, .conda_packages = {"libcusparselt"}},
    {.name = "cutensor", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "tensor contractions and reductions; used by CuPy and cuQuantum",
     .file_names = {"libcutensor.so.2"}, .older_sonames = {"libcutensor.so.1"}, .wheel_dirs = {"cutensor/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = cutensor_dists, .conda_packages = {"cutensor", "libcutensor"},
     .dependencies = {"cublasLt"}, .release_group = "cutensor"},
    {.name = "cutensorMg", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "multi-GPU cuTENSOR",
     .file_names = {"libcutensorMg.so.2"}, .older_sonames = {"libcutensorMg.so.1"}, .wheel_dirs = {"cutensor/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = cutensor_dists, .conda_packages = {"cutensor", "libcutensor"},
     .dependencies = {"cutensor", "cublasLt"}, .release_group = "cutensor"},
    {.name = "cutensorMp", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "distributed (multi-process) cuTENSOR over NCCL",
     .file_names = {"libcutensorMp.so.2"}, .wheel_dirs = {"cutensor/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = cutensor_dists, .conda_packages = {"cutensor", "libcutensor"},
     .dependencies = {"cutensor", "cublasLt", "cudart", "nccl"}, .release_group = "cutensor"},
    {.name = "cudensitymat", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuQuantum density-matrix simulation",
     .file_names = {"libcudensitymat.so.0"}, .wheel_dirs = cuquantum_lib,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"cudensitymat-cu13", "cudensitymat-cu12"}, .conda_packages = {"cudensitymat"},
     .dependencies = {"cutensornet", "cutensor", "cusolver", "cublasLt", "cublas", "curand", "cusparse", "nvJitLink"}},
    {.name = "cupauliprop", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuQuantum Pauli-propagation simulation",
     .file_names = {"libcupauliprop.so.0"}, .wheel_dirs = cuquantum_lib,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"cupauliprop-cu13", "cupauliprop-cu12"}, .conda_packages = {"cupauliprop"}},
    {.name = "cutensornet", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuQuantum tensor-network contraction",
     .file_names = {"libcutensornet.so.2"}, .wheel_dirs = cuquantum_lib,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"cutensornet-cu13", "cutensornet-cu12"}, .conda_packages = {"cutensornet"},
     .dependencies = {"cutensor", "cublas", "cusolver"}},
    {.name = "custabilizer", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuQuantum stabilizer (Clifford) simulation",
     .file_names = {"libcustabilizer.so.0"}, .wheel_dirs = cuquantum_lib,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"custabilizer-cu13", "custabilizer-cu12"}, .conda_packages = {"custabilizer"}},
    {.name = "custatevec", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuQuantum state-vector simulation; used by Qiskit Aer and CUDA-Q",
     .file_names = {"libcustatevec.so.1"}, .wheel_dirs = cuquantum_lib,
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"custatevec-cu13", "custatevec-cu12"}, .conda_packages = {"custatevec"},
     .dependencies = {"cublas", "cublasLt"}},
    {.name = "nccl", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "collective communication across GPUs; used by PyTorch distributed, JAX",
     .file_names = {"libnccl.so.2"},
     .wheel_dirs = {"nvidia/nccl/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .product_root_vars = {"NCCL_HOME"}, .product_root_dirs = {"lib", "lib64", "build/lib"},
     .wheel_distributions = {"nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"},
     .conda_packages = {"nccl"}},
    {.name = "nvpl_fftw", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "NVIDIA Performance Libraries FFTW interface (Arm CPUs such as Grace)",
     .file_names = {"libnvpl_fftw.so.0"}, .wheel_dirs = {"nvpl/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvpl-fft"}, .conda_packages = {"nvpl-fft"}},
    {.name = "nvshmem_host", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "NVSHMEM host library (partitioned global address space across GPUs); required by PyTorch wheels",
     .file_names = {"libnvshmem_host.so.3"}, .wheel_dirs = {"nvidia/nvshmem/lib"},
     .toolkit_dirs = lib_dirs, .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12"}, .conda_packages = {"libnvshmem"}},

    // ---- NVTX's library: CUDA 11's toolkit and torch 1.x wheels (vendored) carry it; CUDA 12 made
    // NVTX header-only. CUDA Python does not know it.
    {.name = "nvToolsExt", .kind = K::dynamic_lib, .packaging = P::toolkit,
     .description = "NVTX markers and ranges for profilers (libnvToolsExt); loaded by torch 1.x and CUDA 11 programs",
     .file_names = {"libnvToolsExt.so.1"}, .cuda_python = false, .wheel_dirs = {"nvidia/nvtx/lib"},
     .toolkit_dirs = lib_dirs,
     .wheel_distributions = {"nvidia-nvtx-cu12", "nvidia-nvtx-cu11"}, .conda_packages = {"cuda-nvtx"},
     .toolkit_json_keys = {"cuda_nvtx"}},

    // ---- Libraries CUDA Python does not know (cuda_python = false): cuDNN's sub-libraries, which
    // libcudnn.so.9 (and cuDNN 8's libcudnn.so.8) open by name from their own directory. Only the
    // loader and the frameworks answer for them.
    {.name = "cudnn_graph", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 graph API; libcudnn.so.9 opens it first",
     .file_names = {"libcudnn_graph.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_engines_precompiled", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 precompiled engines (the kernels); opened by libcudnn.so.9",
     .file_names = {"libcudnn_engines_precompiled.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_engines_runtime_compiled", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 runtime-compiled engines (through NVRTC); opened by libcudnn.so.9",
     .file_names = {"libcudnn_engines_runtime_compiled.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_engines_tensor_ir", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 tensor-IR engines (9.x releases that ship it); opened by libcudnn.so.9",
     .file_names = {"libcudnn_engines_tensor_ir.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_heuristic", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 engine heuristics; opened by libcudnn.so.9",
     .file_names = {"libcudnn_heuristic.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_ops", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 legacy ops API (cudnnOps*); opened by libcudnn.so.9",
     .file_names = {"libcudnn_ops.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_cnn", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 legacy convolution API; opened by libcudnn.so.9",
     .file_names = {"libcudnn_cnn.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_adv", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 9 legacy RNN and attention API; opened by libcudnn.so.9",
     .file_names = {"libcudnn_adv.so.9"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_ops_infer", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 inference ops; opened by libcudnn.so.8 (TensorFlow 2.12-2.14, torch 1.13)",
     .file_names = {"libcudnn_ops_infer.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_ops_train", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 training ops; opened by libcudnn.so.8",
     .file_names = {"libcudnn_ops_train.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_cnn_infer", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 convolution inference; opened by libcudnn.so.8",
     .file_names = {"libcudnn_cnn_infer.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_cnn_train", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 convolution training; opened by libcudnn.so.8",
     .file_names = {"libcudnn_cnn_train.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_adv_infer", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 RNN and attention inference; opened by libcudnn.so.8",
     .file_names = {"libcudnn_adv_infer.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},
    {.name = "cudnn_adv_train", .kind = K::dynamic_lib, .packaging = P::other,
     .description = "cuDNN 8 RNN and attention training; opened by libcudnn.so.8",
     .file_names = {"libcudnn_adv_train.so.8"}, .cuda_python = false, .wheel_dirs = {"nvidia/cudnn/lib"},
     .toolkit_dirs = lib_dirs, .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"lib", "lib64"},
     .wheel_distributions = cudnn_dists, .conda_packages = {"cudnn"}, .release_group = "cudnn"},

    // ---- Header sets: the answer is the directory that holds the anchor file. Toolkit sets are
    // found through the toolkit's roots and cudart's (the canary); the others through their wheels,
    // product roots, CUDA_PATH and system include directories.
    {.name = "cccl", .kind = K::headers, .packaging = P::toolkit,
     .description = "CUDA C++ Core Libraries (libcu++, CUB, Thrust); NVRTC and host compilers need -I to it",
     .file_names = {"cuda/std/version"},
     .wheel_dirs = {"nvidia/cu13/include/cccl", "nvidia/cuda_cccl/include"},
     .toolkit_dirs = {"include/cccl", "include", "targets/{triple}/include/cccl", "targets/{triple}/include"},
     .pathfinder_toolkit_dirs = 2,
     .wheel_distributions = {"nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"},
     .conda_packages = {"cuda-cccl", "cuda-cccl_linux-64"}, .toolkit_json_keys = {"cuda_cccl"},
     .uses_ctk_root_canary = true, .importance = core},
    {.name = "cublas", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuBLAS headers (cublas.h, cublas_v2.h)",
     .file_names = {"cublas.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cublas/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cublas", "nvidia-cublas-cu12", "nvidia-cublas-cu11"},
     .conda_packages = {"libcublas-dev", "libcublas"}, .toolkit_json_keys = {"libcublas"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"cublas_api.h", "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH"}},
    {.name = "cudart", .kind = K::headers, .packaging = P::toolkit,
     .description = "CUDA runtime headers (cuda_runtime.h); needed to compile CUDA C++ with NVRTC or a host compiler",
     .file_names = {"cuda_runtime.h"},
     .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_runtime/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"},
     .conda_packages = {"cuda-cudart-dev", "cuda-cudart"}, .toolkit_json_keys = {"cuda_cudart"},
     .uses_ctk_root_canary = true},
    {.name = "cufft", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuFFT headers (cufft.h)",
     .file_names = {"cufft.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cufft/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cufft", "nvidia-cufft-cu12", "nvidia-cufft-cu11"},
     .conda_packages = {"libcufft-dev", "libcufft"}, .toolkit_json_keys = {"libcufft"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"cufft.h", "CUFFT_VER_MAJOR", "CUFFT_VER_MINOR", "CUFFT_VER_PATCH"}},
    {.name = "cufile", .kind = K::headers, .packaging = P::toolkit,
     .description = "GPUDirect Storage header (cufile.h)",
     .file_names = {"cufile.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cufile/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cufile", "nvidia-cufile-cu12"},
     .conda_packages = {"libcufile-dev", "libcufile"}, .toolkit_json_keys = {"libcufile"},
     .uses_ctk_root_canary = true},
    {.name = "curand", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuRAND headers (curand.h, curand_kernel.h)",
     .file_names = {"curand.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/curand/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-curand", "nvidia-curand-cu12", "nvidia-curand-cu11"},
     .conda_packages = {"libcurand-dev", "libcurand"}, .toolkit_json_keys = {"libcurand"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"curand.h", "CURAND_VER_MAJOR", "CURAND_VER_MINOR", "CURAND_VER_PATCH"}},
    {.name = "cusolver", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuSOLVER headers (cusolverDn.h)",
     .file_names = {"cusolverDn.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cusolver/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cusolver", "nvidia-cusolver-cu12", "nvidia-cusolver-cu11"},
     .conda_packages = {"libcusolver-dev", "libcusolver"}, .toolkit_json_keys = {"libcusolver"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"cusolver_common.h", "CUSOLVER_VER_MAJOR", "CUSOLVER_VER_MINOR", "CUSOLVER_VER_PATCH"}},
    {.name = "cusparse", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuSPARSE header (cusparse.h)",
     .file_names = {"cusparse.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cusparse/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cusparse", "nvidia-cusparse-cu12", "nvidia-cusparse-cu11"},
     .conda_packages = {"libcusparse-dev", "libcusparse"}, .toolkit_json_keys = {"libcusparse"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"cusparse.h", "CUSPARSE_VER_MAJOR", "CUSPARSE_VER_MINOR", "CUSPARSE_VER_PATCH"}},
    {.name = "npp", .kind = K::headers, .packaging = P::toolkit,
     .description = "NPP headers (npp.h)",
     .file_names = {"npp.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/npp/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = npp_dists, .conda_packages = {"libnpp-dev", "libnpp"}, .toolkit_json_keys = {"libnpp"},
     .uses_ctk_root_canary = true},
    {.name = "profiler", .kind = K::headers, .packaging = P::toolkit,
     .description = "profiler control API header (cuda_profiler_api.h)",
     .file_names = {"cuda_profiler_api.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_profiler_api/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-profiler-api", "nvidia-cuda-profiler-api-cu12"},
     .conda_packages = {"cuda-profiler-api"}, .toolkit_json_keys = {"cuda_profiler_api"},
     .uses_ctk_root_canary = true},
    {.name = "nvcc", .kind = K::headers, .packaging = P::toolkit,
     .description = "nvcc's headers (fatbinary_section.h, crt/); needed to build against nvcc's output formats",
     .file_names = {"fatbinary_section.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_nvcc/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc-dev_linux-64", "cuda-nvcc"},
     .toolkit_json_keys = {"cuda_nvcc"}, .uses_ctk_root_canary = true},
    {.name = "nvfatbin", .kind = K::headers, .packaging = P::toolkit,
     .description = "nvFatbin header (nvFatbin.h)",
     .file_names = {"nvFatbin.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/nvfatbin/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvfatbin", "nvidia-nvfatbin-cu12"},
     .conda_packages = {"libnvfatbin-dev", "libnvfatbin"}, .toolkit_json_keys = {"libnvfatbin"},
     .uses_ctk_root_canary = true},
    {.name = "nvjitlink", .kind = K::headers, .packaging = P::toolkit,
     .description = "nvJitLink header (nvJitLink.h)",
     .file_names = {"nvJitLink.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/nvjitlink/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvjitlink", "nvidia-nvjitlink-cu12"},
     .conda_packages = {"libnvjitlink-dev", "libnvjitlink"}, .toolkit_json_keys = {"libnvjitlink"},
     .uses_ctk_root_canary = true},
    {.name = "nvjpeg", .kind = K::headers, .packaging = P::toolkit,
     .description = "nvJPEG header (nvjpeg.h)",
     .file_names = {"nvjpeg.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/nvjpeg/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvjpeg", "nvidia-nvjpeg-cu12", "nvidia-nvjpeg-cu11"},
     .conda_packages = {"libnvjpeg-dev", "libnvjpeg"}, .toolkit_json_keys = {"libnvjpeg"},
     .uses_ctk_root_canary = true,
     .version_macros = VersionMacros{"nvjpeg.h", "NVJPEG_VER_MAJOR", "NVJPEG_VER_MINOR", "NVJPEG_VER_PATCH"}},
    {.name = "nvrtc", .kind = K::headers, .packaging = P::toolkit,
     .description = "NVRTC header (nvrtc.h); needed to build programs that call NVRTC",
     .file_names = {"nvrtc.h"},
     .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_nvrtc/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"},
     .conda_packages = {"cuda-nvrtc-dev", "cuda-nvrtc"}, .toolkit_json_keys = {"cuda_nvrtc"},
     .uses_ctk_root_canary = true},
    {.name = "nvvm", .kind = K::headers, .packaging = P::toolkit,
     .description = "libNVVM header (nvvm.h); under nvvm/include in a toolkit",
     .file_names = {"nvvm.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cuda_nvcc/nvvm/include"},
     .toolkit_dirs = {"nvvm/include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvvm", "nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"libnvvm-dev", "cuda-nvvm"}, .toolkit_json_keys = {"cuda_nvvm", "cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "cudla", .kind = K::headers, .packaging = P::toolkit,
     .description = "cuDLA header (cudla.h)",
     .file_names = {"cudla.h"}, .wheel_dirs = {"nvidia/cu13/include"},
     .toolkit_dirs = include_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cudla"}, .uses_ctk_root_canary = true},
    {.name = "cudnn", .kind = K::headers, .packaging = P::other,
     .description = "cuDNN headers (cudnn.h, cudnn_version.h)",
     .file_names = {"cudnn.h"}, .wheel_dirs = {"nvidia/cudnn/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .product_root_vars = {"CUDNN_PATH"}, .product_root_dirs = {"include"},
     .wheel_distributions = {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12"}, .conda_packages = {"cudnn"},
     .conda_targets_layout = false,
     .system_include_dirs = {"/usr/include/{multiarch}", "/usr/include", "/usr/local/include"},
     .version_macros = VersionMacros{"cudnn_version.h", "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"}},
    {.name = "cusolverMp", .kind = K::headers, .packaging = P::other,
     .description = "cuSOLVERMp header (cusolverMp.h)",
     .file_names = {"cusolverMp.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cu12/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cusolvermp-cu13", "nvidia-cusolvermp-cu12"}, .conda_packages = {"libcusolvermp"},
     .conda_targets_layout = false},
    {.name = "cusparseLt", .kind = K::headers, .packaging = P::other,
     .description = "cuSPARSELt header (cusparseLt.h)",
     .file_names = {"cusparseLt.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cusparselt/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cusparselt-cu13", "nvidia-cusparselt-cu12"}, .conda_packages = {"libcusparselt"},
     .conda_targets_layout = false},
    {.name = "cute", .kind = K::headers, .packaging = P::other,
     .description = "CuTe tensor layouts (cute/tensor.hpp) from the CUTLASS wheel; used by CUTLASS kernels and JIT",
     .file_names = {"cute/tensor.hpp"}, .wheel_dirs = cutlass_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cutlass"}, .conda_targets_layout = false,
     .version_macros = VersionMacros{"cutlass/version.h", "CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH"}},
    {.name = "cutensor", .kind = K::headers, .packaging = P::other,
     .description = "cuTENSOR header (cutensor.h)",
     .file_names = {"cutensor.h"}, .wheel_dirs = {"cutensor/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = cutensor_dists, .conda_packages = {"cutensor", "libcutensor"},
     .conda_targets_layout = false,
     .version_macros = VersionMacros{"cutensor.h", "CUTENSOR_MAJOR", "CUTENSOR_MINOR", "CUTENSOR_PATCH"}},
    {.name = "cudensitymat", .kind = K::headers, .packaging = P::other,
     .description = "cuDensityMat header (cudensitymat.h)",
     .file_names = {"cudensitymat.h"}, .wheel_dirs = cuquantum_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"cudensitymat-cu13", "cudensitymat-cu12"}, .conda_packages = {"cudensitymat"},
     .conda_targets_layout = false},
    {.name = "cupauliprop", .kind = K::headers, .packaging = P::other,
     .description = "cuPauliProp header (cupauliprop.h)",
     .file_names = {"cupauliprop.h"}, .wheel_dirs = cuquantum_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"cupauliprop-cu13", "cupauliprop-cu12"}, .conda_packages = {"cupauliprop"},
     .conda_targets_layout = false},
    {.name = "cutensornet", .kind = K::headers, .packaging = P::other,
     .description = "cuTensorNet header (cutensornet.h)",
     .file_names = {"cutensornet.h"}, .wheel_dirs = cuquantum_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"cutensornet-cu13", "cutensornet-cu12"}, .conda_packages = {"cutensornet"},
     .conda_targets_layout = false},
    {.name = "custabilizer", .kind = K::headers, .packaging = P::other,
     .description = "cuStabilizer header (custabilizer.h)",
     .file_names = {"custabilizer.h"}, .wheel_dirs = cuquantum_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"custabilizer-cu13", "custabilizer-cu12"}, .conda_packages = {"custabilizer"},
     .conda_targets_layout = false},
    {.name = "custatevec", .kind = K::headers, .packaging = P::other,
     .description = "cuStateVec header (custatevec.h)",
     .file_names = {"custatevec.h"}, .wheel_dirs = cuquantum_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"custatevec-cu13", "custatevec-cu12"}, .conda_packages = {"custatevec"},
     .conda_targets_layout = false},
    {.name = "cutlass", .kind = K::headers, .packaging = P::other,
     .description = "CUTLASS headers (cutlass/cutlass.h) from the CUTLASS wheel",
     .file_names = {"cutlass/cutlass.h"}, .wheel_dirs = cutlass_include,
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cutlass"}, .conda_targets_layout = false,
     .version_macros = VersionMacros{"cutlass/version.h", "CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH"}},
    {.name = "mathdx", .kind = K::headers, .packaging = P::other,
     .description = "MathDx runtime header (libmathdx.h)",
     .file_names = {"libmathdx.h"}, .wheel_dirs = {"nvidia/cu13/include", "nvidia/cu12/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-libmathdx-cu13", "nvidia-libmathdx-cu12"}, .conda_packages = {"libmathdx"},
     .conda_targets_layout = false},
    {.name = "nccl", .kind = K::headers, .packaging = P::other,
     .description = "NCCL header (nccl.h)",
     .file_names = {"nccl.h"}, .wheel_dirs = {"nvidia/nccl/include"},
     .toolkit_dirs = {"include", "build/include"}, .pathfinder_toolkit_dirs = 2,
     .product_root_vars = {"NCCL_HOME"}, .product_root_dirs = {"include", "build/include"},
     .wheel_distributions = {"nvidia-nccl-cu13", "nvidia-nccl-cu12"}, .conda_packages = {"nccl"},
     .conda_targets_layout = false, .system_include_dirs = system_includes,
     .version_macros = VersionMacros{"nccl.h", "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"}},
    {.name = "nvshmem", .kind = K::headers, .packaging = P::other,
     .description = "NVSHMEM headers (nvshmem.h); distributions install them in /usr/include/nvshmem_<major>",
     .file_names = {"nvshmem.h"}, .wheel_dirs = {"nvidia/nvshmem/include"},
     .toolkit_dirs = {"include"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12"}, .conda_packages = {"libnvshmem"},
     .conda_targets_layout = false, .system_include_dirs = {"/usr/include/nvshmem_*"}},

    // ---- Binaries: the answer is the executable; the loader column is what a shell runs (PATH).
    {.name = "nvcc", .kind = K::binary, .packaging = P::toolkit,
     .description = "CUDA compiler driver",
     .file_names = {"nvcc"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "ptxas", .kind = K::binary, .packaging = P::toolkit,
     .description = "PTX assembler used by nvcc",
     .file_names = {"ptxas"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "nvdisasm", .kind = K::binary, .packaging = P::toolkit,
     .description = "cubin disassembler",
     .file_names = {"nvdisasm"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-nvdisasm", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"cuda-nvdisasm"}, .toolkit_json_keys = {"cuda_nvdisasm"}, .uses_ctk_root_canary = true},
    {.name = "cuobjdump", .kind = K::binary, .packaging = P::toolkit,
     .description = "dumps the device code of executables, libraries and fatbinaries",
     .file_names = {"cuobjdump"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-cuda-cuobjdump", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"cuda-cuobjdump"}, .toolkit_json_keys = {"cuda_cuobjdump"}, .uses_ctk_root_canary = true},
    {.name = "nvprune", .kind = K::binary, .packaging = P::toolkit,
     .description = "prunes device code of other architectures from objects and libraries",
     .file_names = {"nvprune"}, .wheel_dirs = {"nvidia/cuda_nvcc/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .wheel_distributions = {"nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"cuda-nvprune"}, .toolkit_json_keys = {"cuda_nvprune"}, .uses_ctk_root_canary = true},
    {.name = "fatbinary", .kind = K::binary, .packaging = P::toolkit,
     .description = "bundles cubins and PTX into fatbinaries (run by nvcc)",
     .file_names = {"fatbinary"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "bin2c", .kind = K::binary, .packaging = P::toolkit,
     .description = "turns a file into a C array (run by nvcc)",
     .file_names = {"bin2c"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "nvlink", .kind = K::binary, .packaging = P::toolkit,
     .description = "device linker (run by nvcc -rdc)",
     .file_names = {"nvlink"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = nvcc_dists, .conda_packages = {"cuda-nvcc"}, .toolkit_json_keys = {"cuda_nvcc"},
     .uses_ctk_root_canary = true},
    {.name = "cuda-gdb", .kind = K::binary, .packaging = P::toolkit,
     .description = "CUDA debugger",
     .file_names = {"cuda-gdb"}, .wheel_dirs = {"nvidia/cuda_nvcc/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"cuda-gdb"}, .toolkit_json_keys = {"cuda_gdb"},
     .uses_ctk_root_canary = true},
    {.name = "cuda-gdbserver", .kind = K::binary, .packaging = P::toolkit,
     .description = "remote target for cuda-gdb",
     .file_names = {"cuda-gdbserver"}, .wheel_dirs = {"nvidia/cuda_nvcc/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"cuda-gdb"}, .toolkit_json_keys = {"cuda_gdb"},
     .uses_ctk_root_canary = true},
    {.name = "compute-sanitizer", .kind = K::binary, .packaging = P::toolkit,
     .description = "memory, race and synchronisation checker for CUDA programs",
     .file_names = {"compute-sanitizer"}, .wheel_dirs = nvcc_bins, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .wheel_distributions = {"nvidia-cuda-sanitizer-api", "nvidia-cuda-sanitizer-api-cu12"},
     .conda_packages = {"cuda-sanitizer-api"}, .toolkit_json_keys = {"cuda_sanitizer_api"},
     .uses_ctk_root_canary = true},
    {.name = "nvprof", .kind = K::binary, .packaging = P::toolkit,
     .description = "legacy profiler (CUDA 12 and older, pre-Volta GPUs)",
     .file_names = {"nvprof"}, .wheel_dirs = {"nvidia/cuda_nvcc/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"cuda-nvprof"}, .toolkit_json_keys = {"cuda_nvprof"},
     .uses_ctk_root_canary = true},
    {.name = "nsys", .kind = K::binary, .packaging = P::toolkit,
     .description = "Nsight Systems command line (system-wide timeline profiler)",
     .file_names = {"nsys"}, .wheel_dirs = {"nvidia/nsight_systems/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"nsight-systems"}, .toolkit_json_keys = {"nsight_systems"},
     .uses_ctk_root_canary = true},
    {.name = "nsight-sys", .kind = K::binary, .packaging = P::toolkit,
     .description = "Nsight Systems graphical interface",
     .file_names = {"nsight-sys"}, .wheel_dirs = {"nvidia/nsight_systems/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"nsight-systems"}, .toolkit_json_keys = {"nsight_systems"},
     .uses_ctk_root_canary = true},
    {.name = "ncu", .kind = K::binary, .packaging = P::toolkit,
     .description = "Nsight Compute command line (kernel profiler)",
     .file_names = {"ncu"}, .wheel_dirs = {"nvidia/nsight_compute/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"nsight-compute"}, .toolkit_json_keys = {"nsight_compute"},
     .uses_ctk_root_canary = true},
    {.name = "nsight-compute", .kind = K::binary, .packaging = P::toolkit,
     .description = "Nsight Compute graphical interface",
     .file_names = {"nsight-compute"}, .wheel_dirs = {"nvidia/nsight_compute/bin"}, .toolkit_dirs = bin_dirs,
     .pathfinder_toolkit_dirs = 1, .conda_packages = {"nsight-compute"}, .toolkit_json_keys = {"nsight_compute"},
     .uses_ctk_root_canary = true},

    // ---- Static and bitcode libraries: files that NVRTC/nvJitLink users link; never loaded.
    {.name = "cudadevrt", .kind = K::static_lib, .packaging = P::toolkit,
     .description = "device runtime (libcudadevrt.a); linked by nvcc -rdc, nvJitLink and Numba-CUDA for dynamic parallelism",
     .file_names = {"libcudadevrt.a"},
     .wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
     .toolkit_dirs = {"lib64", "lib", "targets/{triple}/lib"}, .pathfinder_toolkit_dirs = 2,
     .conda_dirs = {"lib"},
     .wheel_distributions = {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"},
     .conda_packages = {"cuda-cudart-static", "cuda-cudart-dev"}, .toolkit_json_keys = {"cuda_cudart"}},
    {.name = "device", .kind = K::bitcode_lib, .packaging = P::toolkit,
     .description = "libdevice (libdevice.10.bc): the math library NVVM links; needed by Numba-CUDA and NVVM front ends",
     .file_names = {"libdevice.10.bc"},
     .wheel_dirs = {"nvidia/cu13/nvvm/libdevice", "nvidia/cuda_nvcc/nvvm/libdevice"},
     .toolkit_dirs = {"nvvm/libdevice"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvvm", "nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"},
     .conda_packages = {"libnvvm", "cuda-nvvm"}, .toolkit_json_keys = {"cuda_nvvm", "cuda_nvcc"}},
    {.name = "nccl_device", .kind = K::bitcode_lib, .packaging = P::other,
     .description = "NCCL device API bitcode (libnccl_device.bc), linked into kernels that call NCCL from the GPU",
     .file_names = {"libnccl_device.bc"}, .wheel_dirs = {"nvidia/nccl/lib"},
     .toolkit_dirs = {"lib"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nccl-cu13", "nvidia-nccl-cu12"}, .conda_packages = {"nccl"}},
    {.name = "nvshmem_device", .kind = K::bitcode_lib, .packaging = P::other,
     .description = "NVSHMEM device library bitcode (libnvshmem_device.bc), linked into kernels that call NVSHMEM",
     .file_names = {"libnvshmem_device.bc"}, .wheel_dirs = {"nvidia/nvshmem/lib"},
     .toolkit_dirs = {"lib"}, .pathfinder_toolkit_dirs = 1,
     .wheel_distributions = {"nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12"}, .conda_packages = {"libnvshmem"}},
  };
  // clang-format on
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Levenshtein distance, ignoring case.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

const std::vector<ComponentSpec>& catalog() {
  static const std::vector<ComponentSpec> table = [] {
    auto rows = build_catalog();
    for (auto& row : rows) {
      row.file_names.insert(row.file_names.end(), row.older_sonames.begin(), row.older_sonames.end());
    }
    return rows;
  }();
  return table;
}

bool cuda_python_declares(const ComponentSpec& spec, std::string_view file_name) {
  const auto listed = [file_name](const std::vector<std::string_view>& names) {
    return std::find(names.begin(), names.end(), file_name) != names.end();
  };
  return spec.cuda_python && listed(spec.file_names) && !listed(spec.older_sonames);
}

const ComponentSpec* find_component(std::string_view name, std::optional<ComponentKind> kind) {
  if (kind) {
    for (const auto& spec : catalog()) {
      if (spec.name == name && spec.kind == *kind) {
        return &spec;
      }
    }
    return nullptr;
  }
  for (const auto preferred : {K::dynamic_lib, K::binary, K::headers, K::static_lib, K::bitcode_lib}) {
    if (const auto* spec = find_component(name, preferred)) {
      return spec;
    }
  }
  return nullptr;
}

std::vector<const ComponentSpec*> components_named(std::string_view text) {
  std::optional<ComponentKind> kind;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    kind = kind_from_string(text.substr(0, slash));
    if (!kind) {
      return {};
    }
    text = text.substr(slash + 1);
  }
  std::vector<const ComponentSpec*> out;
  for (const auto& spec : catalog()) {
    if (spec.name == text && (!kind || spec.kind == *kind)) {
      out.push_back(&spec);
    }
  }
  return out;
}

std::optional<std::string_view> closest_name(std::string_view name) {
  if (const auto slash = name.find('/'); slash != std::string_view::npos) {
    name = name.substr(slash + 1);
  }
  if (name.empty() || name.size() > 64) {
    return std::nullopt;
  }
  std::optional<std::string_view> best;
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const auto& spec : catalog()) {
    const auto distance = edit_distance(name, spec.name);
    if (distance < best_distance) {
      best = spec.name;
      best_distance = distance;
    }
  }
  return best;
}

} // namespace cudadiag::probes
