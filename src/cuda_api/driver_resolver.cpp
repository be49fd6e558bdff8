#include "cuda_api/driver_resolver.hpp"

#include <dlfcn.h>

namespace cudadiag::cuda_api {

DriverResolver::DriverResolver(void* handle, MissingSymbols& missing) : m_handle(handle), m_missing(missing) {
  m_v2 = reinterpret_cast<cu::PfnGetProcAddress>(::dlsym(handle, "cuGetProcAddress_v2"));
  if (m_v2 == nullptr) {
    m_legacy = reinterpret_cast<cu::PfnGetProcAddressLegacy>(::dlsym(handle, "cuGetProcAddress"));
  }
}

const char* DriverResolver::get_proc_address_name() const {
  if (m_v2 != nullptr) {
    return "cuGetProcAddress_v2";
  }
  return m_legacy != nullptr ? "cuGetProcAddress" : nullptr;
}

void* DriverResolver::query(const char* name, int version, cu::CUresult& status) const {
  void* address = nullptr;
  if (m_v2 != nullptr) {
    cu::CUdriverProcAddressQueryResult found = cu::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    status = m_v2(name, &address, version, cu::CU_GET_PROC_ADDRESS_DEFAULT, &found);
    return status == cu::CUDA_SUCCESS && found == cu::CU_GET_PROC_ADDRESS_SUCCESS ? address : nullptr;
  }
  if (m_legacy != nullptr) {
    status = m_legacy(name, &address, version, cu::CU_GET_PROC_ADDRESS_DEFAULT);
    return status == cu::CUDA_SUCCESS ? address : nullptr;
  }
  status = cu::CUDA_ERROR_NOT_FOUND;
  return nullptr;
}

void* DriverResolver::lookup(const char* name, std::initializer_list<int> versions, const char* exported) {
  bool failed = false;
  for (const int version : versions) {
    cu::CUresult status = cu::CUDA_ERROR_NOT_FOUND;
    if (void* address = query(name, version, status); address != nullptr) {
      return address;
    }
    if (status != cu::CUDA_SUCCESS && status != cu::CUDA_ERROR_NOT_FOUND) {
      failed = true;
      if (!m_failure) {
        m_failure = status;
      }
    }
  }
  if (failed && exported != nullptr) {
    if (void* address = ::dlsym(m_handle, exported); address != nullptr) {
      return address;
    }
  }
  m_missing.add(name);
  return nullptr;
}

} // namespace cudadiag::cuda_api
