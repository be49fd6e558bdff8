#pragma once
// The one way cudadiag finds the driver's entry points: cuGetProcAddress_v2 (else the legacy
// cuGetProcAddress) looked up with dlsym, and every other entry point through it by its
// unversioned cuda.h name, for an explicit CUDA ABI version (see driver.hpp). A name the driver
// does not have is recorded in MissingSymbols, never fatal. Nothing here throws but the
// allocations of MissingSymbols.

#include "cuda_api/driver.hpp"
#include "cuda_api/library.hpp"

#include <initializer_list>
#include <optional>

namespace cudadiag::cuda_api {

class DriverResolver {
public:
  // `handle` is a dlopen handle of libcuda (not owned; it must outlive the resolver).
  DriverResolver(void* handle, MissingSymbols& missing);

  // Whether the driver exports either cuGetProcAddress (false: older than CUDA 11.3, or not a driver).
  [[nodiscard]] bool usable() const { return m_v2 != nullptr || m_legacy != nullptr; }
  // The name of the cuGetProcAddress in use: "cuGetProcAddress_v2", "cuGetProcAddress" or nullptr.
  [[nodiscard]] const char* get_proc_address_name() const;

  // Resolves `name` for the first of `versions` the driver has it for; records it as missing and
  // returns nullptr otherwise. When cuGetProcAddress itself fails (not "not found": the toolkit's
  // stub answers CUDA_ERROR_STUB_LIBRARY to every name) and `exported` is given, that exported
  // symbol (the versioned name with Fn's prototype) is looked up with dlsym instead, so that a
  // stub's cuInit can still say what it is.
  template <class Fn>
  Fn resolve(const char* name, std::initializer_list<int> versions = {cu::k_proc_address_base_version},
             const char* exported = nullptr) {
    return reinterpret_cast<Fn>(lookup(name, versions, exported));
  }
  template <class Fn>
  void resolve(Fn& slot, const char* name,
               std::initializer_list<int> versions = {cu::k_proc_address_base_version},
               const char* exported = nullptr) {
    slot = resolve<Fn>(name, versions, exported);
  }

  // The first error cuGetProcAddress returned for itself (not for a name it does not know).
  [[nodiscard]] std::optional<cu::CUresult> failure() const { return m_failure; }

private:
  void* lookup(const char* name, std::initializer_list<int> versions, const char* exported);
  void* query(const char* name, int version, cu::CUresult& status) const;

  void* m_handle;
  MissingSymbols& m_missing;
  cu::PfnGetProcAddress m_v2 = nullptr;
  cu::PfnGetProcAddressLegacy m_legacy = nullptr;
  std::optional<cu::CUresult> m_failure;
};

} // namespace cudadiag::cuda_api
