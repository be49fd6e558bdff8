#include "findings/findings.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "findings/framework_needs.hpp"
#include "findings/install_rules.hpp"
#include "python/conda.hpp"
#include "versions/version_sources.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace cudadiag::findings {

std::string_view to_string(Severity severity) {
  switch (severity) {
  case Severity::info: return "info";
  case Severity::warning: return "warning";
  case Severity::error: return "error";
  }
  return "error";
}

std::optional<Severity> parse_severity(std::string_view text) {
  for (const auto severity : {Severity::info, Severity::warning, Severity::error}) {
    if (to_string(severity) == text) {
      return severity;
    }
  }
  return std::nullopt;
}

const std::vector<FindingDefinition>& finding_definitions() {
  // clang-format off
  static const std::vector<FindingDefinition> table = {
    {"driver.missing", Severity::error, Repair::reinstall_package,
     "No libcuda.so.1 is reachable by the system loader, so no CUDA program can run.",
     "Install the NVIDIA driver (or, in a container, run with the NVIDIA container runtime so the driver is mounted)."},
    {"driver.stub", Severity::error, Repair::fix_environment,
     "The libcuda.so.1 the loader would load is the CUDA Toolkit's link-time stub; every CUDA call fails with CUDA_ERROR_STUB_LIBRARY (34).",
     "Remove the toolkit's stubs/ directory from LD_LIBRARY_PATH (it is only for linking) and make sure the real driver library is installed."},
    {"lib.python_native_differ", Severity::warning, Repair::fix_environment,
     "CUDA Python (cuda-pathfinder) and a native program would load different files for the same component (info when both are the same version or the same CUDA major: minor-version compatibility).",
     "Put the directory of CUDA Python's copy first on LD_LIBRARY_PATH, or uninstall a wheel of another major from the environment."},
    {"lib.release_mismatch", Severity::warning, Repair::fix_environment,
     "One load binds two libraries that must come from one release (cuBLAS and cuBLASLt, cuFFT and cuFFTW, NPP's libraries, cuSOLVER and cuSOLVERMg, cuDNN and its sub-libraries, cuTENSOR's) from different releases.",
     "Install both from one release (one wheel, one toolkit), or stop the search route that reaches the odd one out."},
    {"lib.multiple_versions", Severity::warning, Repair::fix_environment,
     "Different versions of one component are reachable; which one a program gets depends on how it searches (info when one major and no build root newer than what runs).",
     "Stop the routes that reach another version than CUDA Python's: remove their LD_LIBRARY_PATH entry, unset CUDA_PATH/CUDA_HOME."},
    {"lib.unusable_candidate", Severity::error, Repair::reinstall_package,
     "cuda-pathfinder would reach a file that cannot be loaded before any usable copy, and fail.",
     "Delete or repair the broken file, or remove its directory from the environment that points at it."},
    {"lib.loader_blocked", Severity::error, Repair::reinstall_package,
     "dlopen(SONAME) in a native program stops at a file that is not a loadable library (empty, truncated or not ELF) before reaching any usable copy.",
     "Delete or repair the file, or remove its directory from LD_LIBRARY_PATH / ld.so.conf and re-run ldconfig."},
    {"lib.wrong_arch", Severity::warning, Repair::reinstall_package,
     "A file with a component's name is built for another architecture or ELF class; loaders skip it.",
     "Remove it, or install the package built for this machine's architecture."},
    {"lib.preloaded", Severity::warning, Repair::fix_environment,
     "LD_PRELOAD or /etc/ld.so.preload loads a CUDA library into every process: it answers every load of its SONAME, CUDA Python's included, whatever the search paths hold.",
     "Remove the entry from LD_PRELOAD (or the line from /etc/ld.so.preload) unless every CUDA program on this machine is meant to use that copy."},
    {"env.root_release_differs", Severity::warning, Repair::fix_environment,
     "A variable names a library root (NCCL_HOME, CUDNN_PATH, CUDA_PATH, CUDA_HOME, TRITON_LIBCUDA_PATH) that holds another release of a library than the one the loader binds for its SONAME: a warning when the root's is newer (a program built against the root gets the older copy at run time and fails on what the newer release added), info when it is older or the same release.",
     "Run what was built against the root with the root's copy (its library directory first on LD_LIBRARY_PATH, or an rpath), or bring the copy the loader binds up to the root's release; an older root needs nothing."},
    {"python.file_overwritten", Severity::warning, Repair::reinstall_package,
     "Two installed Python distributions claim one library file in their RECORDs (nvidia-nccl-cu11 and nvidia-nccl-cu12 both install nvidia/nccl/lib/libnccl.so.2): the file on disk is at most one's, the other's dist-info and the version read from it are not the file's, and uninstalling either removes the file the other still lists. An error when a framework here pins the distribution whose file was overwritten.",
     "Uninstall the distribution you do not need first, then `python -m pip install --force-reinstall` the one you keep (the finding names both and gives the environment's own commands)."},
    {"python.record_mismatch", Severity::warning, Repair::reinstall_package,
     "A library file of a CUDA distribution (nvidia-*, cuda-*, a framework) differs from its dist-info RECORD: another size (always checked) or SHA-256 (with --verify-record-hashes) means another file was put there, so the version read from the dist-info is not the file's; a missing file (error) breaks whatever loads it.",
     "Reinstall the distribution in its environment (`python -m pip install --force-reinstall NAME==VERSION`, given in the finding)."},
    {"lib.not_on_search_path", Severity::info, Repair::none,
     "A component exists on disk but neither CUDA Python nor the native loader would find it.",
     "If you need it: put a library's directory first on LD_LIBRARY_PATH (a binary's on PATH), or set CUDA_PATH to its toolkit root where cuda-pathfinder looks; for headers, pass -I DIR to the compiler."},
    {"env.cuda_path_home_differ", Severity::warning, Repair::fix_environment,
     "CUDA_PATH and CUDA_HOME are both set and name different directories; CUDA_PATH wins in cuda-pathfinder >= 1.5, other tools use CUDA_HOME.",
     "Set both to the same toolkit root, or unset one."},
    {"env.behaviour_variable", Severity::warning, Repair::fix_environment,
     "A CUDA environment variable that injects code into every CUDA process (CUDA_INJECTION64_PATH) or is a debugging aid that changes behaviour or cost (CUDA_LAUNCH_BLOCKING, CUDA_ENABLE_COREDUMP_ON_EXCEPTION, CUDA_FORCE_PTX_JIT, NCCL_DEBUG, ...) is set: a warning in the ci and fleet contexts, info at a terminal.",
     "Unset the variable unless the run is meant to have it (it comes from a shell profile, job script, container image or the node's environment)."},
    {"env.bad_search_path", Severity::warning, Repair::fix_environment,
     "A search-path variable has an entry that is empty, relative or not a directory.",
     "Remove the entry: empty and relative LD_LIBRARY_PATH entries make the loader search the current directory."},
    {"driver.init_failed", Severity::error, Repair::reinstall_package,
     "cuInit failed: the driver is installed but CUDA cannot start (the message decodes the CUresult).",
     "See the remedy for the error code in docs/findings.md: 35 driver older than the runtime, 100 no device visible, 803 user-mode and kernel driver versions differ, 804 forward-compatibility copy on unsupported hardware, 999 unknown (often a driver/GPU fault: check dmesg)."},
    {"driver.too_old", Severity::error, Repair::reinstall_package,
     "The driver is older than the CUDA major of the runtime or NVRTC that will be loaded (CUDA 13 needs driver >= 580, CUDA 12 needs >= 525).",
     "Upgrade the NVIDIA driver, or install the CUDA 12 builds of the libraries (pip install the -cu12 wheels)."},
    {"container.requirement_unmet", Severity::error, Repair::reinstall_package,
     "The image's NVIDIA_REQUIRE_* (or a legacy image's CUDA_VERSION) is not met by the target host's driver: the NVIDIA Container Toolkit's legacy hook (docker run --gpus) refuses to create the container (\"requirement error: unsatisfied condition\"); its CDI modes start it and CUDA fails inside.",
     "Upgrade the host's driver to one whose CUDA version meets the requirement, or use an image built for an older CUDA; NVIDIA_DISABLE_REQUIRE=1 only moves the failure into the container unless a forward-compatibility libcuda supports the host."},
    {"container.capability_missing", Severity::warning, Repair::fix_environment,
     "The image's NVIDIA_DRIVER_CAPABILITIES leaves out utility (no nvidia-smi, no NVML) or compute (no libcuda): the legacy hook injects only the driver files of the capabilities it names.",
     "Set NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all) in the image or with docker run -e."},
    {"driver.forward_compat", Severity::info, Repair::none,
     "The loaded libcuda is a forward-compatibility copy (a compat/ directory): it only works on data-center GPUs with a supported kernel driver.",
     "Keep it only on supported data-center GPUs; elsewhere remove the compat directory from LD_LIBRARY_PATH (cuInit fails with 804)."},
    {"nvrtc.ptx_newer_than_driver", Severity::error, Repair::reinstall_package,
     "NVRTC emits a PTX ISA newer than the driver can JIT; loading its PTX fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222).",
     "Upgrade the driver, use an NVRTC no newer than the driver's CUDA version, or compile to a cubin (SASS) for the exact GPU architecture (-arch=sm_XX)."},
    {"nvjitlink.version_mismatch", Severity::error, Repair::reinstall_package,
     "nvJitLink is another major than NVRTC, or older than it; LTO-IR from NVRTC cannot be linked (e.g. 'undefined symbol __nvJitLinkComplete_12_4').",
     "Install nvJitLink of NVRTC's major, not older, where NVRTC comes from (in a venv: its own `python -m pip install \"nvidia-nvjitlink>=X.Y\"`), and make sure no older copy shadows it on LD_LIBRARY_PATH; never change the host's loader configuration for one environment's problem."},
    {"nvrtc.builtins_missing", Severity::error, Repair::reinstall_package,
     "libnvrtc-builtins.so.X.Y matching the loaded NVRTC cannot be loaded from its directory; every NVRTC compilation fails.",
     "Reinstall the NVRTC package (wheel or toolkit) so that libnvrtc-builtins.so.X.Y sits next to libnvrtc.so."},
    {"nvrtc.builtins_not_on_search_path", Severity::warning, Repair::fix_environment,
     "The builtins library beside the loaded NVRTC loads by its path, but NVRTC opens it by name and the system loader's search (LD_LIBRARY_PATH, ld.so.cache, the default directories) does not reach that directory: a program that loads NVRTC by its path alone fails every compilation with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE. A warning where CUDA Python preloads that file (cuda-pathfinder 1.9 and later, from NVRTC's real file name libnvrtc.so.MAJOR.MINOR.PATCH) and works; an error where it does not.",
     "Tell the loader about NVRTC's directory (a file in /etc/ld.so.conf.d/ naming it, then ldconfig; or LD_LIBRARY_PATH), or have the program dlopen the builtins file by its path before its first compilation."},
    {"nvrtc.compile_failed", Severity::error, Repair::reinstall_package,
     "NVRTC failed to compile an empty kernel (no options, no headers) for a reason its builtins do not explain: it cannot compile anything as installed.",
     "Read the NVRTC result and log in the message; reinstall the NVRTC package (wheel or toolkit) that this libnvrtc belongs to, and make sure nothing in the process's environment (LD_PRELOAD, a memory limit) interferes."},
    {"cccl.version_mismatch", Severity::warning, Repair::fix_environment,
     "The CCCL headers that will be used come from another CUDA major than the NVRTC that compiles them (CCCL 3.x belongs to CUDA 13, 2.x to CUDA 12).",
     "Use the CCCL headers of the same toolkit as NVRTC (for wheels: pip install nvidia-cuda-cccl matching nvidia-cuda-nvrtc), and point -I at them."},
    {"lib.version_disagrees", Severity::warning, Repair::reinstall_package,
     "The version a library reports through its API differs from the version its files or packaging metadata claim.",
     "The package metadata is stale or the file was replaced by hand; reinstall the package so that files and metadata agree."},
    {"verify.load_failed", Severity::error, Repair::reinstall_package,
     "A selected library could not be loaded (dlopen failed, e.g. a dependency is missing); programs that need it fail the same way.",
     "Install the missing dependency named in the message, or fix the search path so that the library's dependencies resolve."},
    {"verify.crashed", Severity::error, Repair::reinstall_package,
     "Loading or initialising a selected library crashed the isolated worker (the signal and the phase are named).",
     "The library is corrupt or incompatible with this system; reinstall it or the driver, and check dmesg for GPU or driver errors."},
    {"verify.timeout", Severity::error, Repair::reboot,
     "Loading or initialising a selected library did not finish within the timeout (a hang, often in cuInit).",
     "Check the GPU and driver health (nvidia-smi, dmesg: Xid errors); a hung cuInit usually needs a driver reload or a reboot."},
    {"verify.missing_symbols", Severity::warning, Repair::reinstall_package,
     "A loaded library lacks entry points its version should have (a stub, a truncated or very old copy).",
     "Reinstall the library; if it is the driver, make sure the real driver (not a stub or a shim) is loaded."},
    {"selftest.failed", Severity::error, Repair::reset_gpu,
     "A GPU self-test failed or broke: the stack was found and is consistent, but this path does not work on this GPU (the test, the device and the reason are named).",
     "Read the test's reason: a PTX load error 222 means the NVRTC is newer than the driver; IPC failures in containers usually need --ipc=host and a shared PID namespace; a wrong result or a crash points at the GPU or driver (check dmesg for Xid errors)."},
    {"selftest.slow", Severity::warning, Repair::hardware_inspection,
     "A self-test benchmark reached less than half of what a healthy GPU of this bandwidth reaches (throttled clocks, a degraded memory, another process using the GPU).",
     "Check nvidia-smi for clock event reasons (thermal, power), other processes and ECC/remapped-row errors; rerun with `cudadiag selftest --level full` on an idle GPU."},
    {"gpu.pcie_degraded", Severity::warning, Repair::hardware_inspection,
     "The GPU's PCIe link runs below its max generation or width (a card in a x8 slot, a riser, a link that trained down), or pinned host<->device copies reach under 70% of what the link should carry; the current and max link and the bus id are named.",
     "Reseat the card or move it to a full-width slot; check the riser/cable and the BIOS PCIe settings; `nvidia-smi -q -d PCI` shows the link while a copy runs; `lspci -vv -s BUS_ID` shows LnkSta against LnkCap."},
    {"gpu.memory_errors", Severity::error, Repair::hardware_inspection,
     "The memory self-test read wrong words back (their device addresses are named) or NVML's ECC counters or remapped rows rose while it ran: the GPU memory is failing.",
     "Take the GPU out of service; check `nvidia-smi -q -d ECC,ROW_REMAPPER` and dmesg for Xid 48/63/64/94/95; a pending row remap needs a GPU reset; persistent errors mean an RMA."},
    {"gpu.throttled", Severity::warning, Repair::hardware_inspection,
     "A self-test benchmark ran under 95% of its expected figure while NVML reported a clock slowdown reason (power cap, thermal or hardware slowdown): the slow figure is explained by the GPU's clocks, not by the stack.",
     "Check cooling and power (`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE`): a hardware or thermal slowdown points at airflow or the power supply, a power cap at the configured limit (`nvidia-smi -pl`)."},
    {"gpu.busy", Severity::info, Repair::none,
     "Another process (named: pid, name, GPU memory) used the GPU while the self-test ran: its figures measure the sharing, not the GPU, so they are kept out of the score and are not reported as selftest.slow or gpu.throttled; NVML's clock slowdown reasons seen then are attributed to that load.",
     "For figures of the GPU itself, rerun when it is idle (`nvidia-smi` lists its processes); a node whose last job is still finishing needs draining first. Use `--exclusive` in a prolog that must have the GPU to itself: a busy GPU is then an error."},
    {"checkpoint.unsupported", Severity::info, Repair::none,
     "The driver cannot checkpoint and restore CUDA processes here (the checkpoint self-test's gate or the driver said so): cuCheckpointProcess* needs driver R570 (CUDA 12.8) or newer on Linux, and the calls answer CUDA_ERROR_NOT_SUPPORTED in sandboxed runtimes and under MIG or MPS. CRIU's CUDA plugin, Kubernetes pod snapshots and cuda-checkpoint will not work on this node.",
     "If you need process snapshots: install driver R570 or newer (R580 to restore onto other GPUs), and run outside a sandbox that hides the driver's checkpoint support; otherwise nothing to do."},
    {"checkpoint.failed", Severity::warning, Repair::restart_process,
     "A step of the driver's process checkpoint or restore failed or did not finish on this node (the step, the CUresult and the driver's words are named): a CRIU dump or restore, a Kubernetes pod snapshot or a cuda-checkpoint toggle of a CUDA process would fail the same way.",
     "By step: lock timed out = the process's GPU work did not finish within timeoutMs (a stuck stream; CRIU's dump times out the same way); \"operation not permitted\" = enable persistence mode (nvidia-smi -pm 1) and run as root or with ptrace rights; checkpoint failing = UVM/managed memory, IPC memory, MIG or MPS in the process (unsupported); NVML still listing the memory = the GPU was not released; restore failing (often out of memory) = the process is unrecoverable, kill and restart it (never retry the restore)."},
    {"checkpoint.corrupt", Severity::error, Repair::hardware_inspection,
     "The driver restored a checkpointed process and said so, but its data or its context were wrong afterwards (words differ from what a kernel wrote before the checkpoint, the context changed, or kernels failed): a snapshot restored on this node can silently compute on wrong data.",
     "Do not use process snapshots on this node; report it to NVIDIA with the driver version and the evidence (cudadiag bundle), and check dmesg for Xid errors around the restore."},
    {"lib.undefined_symbol", Severity::error, Repair::fix_environment,
     "A library references a symbol (with the version it requires) that no object in its predicted dependency closure defines: the dependency the loader binds (named, with how it was found and its version) is older or other than the one the library was built against. dlopen fails with `undefined symbol` (ctypes, and so every Python framework, loads with RTLD_NOW).",
     "Stop the loader from binding the wrong copy (the remedy names the LD_LIBRARY_PATH entry, ld.so.conf line or wheel that brings it in) or install a release that defines the symbol; the copy that would provide it is named when one was found."},
    {"lib.missing_symbol_version", Severity::error, Repair::fix_environment,
     "A library requires a symbol version (.gnu.version_r) that the dependency the loader binds does not define: dlopen fails with \"version `V' not found (required by ...)\".",
     "Make the loader bind a dependency at least as new as the one the library was built against (the remedy names how the old one is reached), or install an older build of the library."},
    {"lib.missing_dependency", Severity::error, Repair::reinstall_package,
     "A DT_NEEDED entry of a library in the predicted closure resolves to no file in the loader's search (its RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, the default directories), or to a file the loader stops at: dlopen fails.",
     "Install the package that provides the named library, or make it reachable (the directories searched are listed); a copy discovery found elsewhere is named."},
    {"lib.load_failed", Severity::error, Repair::reinstall_package,
     "Loaded for real in a worker of its own (its preloads, then the library, RTLD_NOW | RTLD_GLOBAL, as CUDA Python and ctypes do), a library does not load although its predicted closure does, or its initialisation crashes or hangs the process; dlerror() or the signal is named.",
     "Follow the loader's message (the file, symbol or version it stops at); the report's linkage section shows which file each dependency bound. A crash or hang in a library's constructor: reinstall the package that provides it and report it to its vendor with `cudadiag bundle`."},
    {"lib.closure_mispredicted", Severity::warning, Repair::none,
     "The link map of a worker that loaded a library differs from the closure cudadiag predicted from the files: a predicted dependency is not in it (another copy was bound), or the load failed or succeeded against the prediction. The closure findings for that library may be wrong; what the worker loaded is what a process does.",
     "Trust the loaded result (the report's linkage.components[].closures[].check); please report the difference to cudadiag with the support bundle (`cudadiag bundle`), which holds the facts needed to fix the prediction."},
    {"process.duplicate_lib", Severity::error, Repair::fix_environment,
     "Two different files of one CUDA component are mapped into one process; their state is not shared and calls can go to either.",
     "Make every part of the application load the component from one place (one toolkit or one wheel set); check LD_LIBRARY_PATH and RPATHs."},
    {"path.world_writable", Severity::warning, Repair::fix_environment,
     "A directory the loader searches for CUDA libraries can be written by any user, who could plant a library there.",
     "Remove the other-write permission (chmod o-w) or stop searching that directory."},
    {"python.virtual_env_inactive", Severity::warning, Repair::fix_environment,
     "VIRTUAL_ENV names a virtual environment that `python3` does not run (the venv's bin is not first on PATH); Python ignores the variable, so CUDA Python searches the site-packages of the interpreter PATH finds, not the venv's.",
     "Activate the venv (`source VENV/bin/activate` puts its bin first on PATH) or run its interpreter by path (VENV/bin/python); if you no longer use it, `deactivate` or unset VIRTUAL_ENV."},
    {"framework.driver_too_old", Severity::error, Repair::reinstall_package,
     "A Python framework in the environment CUDA Python runs in was built for a newer CUDA major than the driver supports (torch/version.py, TensorFlow's build_info.py, the cudaNN in JAX's plugin or CuPy's wheel name, the release of the ptxas Triton compiles with); it fails at its first CUDA call (Triton: at its first kernel).",
     "Upgrade the NVIDIA driver to the branch that CUDA major needs (CUDA 13: 580 or newer; CUDA 12: 525), or install the framework's build for the driver's CUDA (e.g. torch's cu12 wheels, jax-cuda12-plugin, cupy-cuda12x); for Triton, point TRITON_PTXAS_PATH (TRITON_PTXAS_BLACKWELL_PATH on compute capability 10.0 and newer) at a ptxas of the driver's CUDA."},
    {"framework.arch_unsupported", Severity::warning, Repair::reinstall_package,
     "A Python framework cannot run code on this GPU's architecture. Error: its GPU code (the SASS and PTX in torch's libtorch_cuda.so fatbinaries, TensorFlow's cuda_compute_capabilities) holds nothing this GPU runs (SASS runs only on its own major at its minor or newer, PTX on its architecture or newer), so every kernel fails with \"no kernel image is available for execution on the device\" (pytorch/pytorch#150733). Warning: the ptxas Triton compiles with (its bundled ptxas or ptxas-blackwell, or the file TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH names) comes from a CUDA release older than the architecture: every Triton kernel (torch.compile, vLLM) fails with \"ptxas fatal: Value 'sm_XXXa' is not defined for option 'gpu-name'\" (triton-lang/triton#8539).",
     "Install a build of the framework that includes the GPU's architecture (the finding lists what the installed one carries; torch: a wheel for a newer CUDA, or built with TORCH_CUDA_ARCH_LIST naming it). For Triton: point TRITON_PTXAS_PATH (TRITON_PTXAS_BLACKWELL_PATH when the finding names ptxas-blackwell) at a ptxas of the CUDA release the finding names or newer, e.g. the toolkit's bin/ptxas, or install a Triton release whose bundled ptxas knows the architecture."},
    {"framework.load_fails", Severity::error, Repair::reinstall_package,
     "A Python framework's own CUDA library will not load, predicted from the files: `import torch` raises in torch/__init__.py's _load_global_deps (libtorch_global_deps.so fails and a library its _preload_cuda_deps globs look for is not on sys.path, or the glob picks a file of another CUDA major first: pytorch/pytorch#147001), or torch's libtorch_cuda.so or JAX's PJRT plugin (xla_cuda_plugin.so) has a dependency, symbol version or symbol the loader cannot supply. The finding quotes the error the loader or Python would raise. A missing driver (libcuda.so.1) is left to the driver findings.",
     "The finding names the cause: uninstall the stray wheel a preload glob picked first, or install the CUDA wheels the framework pins (`pip install --force-reinstall 'torch==VERSION'`) in the environment it runs in, or make the missing library reachable where the framework's loader looks."},
    {"framework.version_rule", Severity::error, Repair::reinstall_package,
     "A CUDA library a framework binds breaks a rule the framework checks itself (info: differs from what it pins but passes). torch: the cuDNN it binds, when not the nvidia-cudnn wheel it pins (LD_LIBRARY_PATH, the loader cache), against torch.backends.cudnn's rule (the compile-time major, a minor at least the compile-time one): an error in torch's words when it refuses it at its first cuDNN call. JAX: a CUDA library JAX would load breaks a rule JAX's CUDA plugin checks when it initializes (jax_plugins/xla_cudaNN/__init__.py): error when JAX refuses to start (CUDA runtime, cuBLAS or cuSPARSE older than 12.1; cuDNN 9.10.0; cuDNN older than 9.10.1 with cuBLAS 12.9 or newer on several GPUs), warning when it only warns (cuBLAS 12.8 up to 13.2 on a compute capability 10.x or 11.x GPU: silent data corruption under concurrent kernels). The copy checked is the nvidia wheel JAX loads from site-packages, else the loader's answer.",
     "torch: make it bind the cuDNN it pins (take the other copy's directory off LD_LIBRARY_PATH) or install that cuDNN or a newer minor there. JAX: install the version the rule asks for (e.g. `pip install -U nvidia-cudnn-cu12` or the nvidia-cublas wheel of the fixed release), in the environment JAX runs in; JAX_SKIP_CUDA_CONSTRAINTS_CHECK only silences JAX's own check, not the defect."},
    {"python.requirements_conflict", Severity::error, Repair::reinstall_package,
     "Two Python frameworks in the environment CUDA Python runs in pin one CUDA distribution in ways no release satisfies (torch 2.7.1's nvidia-cudnn-cu12==9.5.1.17 and the JAX CUDA plugin's >=9.10.2.21 under its with-cuda extra): whatever pip installs breaks one of them, and each one's remedy breaks the other. Error when the installed release breaks a pin its framework enforces; warning when both frameworks accept it at run time (the next pip resolution will undo it).",
     "Give each framework its own environment (a venv each), or install releases of the two whose pins overlap (the finding names the ones known to fit)."},
    {"python.requirement_unmet", Severity::error, Repair::reinstall_package,
     "A Python framework in the environment CUDA Python runs in (torch, JAX, CuPy, TensorFlow, Triton, vLLM, ...) pins a CUDA distribution that is not installed there, or installed in a version its requirement does not allow; the framework was built and tested against the pinned one. The severity follows the framework's own run-time check where one is known: info when it accepts the installed release (torch's cuDNN: the same major, a newer minor), an error in its words when it refuses it.",
     "Install the version the framework requires (the message gives the pip command), or install the framework release that matches the CUDA distributions you want."},
    {"gpu.missing", Severity::error, Repair::reboot,
     "The node shows fewer GPUs than it should (--expect-gpus N, or the policy's expect_gpus), named by the layer that lost them: the PCI bus (hardware_inspection), the NVIDIA driver (reboot), NVML (reset_gpu) or CUDA (fix_environment: CUDA_VISIBLE_DEVICES, a container's device list).",
     "Follow the layer: a GPU missing from the PCI bus needs the node drained and the GPU, slot, riser and power inspected; one the driver did not initialise (dmesg: RmInitAdapter failed, Xid 79) a reboot; one NVML cannot reach a GPU reset; one CUDA does not see the job's CUDA_VISIBLE_DEVICES or the container's device list fixed."},
    {"gpu.xid", Severity::error, Repair::reset_gpu,
     "The NVIDIA driver logged an Xid event for a GPU in the kernel log (/dev/kmsg): one finding per code and GPU, its repeats counted, with the meaning from NVIDIA's Xid catalogue. Severity and repair class follow the code (an application's fault is a warning and restart_process, a double-bit ECC error an error and reset_gpu, a GPU fallen off the bus an error and reboot).",
     "Follow the finding's repair class: restart the application, reset the GPU (`nvidia-smi -r`) with no process on it, reboot, or have the GPU inspected; NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) explains each code."},
    {"nvswitch.sxid", Severity::warning, Repair::none,
     "An NVSwitch logged an SXid event in the kernel log: info when the driver calls it non-fatal, an error when fatal (the GPUs behind the switch lose their NVLink peers).",
     "A fatal SXid needs the node's GPUs and NVSwitches reset (a reboot); a non-fatal one repeating on the same link points at the link's hardware. NVIDIA's SXid catalogue (docs.nvidia.com/deploy/xid-errors) explains each code."},
    {"policy.unmet", Severity::error, Repair::none,
     "A requirement given with --require or --policy does not hold on this machine (the requirement and what was seen are named).",
     "Install or select what the requirement asks for (a newer library, the driver, a passing self-test), or change the requirement if it is wrong."},
  };
  // clang-format on
  return table;
}

const FindingDefinition* find_definition(std::string_view id) {
  for (const auto& definition : finding_definitions()) {
    if (definition.id == id) {
      return &definition;
    }
  }
  return nullptr;
}

Finding make_finding(std::string_view id, std::string message, std::vector<std::string> components,
                     Evidence evidence, std::optional<Severity> severity) {
  const auto* definition = find_definition(id);
  Finding finding;
  finding.id = std::string(id);
  finding.severity = severity.value_or(definition != nullptr ? definition->severity : Severity::error);
  finding.remedy = definition != nullptr ? std::string(definition->remedy) : "";
  finding.repair = definition != nullptr ? definition->repair : Repair::none;
  finding.message = std::move(message);
  finding.components = std::move(components);
  finding.evidence = std::move(evidence);
  return finding;
}

// A RECORD larger than this is not read (torch's is a few MiB).
constexpr std::size_t k_record_max_bytes = std::size_t{64} << 20;

std::optional<std::string> owning_wheel_distribution(const std::string& path) {
  const auto at = path.rfind("/nvidia/");
  if (at == std::string::npos) {
    return std::nullopt;
  }
  const auto site = path.substr(0, at);
  const auto relative = path.substr(at + 1);
  auto entries = fs::list_directory(site);
  if (!entries) {
    return std::nullopt;
  }
  // The nvidia-* wheels' records first: a site-packages beside torch holds hundreds of
  // distributions, and torch's own RECORD alone has thousands of lines. The others are read after
  // them, for a file under nvidia/ that another wheel installed.
  std::stable_partition(entries->begin(), entries->end(),
                        [](const std::string& entry) { return entry.rfind("nvidia", 0) == 0; });
  const std::string line_start = relative + ",";
  for (const auto& entry : *entries) {
    if (entry.size() < 11 || entry.substr(entry.size() - 10) != ".dist-info") {
      continue;
    }
    const auto record = fs::read_file_prefix(fs::join(fs::join(site, entry), "RECORD"), k_record_max_bytes);
    if (!record) {
      continue;
    }
    const std::string_view text = *record;
    if (!text.starts_with(line_start) && text.find("\n" + line_start) == std::string_view::npos) {
      continue;
    }
    std::string line;
    const auto metadata_path = fs::join(fs::join(site, entry), "METADATA");
    fs::note_path(metadata_path);
    std::ifstream metadata(fs::HostPath(metadata_path).str());
    while (std::getline(metadata, line) && !line.empty()) {
      if (line.rfind("Name:", 0) == 0) {
        auto name = line.substr(5);
        name.erase(0, name.find_first_not_of(' '));
        while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) {
          name.pop_back();
        }
        std::transform(name.begin(), name.end(), name.begin(), [](char c) { return c == '_' ? '-' : c; });
        return name;
      }
    }
    auto name = entry.substr(0, entry.find('-'));
    std::transform(name.begin(), name.end(), name.begin(), [](char c) { return c == '_' ? '-' : c; });
    return name;
  }
  return std::nullopt;
}

void set_plans(Finding& finding, std::vector<Plan> plans) {
  if (plans.empty()) {
    return;
  }
  rank(plans);
  finding.remedy = render_remedy(plans);
  finding.fix = std::move(plans);
}

std::optional<std::string> environment_python(const std::string& path,
                                              const discovery::DiscoveryResult& result) {
  for (const auto& environment : result.python.environments) {
    for (const auto& site : environment.site_dirs) {
      if (path.rfind(site + "/", 0) == 0) {
        if (environment.is_venv) {
          return fs::join(environment.prefix, "bin/python");
        }
        return environment.interpreter.empty() ? std::string("python3") : environment.interpreter;
      }
    }
  }
  const auto site = path.find("/site-packages/");
  const auto lib = site == std::string::npos ? std::string::npos : path.rfind("/lib/python", site);
  if (lib == std::string::npos) {
    return std::nullopt;
  }
  return fs::join(path.substr(0, lib), "bin/python");
}

std::string primary_python(const discovery::DiscoveryResult& result) {
  std::string interpreter = "python3";
  for (const auto& environment : result.python.environments) {
    if (environment.primary) {
      interpreter = environment.is_venv
                        ? fs::join(environment.prefix, "bin/python")
                        : (environment.interpreter.empty() ? interpreter : environment.interpreter);
    }
  }
  return interpreter;
}

std::string remedy_for_route(const discovery::Sighting& via, const discovery::DiscoveryResult& discovery,
                             const Environment& env) {
  const auto& how = via.found_via;
  if (how == "LD_LIBRARY_PATH") {
    return "remove " + via.search_dir +
           " from LD_LIBRARY_PATH (set by your shell profile, job script or container "
           "environment)";
  }
  if (how == "ld.so.cache") {
    if (const auto* listed = discovery.ld_so_conf.listing(via.search_dir)) {
      return "delete the line " + listed->directory + " from " + listed->file + " (line " +
             std::to_string(listed->line) + ") and run `ldconfig` as root to rebuild " +
             discovery.ld_cache.path;
    }
    return "the loader cache " + discovery.ld_cache.path + " points into " + via.search_dir +
           ", which no file under /etc/ld.so.conf lists any more: run `ldconfig` as root to rebuild the "
           "cache";
  }
  if (how == "default-dirs") {
    return "it is in the system library directory " + via.search_dir +
           ": remove the package that installed " + via.path + " (dpkg -S or rpm -qf names it)";
  }
  if (how == "site-packages") {
    if (auto distribution = owning_wheel_distribution(via.path)) {
      return "`pip uninstall " + *distribution + "` (the wheel that installed " + via.path + ")";
    }
    return "remove " + via.path + " from the Python environment (no installed wheel claims it)";
  }
  if (how == "conda") {
    if (const auto prefix = env.non_empty("CONDA_PREFIX"); prefix && via.path.rfind(*prefix + "/", 0) == 0) {
      if (auto package = python::owning_conda_package(*prefix, via.path.substr(prefix->size() + 1))) {
        return "`conda remove " + *package + "` in " + *prefix;
      }
    }
    return "remove " + via.path + " from the conda environment";
  }
  if (how == "CUDA_PATH" || how == "CUDA_HOME" || how == "CUDNN_PATH" || how == "NCCL_HOME") {
    return "point " + how + " (now " + env.get(how).value_or("") + ") at another root, or unset it";
  }
  if (how == "PATH") {
    return "remove " + via.search_dir + " from PATH";
  }
  if (via.loader_step == discovery::LoaderStep::preloaded) {
    return how == "LD_PRELOAD"
               ? "remove " + via.path + " from LD_PRELOAD (now " + env.get("LD_PRELOAD").value_or("") +
                     ": set by your shell profile, job script or container environment)"
               : "delete the line naming " + via.path + " from " + how + " (as root)";
  }
  return "remove " + via.path;
}

Repair repair_for_route(const discovery::Sighting& via) {
  const auto& how = via.found_via;
  if (how == "site-packages" || how == "conda" || how == "default-dirs") {
    return Repair::reinstall_package;
  }
  return Repair::fix_environment;
}

namespace {

// The rules below use the short name.
Finding make(std::string_view id, std::string message, std::vector<std::string> components,
             Evidence evidence = {}, std::optional<Severity> severity = std::nullopt) {
  return make_finding(id, std::move(message), std::move(components), std::move(evidence), severity);
}

using discovery::Candidate;
using discovery::ComponentResult;

std::string component_label(const ComponentResult& result) {
  std::string label(result.spec->name);
  if (result.spec->kind == probes::ComponentKind::headers) {
    label += " headers";
  }
  return label;
}

std::string shown_path(const Candidate& candidate) {
  return candidate.realpath.value_or(candidate.first.path);
}

void check_driver(const ComponentResult& result, const discovery::DiscoveryResult& discovery,
                  const Environment& env, std::vector<Finding>& out) {
  if (result.spec->name != "cuda") {
    return;
  }
  const auto* chosen = result.loader_candidate();
  if (chosen == nullptr) {
    Evidence evidence = {{"candidates", result.candidates.size()}};
    std::string message =
        "libcuda.so.1 is not reachable through LD_LIBRARY_PATH, ld.so.cache or the default directories";
    for (const auto& candidate : result.candidates) {
      if (candidate.is_stub) {
        message += "; only the toolkit stub " + candidate.first.path + " exists";
        evidence["stub"] = candidate.first.path;
        break;
      }
    }
    auto finding = make("driver.missing", message, {"cuda"}, evidence);
    set_plans(finding,
              {{"install the NVIDIA driver (in a container: run it with the NVIDIA container runtime, "
                "which mounts the host's)",
                {install_driver("580")}}});
    out.push_back(std::move(finding));
    return;
  }
  if (chosen->is_stub) {
    const auto& via = result.loader->via;
    const bool preloaded = via.loader_step == discovery::LoaderStep::preloaded;
    auto finding =
        make("driver.stub",
             preloaded ? via.found_via + " preloads the toolkit stub " + via.path +
                             " into every process, so every dlopen(\"libcuda.so.1\") gets it instead of "
                             "the driver's libcuda.so.1, whatever the search path holds"
                       : "the loader would load the toolkit stub " + via.path + " (via " + via.found_via +
                             ") instead of the driver's libcuda.so.1",
             {"cuda"}, {{"path", via.path}, {"found_via", via.found_via}, {"search_dir", via.search_dir}});
    finding.remedy =
        "Stop the loader from reaching the stub (it is only for linking): " +
        remedy_for_route(via, discovery, env) +
        ". Then make sure the NVIDIA driver's libcuda.so.1 is installed (in a container: run it with the "
        "NVIDIA container runtime, which mounts the driver).";
    finding.repair = repair_for_route(via);
    out.push_back(std::move(finding));
  }
}

bool loads(const std::optional<discovery::Choice>& choice) {
  return choice && !choice->fails;
}

void check_python_native_differ(const ComponentResult& result, const discovery::DiscoveryResult& discovery,
                                std::vector<Finding>& out) {
  const auto* python = result.selected_candidate();
  const auto* native = result.loader_candidate();
  // Only two answers that both load can differ in what they load; a failing one has its own finding.
  if (python == nullptr || native == nullptr || python == native || !loads(result.selected) ||
      !loads(result.loader) || result.spec->kind != probes::ComponentKind::dynamic_lib) {
    return;
  }
  // Two copies of the same version differ only in where they live: worth knowing, not a risk. Two
  // releases of one major are too: a program built with the older toolkit runs with the newer
  // library (minor-version compatibility), and each answer loads. Another major (or an unknown
  // version) is a warning: a program built for one gets the other's SONAME or none.
  const auto python_release =
      python->version ? versions::major_minor(python->version->version) : std::nullopt;
  const auto native_release =
      native->version ? versions::major_minor(native->version->version) : std::nullopt;
  const bool same_version =
      python->version && native->version && python->version->version == native->version->version;
  const int python_major = python_release ? python_release->first : -1;
  const bool same_major = python_release && native_release && python_major == native_release->first;
  auto finding =
      make("lib.python_native_differ",
           component_label(result) + ": CUDA Python would load " + shown_path(*python) + " (" +
               result.selected->via.found_via + ") but a native program would load " + shown_path(*native) +
               " (" + result.loader->via.found_via + ")" +
               (same_major && !same_version ? "; both of CUDA " + std::to_string(python_major) +
                                                  ", which minor-version compatibility covers"
                                            : ""),
           {std::string(result.spec->name)},
           {{"python",
             {{"path", python->first.path}, {"version", python->version ? python->version->version : ""}}},
            {"native",
             {{"path", native->first.path}, {"version", native->version ? native->version->version : ""}}}},
           same_version || same_major ? std::optional(Severity::info) : std::nullopt);
  // Native programs get CUDA Python's copy when its directory comes first on LD_LIBRARY_PATH, if
  // they search its name (the loader takes the newest SONAME it reaches). Else a wheel of another
  // major is a leftover of this environment: without it CUDA Python loads what native programs do.
  const auto name_of = [](const discovery::Sighting& sighting) {
    return sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
  };
  const auto directory = fs::parent(result.selected->via.path);
  const auto& python_via = result.selected->via;
  if (python_via.found_via != "vendored" && !directory.empty() &&
      name_of(python_via) == name_of(result.loader->via)) {
    set_plans(finding, {{"make native programs load the copy CUDA Python loads",
                         {prepend_path_entry("LD_LIBRARY_PATH", directory)}}});
  } else if (python_via.found_via == "site-packages") {
    const auto owner = owning_wheel_distribution(python_via.path);
    const auto interpreter = environment_python(python_via.path, discovery);
    if (owner && interpreter) {
      set_plans(finding, {{"remove the wheel of another major from the environment",
                           {pip_uninstall(*interpreter, *owner)}}});
    }
  }
  out.push_back(std::move(finding));
}

} // namespace

bool version_in_other_numbering(const discovery::Candidate& candidate) {
  if (candidate.version->source != versions::VersionSource::file_name) {
    return false;
  }
  const auto soname = fs::basename(candidate.first.path);
  const auto at = soname.rfind(".so.");
  return at != std::string::npos && candidate.version->version.rfind(soname.substr(at + 4) + ".", 0) != 0;
}

namespace {

bool in_other_numbering(const Candidate& candidate) {
  return version_in_other_numbering(candidate);
}

std::string searched_name(const discovery::Sighting& sighting) {
  return sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
}

// lib.multiple_versions is about what this process's routes reach, not every file on disk: the
// Python answer, the native answer and the toolkit CUDA_PATH/CUDA_HOME names (what builds and
// cuda-pathfinder's fallback use), each with the SONAME it resolves. Copies of one SONAME with
// different versions across these routes are reported, except when the only difference is the
// Python/native pair (lib.python_native_differ says that). Other SONAME majors are different
// libraries both wanted (libnvrtc.so.12 for torch-cu12 next to .so.13 for cupy-cu13); header sets
// are not libraries.
void check_multiple_versions(const ComponentResult& result, std::vector<Finding>& out) {
  if (result.spec->kind != probes::ComponentKind::dynamic_lib) {
    return;
  }
  struct Route {
    std::string name;
    const Candidate* candidate;
    const discovery::Sighting* via;
  };
  std::vector<Route> routes;
  if (loads(result.selected)) {
    routes.push_back({"CUDA Python", result.selected_candidate(), &result.selected->via});
  }
  if (loads(result.loader)) {
    routes.push_back({"native programs", result.loader_candidate(), &result.loader->via});
  }
  // The toolkit cuda-pathfinder's CUDA_PATH step would use: its first usable file.
  for (std::size_t i = 0; i < result.candidates.size(); ++i) {
    const auto& candidate = result.candidates[i];
    const auto* sighting = &candidate.first;
    for (const auto& other : candidate.also_found_as) {
      if (sighting->pathfinder_step != discovery::PathfinderStep::cuda_path) {
        sighting = &other;
      }
    }
    if (sighting->pathfinder_step == discovery::PathfinderStep::cuda_path && candidate.usable()) {
      if (root_compared_with_loader(result, *sighting)) {
        break; // env.root_release_differs compares this root with the loader's copy
      }
      routes.push_back({sighting->found_via + " (builds, cuda-pathfinder's fallback)", &candidate, sighting});
      break;
    }
  }
  std::map<std::string, std::set<std::string>> versions_by_soname;
  Evidence::List copies = Evidence::List();
  for (const auto& route : routes) {
    const auto& candidate = *route.candidate;
    if (!candidate.version || candidate.is_stub || in_other_numbering(candidate)) {
      continue;
    }
    versions_by_soname[searched_name(*route.via)].insert(candidate.version->version);
    copies.push_back(
        {{"route", route.name}, {"path", route.via->path}, {"version", candidate.version->version}});
  }
  for (const auto& [soname, versions] : versions_by_soname) {
    if (versions.size() < 2) {
      continue;
    }
    // When the Python and native answers differ in version, lib.python_native_differ says so; this
    // rule then only speaks when a third route (CUDA_PATH/CUDA_HOME) adds a version of its own.
    const auto* python = loads(result.selected) ? result.selected_candidate() : nullptr;
    const auto* native = loads(result.loader) ? result.loader_candidate() : nullptr;
    const bool pair_differs = python != nullptr && native != nullptr && python->version && native->version &&
                              python->version->version != native->version->version;
    if (pair_differs) {
      auto others = versions;
      others.erase(python->version->version);
      others.erase(native->version->version);
      if (others.empty()) {
        continue;
      }
    }
    // Each version with the routes that reach it, so that the message names where the odd one
    // comes from (CUDA_HOME, an LD_LIBRARY_PATH entry).
    std::string list;
    for (const auto& version : versions) {
      std::string names;
      for (const auto& route : routes) {
        if (route.candidate->version && route.candidate->version->version == version &&
            searched_name(*route.via) == soname) {
          names += (names.empty() ? "" : ", ") + route.name + " " + route.via->path;
        }
      }
      list += (list.empty() ? "" : "; ") + version + (names.empty() ? "" : " from " + names);
    }
    // Noise rule: one major, and no build root newer than a copy a program loads at run time, is
    // minor-version compatibility (programs built with the older release run with the newer): info.
    std::optional<int> major;
    bool one_major = true;
    std::optional<std::pair<int, int>> newest_loaded;
    std::optional<std::pair<int, int>> oldest_loaded;
    std::optional<std::pair<int, int>> root_release;
    for (const auto& route : routes) {
      if (!route.candidate->version || searched_name(*route.via) != soname) {
        continue;
      }
      const auto release = versions::major_minor(route.candidate->version->version);
      if (!release) {
        one_major = false;
        continue;
      }
      one_major = one_major && (!major || *major == release->first);
      major = release->first;
      const bool root = route.via->pathfinder_step == discovery::PathfinderStep::cuda_path &&
                        route.name.find("builds") != std::string::npos;
      if (root) {
        root_release = release;
      } else {
        newest_loaded = newest_loaded ? std::max(*newest_loaded, *release) : *release;
        oldest_loaded = oldest_loaded ? std::min(*oldest_loaded, *release) : *release;
      }
    }
    const bool compatible = one_major && (!root_release || !oldest_loaded || *root_release <= *oldest_loaded);
    auto finding = make("lib.multiple_versions",
                        component_label(result) + ": " + soname + " in " + std::to_string(versions.size()) +
                            " versions across the routes this process uses: " + list,
                        {std::string(result.spec->name)}, {{"soname", soname}, {"copies", copies}},
                        compatible ? std::optional(Severity::info) : std::nullopt);
    // Plans: stop each route whose copy differs from the one CUDA Python (else a native program)
    // loads, where the route is a variable of this user's.
    const auto* reference = python != nullptr ? python : native;
    std::vector<Action> actions;
    for (const auto& route : routes) {
      if (reference == nullptr || !route.candidate->version || !reference->version ||
          route.candidate->version->version == reference->version->version) {
        continue;
      }
      const auto& how = route.via->found_via;
      if (how == "LD_LIBRARY_PATH") {
        actions.push_back(remove_path_entry("LD_LIBRARY_PATH", route.via->search_dir));
      } else if (how == "CUDA_PATH" || how == "CUDA_HOME") {
        actions.push_back(unset_variable(how));
      } else {
        actions.clear();
        break; // a package's or the host's copy: the prose remedy
      }
    }
    if (!actions.empty()) {
      set_plans(finding,
                {{"stop the routes that reach another version than CUDA Python's", std::move(actions)}});
    }
    out.push_back(std::move(finding));
  }
}

// A CUDA library preloaded into every process (LD_PRELOAD, /etc/ld.so.preload): one finding per
// preloaded file, naming the variable or file, listing the components it answers for. A preloaded
// stub is driver.stub's (which names the preload as the cause).
void check_preloaded(const discovery::DiscoveryResult& all, std::vector<Finding>& out) {
  struct Preloaded {
    discovery::Sighting via;
    std::vector<std::string> components;
    bool stub = false;
  };
  std::vector<Preloaded> found;
  for (const auto& result : all.components) {
    for (const auto& candidate : result.candidates) {
      std::vector<const discovery::Sighting*> sightings{&candidate.first};
      for (const auto& other : candidate.also_found_as) {
        sightings.push_back(&other);
      }
      for (const auto* sighting : sightings) {
        if (sighting->loader_step != discovery::LoaderStep::preloaded) {
          continue;
        }
        auto at = std::find_if(found.begin(), found.end(),
                               [&](const Preloaded& p) { return p.via.path == sighting->path; });
        if (at == found.end()) {
          found.push_back({*sighting, {}, candidate.is_stub});
          at = std::prev(found.end());
        }
        if (std::find(at->components.begin(), at->components.end(), result.spec->name) ==
            at->components.end()) {
          at->components.emplace_back(result.spec->name);
        }
      }
    }
  }
  for (const auto& preloaded : found) {
    if (preloaded.stub) {
      continue;
    }
    std::string names;
    for (const auto& name : preloaded.components) {
      names += (names.empty() ? "" : ", ") + name;
    }
    out.push_back(make(
        "lib.preloaded",
        preloaded.via.found_via + " preloads " + preloaded.via.path + " (" + preloaded.via.file_name +
            ") into every process: it answers every load of " + names +
            ", CUDA Python's included (was-already-loaded-from-elsewhere), whatever the search paths hold",
        preloaded.components,
        {{"path", preloaded.via.path},
         {"source", preloaded.via.found_via},
         {"soname", preloaded.via.file_name}}));
  }
}

const ComponentResult* component_named(const discovery::DiscoveryResult& result, std::string_view name) {
  for (const auto* list : {&result.components, &result.dependencies}) {
    for (const auto& component : *list) {
      if (component.spec->name == name && component.spec->kind == probes::ComponentKind::dynamic_lib) {
        return &component;
      }
    }
  }
  return nullptr;
}

} // namespace

std::optional<LoadCause> load_cause(const discovery::DiscoveryResult& all, const ComponentResult& result) {
  const ComponentResult* at = &result;
  for (int depth = 0; depth < 16; ++depth) {
    if (!at->selected || at->selected->loads()) {
      return std::nullopt;
    }
    if (at->selected->failed_dependency.empty()) {
      return LoadCause{at, at->candidates[at->selected->candidate].usable()};
    }
    const auto* dependency = component_named(all, at->selected->failed_dependency);
    if (dependency == nullptr || dependency == at) {
      return LoadCause{at, false};
    }
    at = dependency;
  }
  return LoadCause{at, false};
}

namespace {

// One finding per cause (docs/findings.md, "Which id owns which cause"): a file CUDA Python takes
// that cannot load by itself is one lib.unusable_candidate (lib.wrong_arch when it is built for
// another class or machine) listing every component it breaks, the failing component and those
// that load it first; a closure that fails is the linkage rules' (lib.missing_dependency, ...),
// unless its component is not reported (a dependency resolved for another): then it is one
// lib.unusable_candidate here. A file only the loader stops at is lib.loader_blocked.
void check_unusable(const discovery::DiscoveryResult& all, std::vector<Finding>& out) {
  struct Group {
    LoadCause cause;
    std::vector<std::string> broken;
  };
  std::vector<Group> groups;
  for (const auto& result : all.components) {
    const auto cause = load_cause(all, result);
    if (!cause) {
      continue;
    }
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& g) { return g.cause.owner == cause->owner; });
    if (group == groups.end()) {
      groups.push_back({*cause, {}});
      group = std::prev(groups.end());
    }
    group->broken.emplace_back(result.spec->name);
  }
  std::set<std::string> wrong_arch_done;
  for (const auto& group : groups) {
    const auto& owner = *group.cause.owner;
    const bool reported = std::any_of(all.components.begin(), all.components.end(),
                                      [&](const ComponentResult& c) { return &c == &owner; });
    if (group.cause.closure && reported) {
      continue; // the linkage rules' finding names it (evaluate_linkage lists the dependents)
    }
    const auto& candidate = owner.candidates[owner.selected->candidate];
    const auto& via = owner.selected->via;
    std::string others;
    for (const auto& name : group.broken) {
      if (name != owner.spec->name) {
        others += (others.empty() ? "" : ", ") + name;
      }
    }
    const auto breaks = others.empty() ? std::string()
                                       : "; it breaks " + others + " too (cuda-pathfinder loads " +
                                             std::string(owner.spec->name) + " first)";
    const auto verb = owner.selected->outcome == loader::LoadOutcome::crashes
                          ? "the process dies loading it: "
                          : "loading it fails: ";
    Evidence evidence = {{"path", via.path},
                         {"found_via", via.found_via},
                         {"outcome", std::string(probes::to_string(owner.selected->outcome))},
                         {"fails", owner.selected->fails.value_or("")},
                         {"rejected", candidate.rejected.value_or("")},
                         {"breaks", group.broken}};
    if (candidate.elf && candidate.rejected) {
      wrong_arch_done.insert(candidate.first.path);
      evidence.set("class", candidate.elf->class_name());
      evidence.set("machine", candidate.elf->machine_name());
      out.push_back(make("lib.wrong_arch",
                         component_label(owner) + ": cuda-pathfinder takes " + via.path + " (" +
                             via.found_via + ") — " + *candidate.rejected + ", so " + verb +
                             owner.selected->fails.value_or("") + breaks,
                         group.broken, std::move(evidence), Severity::error));
      continue;
    }
    out.push_back(make("lib.unusable_candidate",
                       component_label(owner) + ": cuda-pathfinder takes " + via.path + " (" + via.found_via +
                           ") and " + verb + owner.selected->fails.value_or("") + breaks,
                       group.broken, std::move(evidence)));
  }
  std::set<std::string> cause_files; // a file already named as a cause is not named again for the loader
  for (const auto& group : groups) {
    const auto& owner = *group.cause.owner;
    if (const auto& real = owner.candidates[owner.selected->candidate].realpath) {
      cause_files.insert(*real);
    }
  }
  for (const auto& result : all.components) {
    if (result.loader_blocked_by &&
        cause_files.count(result.candidates[*result.loader_blocked_by].realpath.value_or("")) == 0) {
      const auto& candidate = result.candidates[*result.loader_blocked_by];
      std::string soname = searched_name(candidate.first);
      out.push_back(make("lib.loader_blocked",
                         component_label(result) + ": dlopen(\"" + soname + "\") would stop at " +
                             candidate.first.path + " (" + candidate.first.found_via + ") and " +
                             (candidate.crashes ? "kill the process: " : "fail: ") +
                             candidate.rejected.value_or(""),
                         {std::string(result.spec->name)},
                         {{"path", candidate.first.path}, {"rejected", candidate.rejected.value_or("")}}));
    }
    for (const auto& candidate : result.candidates) {
      if (candidate.elf && candidate.rejected && wrong_arch_done.count(candidate.first.path) == 0) {
        out.push_back(
            make("lib.wrong_arch",
                 component_label(result) + ": " + candidate.first.path + " — " + *candidate.rejected,
                 {std::string(result.spec->name)},
                 {{"path", candidate.first.path},
                  {"class", candidate.elf->class_name()},
                  {"machine", candidate.elf->machine_name()}}));
      }
    }
  }
}

// The toolkit root under which cuda-pathfinder's CUDA_PATH step finds this file: the root whose
// anchor directory for the component (the catalog's first pathfinder_toolkit_dirs: lib64, lib,
// nvvm/lib64, include, targets/TRIPLE/include, ...) holds it; "" for a name CUDA Python does not
// know or a file in no anchor directory (CUDA_PATH would not reach it).
std::string toolkit_root_of(const ComponentResult& result, const std::string& path) {
  const auto& spec = *result.spec;
  if (!spec.cuda_python) {
    return {};
  }
  const auto dir = spec.kind == probes::ComponentKind::headers ? path : fs::parent(path);
  const auto count = std::min(spec.pathfinder_toolkit_dirs, spec.toolkit_dirs.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::string anchor(spec.toolkit_dirs[i]);
    for (const std::string_view triple : {"x86_64-linux", "sbsa-linux", "aarch64-linux"}) {
      auto tail = "/" + anchor;
      if (const auto at = tail.find("{triple}"); at != std::string::npos) {
        tail.replace(at, 8, triple);
      }
      if (dir.size() > tail.size() && dir.ends_with(tail)) {
        return dir.substr(0, dir.size() - tail.size());
      }
    }
  }
  return {};
}

// lib.not_on_search_path's plans: the library's directory first on LD_LIBRARY_PATH (a binary's on
// PATH); CUDA_PATH naming its toolkit root unless the variable cuda-pathfinder reads already names
// it (CUDA_HOME too when it names another root, so that the two agree). A header set is not loaded:
// no library search path is offered for it.
std::vector<Plan> reach_plans(const ComponentResult& result, const Candidate& candidate,
                              const Environment& env) {
  std::vector<Plan> plans;
  // In an activated conda env or venv the CUDA libraries are that environment's: reaching another
  // installation's directory mixes releases (the simulation found a toolkit's cuSPARSE binding the
  // env's nvJitLink): prose only.
  if (env.non_empty("CONDA_PREFIX") || env.non_empty("VIRTUAL_ENV")) {
    return plans;
  }
  const auto kind = result.spec->kind;
  const auto& path = candidate.first.path;
  if (kind == probes::ComponentKind::dynamic_lib) {
    plans.push_back({"let both loaders reach it", {prepend_path_entry("LD_LIBRARY_PATH", fs::parent(path))}});
  } else if (kind == probes::ComponentKind::binary) {
    plans.push_back({"put it on the command search path", {prepend_path_entry("PATH", fs::parent(path))}});
  }
  const auto root = toolkit_root_of(result, path);
  const auto named = env.non_empty("CUDA_PATH") ? env.non_empty("CUDA_PATH") : env.non_empty("CUDA_HOME");
  if (!root.empty() && (!named || fs::lexically_normal(*named) != fs::lexically_normal(root))) {
    Plan plan{"name its toolkit root for cuda-pathfinder and builds", {set_variable("CUDA_PATH", root)}};
    if (const auto home = env.non_empty("CUDA_HOME"); home && fs::lexically_normal(*home) != root) {
      plan.actions.push_back(set_variable("CUDA_HOME", root));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

void check_not_on_search_path(const ComponentResult& result, const Environment& env,
                              std::vector<Finding>& out) {
  // Static and bitcode libraries have no loader answer; a toolkit's libdevice or libcudadevrt.a
  // that only a system-toolkit listing sees is listed as a candidate, not a finding.
  const auto kind = result.spec->kind;
  if (result.status != discovery::ComponentStatus::not_found || kind == probes::ComponentKind::static_lib ||
      kind == probes::ComponentKind::bitcode_lib) {
    return;
  }
  for (const auto& candidate : result.candidates) {
    // A copy vendored in a framework wheel (torch/lib) is that framework's own: no search path
    // is meant to reach it.
    if (candidate.usable() && !candidate.is_stub && candidate.first.found_via != "vendored") {
      auto finding = make("lib.not_on_search_path",
                          component_label(result) + " exists at " + candidate.first.path +
                              " but neither cuda-pathfinder nor the native loader would find it",
                          {std::string(result.spec->name)}, {{"path", candidate.first.path}});
      if (result.spec->kind == probes::ComponentKind::headers) {
        finding.remedy = "If you need them, pass -I" + candidate.first.path +
                         " to the compiler (headers are not loaded: no library search path applies).";
      }
      set_plans(finding, reach_plans(result, candidate, env));
      out.push_back(std::move(finding));
      return;
    }
  }
}

void check_cuda_path_home(const Environment& env, std::vector<Finding>& out) {
  const auto cuda_path = env.non_empty("CUDA_PATH");
  const auto cuda_home = env.non_empty("CUDA_HOME");
  if (!cuda_path || !cuda_home) {
    return;
  }
  // One cause, one finding: a variable naming no directory is env.bad_search_path's.
  if (!fs::is_directory(*cuda_path) || !fs::is_directory(*cuda_home)) {
    return;
  }
  const auto a = fs::file_id(*cuda_path);
  const auto b = fs::file_id(*cuda_home);
  const bool same =
      (a && b) ? *a == *b : fs::lexically_normal(*cuda_path) == fs::lexically_normal(*cuda_home);
  if (!same) {
    auto finding =
        make("env.cuda_path_home_differ",
             "CUDA_PATH=" + *cuda_path + " and CUDA_HOME=" + *cuda_home + " name different directories", {},
             {{"CUDA_PATH", *cuda_path}, {"CUDA_HOME", *cuda_home}});
    // CUDA_PATH is what cuda-pathfinder uses: CUDA_HOME following it changes nothing CUDA Python loads.
    set_plans(finding,
              {{"make builds use the root CUDA Python uses", {set_variable("CUDA_HOME", *cuda_path)}},
               {"make CUDA Python use the root builds use", {set_variable("CUDA_PATH", *cuda_home)}}});
    out.push_back(std::move(finding));
  }
}

// The remedy for a variable that names a missing, relative or non-directory root.
std::string variable_remedy(std::string_view variable) {
  if (variable == "CUDA_PATH" || variable == "CUDA_HOME") {
    return "Unset " + std::string(variable) +
           " or point it at an installed toolkit root (the directory holding bin/, "
           "include/ and lib64/); look for the export in your shell profile, module file or job script.";
  }
  if (variable == "CONDA_PREFIX") {
    return "Activate an existing environment with `conda activate` (it sets CONDA_PREFIX), or unset "
           "CONDA_PREFIX.";
  }
  if (variable == "VIRTUAL_ENV") {
    return "Activate an existing venv (`source <venv>/bin/activate`), or unset VIRTUAL_ENV.";
  }
  return "Unset " + std::string(variable) + " or point it at the product's installation root.";
}

// A search path entry as a message shows it: an empty one as `""` with its position (`entry 2: ""`),
// which a reader would otherwise not see at all.
std::string shown_entry(const std::string& entry, std::size_t index) {
  return entry.empty() ? "entry " + std::to_string(index + 1) + ": \"\"" : entry;
}

void check_search_path_entries(const Environment& env, std::vector<Finding>& out) {
  if (const auto value = env.get("LD_LIBRARY_PATH"); value && !value->empty()) {
    Evidence::List bad = Evidence::List();
    std::string first; // the first bad entry and its problem, as the message shows them
    std::size_t index = 0;
    for (const auto& entry : split_search_path(*value)) {
      std::string problem;
      if (entry.empty()) {
        problem = "empty (the loader searches the current directory)";
      } else if (entry.front() != '/') {
        problem = "relative (resolved against the current directory)";
      } else if (!fs::is_directory(entry)) {
        problem = fs::exists(entry) ? "not a directory" : "does not exist";
      }
      if (!problem.empty() && bad.empty()) {
        first = shown_entry(entry, index) + " — " + problem;
      }
      if (!problem.empty() && bad.size() < 20) {
        bad.push_back({{"index", index}, {"entry", entry}, {"problem", problem}});
      }
      ++index;
    }
    if (!bad.empty()) {
      std::vector<Action> removals;
      for (const auto& item : bad) {
        if (const auto* record = item.record(); record != nullptr && record->string("entry") != nullptr) {
          removals.push_back(remove_path_entry("LD_LIBRARY_PATH", *record->string("entry")));
        }
      }
      out.push_back(make("env.bad_search_path",
                         "LD_LIBRARY_PATH has " + std::to_string(bad.size()) + (bad.size() == 20 ? "+" : "") +
                             " bad entr" + (bad.size() == 1 ? "y" : "ies") + ", first: " + first,
                         {}, {{"variable", "LD_LIBRARY_PATH"}, {"entries", bad}}));
      if (bad.size() < 20) {
        set_plans(out.back(), {{"remove the bad entries", std::move(removals)}});
      }
    }
  }
  if (const auto conda = env.get("CONDA_PREFIX"); conda && conda->empty()) {
    auto finding =
        make("env.bad_search_path",
             "CONDA_PREFIX is set but empty: cuda-pathfinder's binary search then looks in the relative "
             "directory bin/ of the working directory (" +
                 fs::join(env.cwd, "bin") + ")",
             {}, {{"variable", "CONDA_PREFIX"}, {"value", ""}, {"problem", "empty"}});
    finding.remedy =
        "Unset CONDA_PREFIX (`conda deactivate`, or `unset CONDA_PREFIX`), or activate an environment.";
    out.push_back(std::move(finding));
  }
  for (const auto* variable :
       {"CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "VIRTUAL_ENV", "CUDNN_PATH", "NCCL_HOME"}) {
    const auto value = env.get(variable);
    if (!value || value->empty()) {
      continue;
    }
    std::string problem;
    if (value->front() != '/') {
      problem = "is relative";
    } else if (!fs::is_directory(*value)) {
      problem = fs::exists(*value) ? "is not a directory" : "does not exist";
    }
    if (!problem.empty()) {
      auto finding = make("env.bad_search_path", std::string(variable) + "=" + *value + " " + problem, {},
                          {{"variable", variable}, {"value", *value}, {"problem", problem}});
      finding.remedy = variable_remedy(variable);
      if (std::string_view(variable) != "CONDA_PREFIX" && std::string_view(variable) != "VIRTUAL_ENV") {
        set_plans(finding, {{"stop naming a root that is no usable directory", {unset_variable(variable)}}});
      }
      out.push_back(std::move(finding));
    }
  }
}

void check_world_writable(const discovery::DiscoveryResult& result, std::vector<Finding>& out) {
  std::set<std::string> checked; // each directory once: most libraries come from the same few
  for (const auto& component : result.components) {
    for (const auto* choice : {&component.selected, &component.loader}) {
      if (!*choice || component.spec->kind != probes::ComponentKind::dynamic_lib) {
        continue;
      }
      const auto& dir = (*choice)->via.search_dir;
      if (checked.insert(dir).second && fs::is_world_writable(dir)) {
        out.push_back(make("path.world_writable",
                           dir + " (where " + std::string(component.spec->name) +
                               " is loaded from) is writable by every user",
                           {std::string(component.spec->name)}, {{"directory", dir}}));
      }
    }
  }
}

void check_virtual_env(const discovery::DiscoveryResult& result, std::vector<Finding>& out) {
  const auto& inactive = result.python.virtual_env_inactive;
  if (!inactive) {
    return;
  }
  out.push_back(make("python.virtual_env_inactive",
                     "VIRTUAL_ENV=" + inactive->virtual_env + ", but python3 on PATH runs " +
                         inactive->interpreter + " (sys.prefix " + inactive->prefix +
                         "); the venv's packages are not what CUDA Python loads",
                     {},
                     {{"virtual_env", inactive->virtual_env},
                      {"python3", inactive->interpreter},
                      {"python3_prefix", inactive->prefix},
                      {"how", inactive->how}}));
}

// python.requirement_unmet: one finding per framework requirement the primary environment breaks.
// Its severity follows what the framework does with the installed release at run time
// (framework_needs.hpp): an `==` pin whose off-pin release the framework's own check accepts is info.
void check_framework_requirements(const discovery::DiscoveryResult& result, const Environment& env,
                                  std::vector<Finding>& out) {
  const auto interpreter = primary_python(result);
  // The severity an unmet pin deserves: the framework's own run-time rule, else the pin's.
  const auto severity_of = [&](const python::FrameworkRequirement& unmet) {
    const auto judged = judge_unmet_pin(unmet, env);
    // A requirement only an extra asks for is optional: a warning when it is missing.
    const bool optional = unmet.through_extra.has_value() && !unmet.installed;
    return judged ? judged->severity : optional ? Severity::warning : Severity::error;
  };
  const auto asked_by = [](const python::FrameworkRequirement& pin) {
    return pin.framework + " " + pin.framework_version + " requires " + pin.dependency + pin.specifier +
           (pin.through_extra ? " (through its extra [" + *pin.through_extra + "])" : "");
  };
  // Two frameworks' pins no release satisfies: one cause, whose unmet side is folded into it.
  std::set<const python::FrameworkRequirement*> in_conflict;
  for (const auto& conflict : pin_conflicts(result.framework_requirements)) {
    const auto& first = *conflict.first;
    const auto& second = *conflict.second;
    in_conflict.insert(conflict.first);
    in_conflict.insert(conflict.second);
    Severity severity = Severity::warning; // one pip resolution away from breaking one of the two
    std::string state = first.installed ? "; " + *first.installed + " is installed" : "; it is not installed";
    for (const auto* side : {&first, &second}) {
      if (side->met) {
        state += ", which meets " + side->framework + "'s pin";
        continue;
      }
      const auto judged = judge_unmet_pin(*side, env);
      state += judged ? judged->why : ", which breaks " + side->framework + "'s pin";
      severity = std::max(severity, severity_of(*side));
    }
    std::vector<std::string> overlap;
    for (const auto& [framework, other] : {std::pair(&first, &second), std::pair(&second, &first)}) {
      for (auto& release :
           releases_whose_pin_fits(framework->framework, framework->dependency, other->specifier)) {
        overlap.push_back(std::move(release) + ", which " + other->framework + " " +
                          other->framework_version + "'s pin allows");
      }
    }
    auto finding = make("python.requirements_conflict",
                        asked_by(first) + " and " + asked_by(second) + ": no release of " + first.dependency +
                            " satisfies both, so the two cannot share this environment (each remedy of one "
                            "breaks the other)" +
                            state,
                        {},
                        {{"dependency", first.dependency},
                         {"frameworks", Evidence::List{first.framework + " " + first.framework_version,
                                                       second.framework + " " + second.framework_version}},
                         {"requirements", Evidence::List{first.requirement, second.requirement}},
                         {"installed", first.installed},
                         {"releases_that_fit", overlap}},
                        severity);
    finding.remedy =
        "Give each framework its own environment (`python3 -m venv`, one for " + first.framework +
        ", one for " + second.framework + ")" +
        (overlap.empty()
             ? std::string(", or install releases of the two whose pins on ") + first.dependency + " overlap"
             : "; or, in one environment, releases whose pins overlap: " + join(overlap, "; ")) +
        ".";
    out.push_back(std::move(finding));
  }
  for (const auto& unmet : result.framework_requirements) {
    if (unmet.met || in_conflict.count(&unmet) != 0) {
      continue;
    }
    const std::string seen = unmet.installed
                                 ? "; " + *unmet.installed + " is installed (" + unmet.installed_at + ")"
                                 : "; it is not installed";
    const auto judged = judge_unmet_pin(unmet, env);
    const std::string wanted = unmet.dependency + unmet.specifier;
    auto finding = make("python.requirement_unmet", asked_by(unmet) + seen + (judged ? judged->why : ""), {},
                        {{"framework", unmet.framework},
                         {"framework_version", unmet.framework_version},
                         {"requirement", unmet.requirement},
                         {"dependency", unmet.dependency},
                         {"specifier", unmet.specifier},
                         {"installed", unmet.installed},
                         {"installed_at", unmet.installed_at},
                         {"extra", unmet.through_extra},
                         {"runtime_rule", judged ? std::optional(judged->rule) : std::nullopt}},
                        severity_of(unmet));
    finding.remedy = interpreter + " -m pip install '" + wanted + "' restores what " + unmet.framework +
                     " was built against; or install the " + unmet.framework +
                     " release that matches the CUDA distributions you want.";
    out.push_back(std::move(finding));
  }
}

// A lib.release_mismatch is the cause of the generic findings its pair raises: the pair's
// lib.python_native_differ and the lib.undefined_symbol between its two files (one of them needs
// it; the other is bound, or for an unversioned symbol the same load binds no definition) go into it.
void fold_into_release_mismatch(std::vector<Finding>& found) {
  const auto list_of = [](const Finding& finding, std::string_view name) {
    std::vector<std::string> items;
    if (const auto* value = finding.evidence.find(name); value != nullptr && value->list() != nullptr) {
      for (const auto& item : *value->list()) {
        if (const auto* text = item.string()) {
          items.push_back(*text);
        }
      }
    }
    return items;
  };
  const auto real = [](const std::string& path) {
    const auto resolved = fs::real_path(path);
    return resolved ? *resolved : path;
  };
  std::vector<Finding> kept;
  std::vector<std::size_t> mismatches;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i].id == "lib.release_mismatch") {
      mismatches.push_back(i);
    }
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    auto& finding = found[i];
    Finding* owner = nullptr;
    for (const auto index : mismatches) {
      const auto pair = list_of(found[index], "pair");
      std::vector<std::string> paths;
      for (const auto& path : list_of(found[index], "paths")) {
        paths.push_back(real(path));
      }
      const auto in = [](const std::vector<std::string>& list, const std::string& item) {
        return std::find(list.begin(), list.end(), item) != list.end();
      };
      const bool differ = finding.id == "lib.python_native_differ" && finding.components.size() == 1 &&
                          in(pair, finding.components.front());
      // The symbol one of the pair needs, which the other (or, for an unversioned symbol, nothing
      // in that same load) defines.
      const auto* needed_by = finding.evidence.string("needed_by");
      const auto* bound = finding.evidence.string("bound");
      const auto answers = list_of(finding, "answers");
      const auto owner_answers = list_of(found[index], "answers");
      const bool same_load = std::any_of(answers.begin(), answers.end(), [&](const std::string& answer) {
        return in(owner_answers, answer);
      });
      const bool symbol = finding.id == "lib.undefined_symbol" && needed_by != nullptr &&
                          in(paths, real(*needed_by)) &&
                          (bound != nullptr ? in(paths, real(*bound)) : same_load);
      if (differ || symbol) {
        owner = &found[index];
        break;
      }
    }
    if (owner == nullptr) {
      continue;
    }
    owner->evidence["folded"].push_back(finding.id);
    if (finding.severity == Severity::error) {
      owner->severity = Severity::error; // the load itself fails: folding never lowers a severity
    }
    if (finding.id == "lib.undefined_symbol") {
      owner->message += " Here the load fails: " + finding.message;
    }
    finding.id.clear(); // folded: removed below
  }
  for (auto& finding : found) {
    if (!finding.id.empty()) {
      kept.push_back(std::move(finding));
    }
  }
  found = std::move(kept);
}

} // namespace

void merge_shared_causes(std::vector<Finding>& found) {
  const auto path_of = [](const Finding& finding) -> std::string {
    const auto* path = finding.evidence.string("path");
    if (path == nullptr) {
      return {};
    }
    const auto real = fs::real_path(*path);
    return real ? *real : *path;
  };
  std::vector<Finding> kept;
  for (auto& finding : found) {
    const bool broken_dependency =
        finding.id == "lib.missing_dependency" && finding.evidence.contains("error");
    const auto cause = broken_dependency ? path_of(finding) : std::string();
    auto owner = std::find_if(kept.begin(), kept.end(), [&](const Finding& other) {
      return !cause.empty() &&
             (other.id == "lib.unusable_candidate" || other.id == "lib.wrong_arch" ||
              other.id == "lib.loader_blocked") &&
             path_of(other) == cause;
    });
    if (owner == kept.end()) {
      kept.push_back(std::move(finding));
      continue;
    }
    for (const auto& component : finding.components) {
      if (std::find(owner->components.begin(), owner->components.end(), component) ==
          owner->components.end()) {
        owner->components.push_back(component);
        owner->message += "; " + component + "'s closure reaches it too";
      }
    }
  }
  found = std::move(kept);
  fold_into_release_mismatch(found);
}

std::vector<Finding> evaluate_discovery(const discovery::DiscoveryResult& result, const Environment& env) {
  std::vector<Finding> out;
  check_cuda_path_home(env, out);
  check_search_path_entries(env, out);
  check_virtual_env(result, out);
  check_framework_requirements(result, env, out);
  check_unusable(result, out);
  check_preloaded(result, out);
  for (const auto& component : result.components) {
    check_driver(component, result, env, out);
    check_python_native_differ(component, result, out);
    check_multiple_versions(component, out);
    check_not_on_search_path(component, env, out);
  }
  check_world_writable(result, out);
  for (auto& finding : evaluate_variable_roots(result, env)) {
    out.push_back(std::move(finding));
  }
  for (auto& finding : evaluate_records(result)) {
    out.push_back(std::move(finding));
  }
  return out;
}

} // namespace cudadiag::findings
