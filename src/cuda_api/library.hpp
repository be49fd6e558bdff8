#pragma once
// A dlopen handle that closes itself, typed symbol lookup with dlsym (every library but the
// driver, whose entry points come from cuGetProcAddress: driver_resolver.hpp), and the one record of
// absent symbols. Every dlopen'd API goes through function-pointer types that mirror the real
// header's prototypes (the tests check each mirror against the header with abi_compatible() when
// the header is available); a symbol that is absent is recorded by name, never fatal. Nothing here
// throws but the allocations of MissingSymbols.

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudadiag::cuda_api {

class DlHandle {
public:
  DlHandle() = default;
  // dlopens exactly `path` (an absolute path, or a bare name for the loader to search) with
  // `flags`; on failure loaded() is false and error() holds dlerror()'s text.
  explicit DlHandle(const std::string& path, int flags = RTLD_NOW | RTLD_LOCAL) {
    ::dlerror();
    m_handle = ::dlopen(path.c_str(), flags);
    if (m_handle == nullptr) {
      const char* text = ::dlerror();
      m_error = text != nullptr ? text : "dlopen failed";
    }
  }
  ~DlHandle() { close(); }
  DlHandle(const DlHandle&) = delete;
  DlHandle& operator=(const DlHandle&) = delete;
  DlHandle(DlHandle&& other) noexcept
      : m_handle(std::exchange(other.m_handle, nullptr)), m_error(std::move(other.m_error)) {}
  DlHandle& operator=(DlHandle&& other) noexcept {
    if (this != &other) {
      close();
      m_handle = std::exchange(other.m_handle, nullptr);
      m_error = std::move(other.m_error);
    }
    return *this;
  }

  [[nodiscard]] bool loaded() const { return m_handle != nullptr; }
  // dlerror()'s text when the dlopen failed; empty when loaded.
  [[nodiscard]] const std::string& error() const { return m_error; }
  [[nodiscard]] void* native() const { return m_handle; }

  // The address of `name` as the function-pointer type `Fn`, or nullptr when absent (or not loaded).
  template <class Fn> [[nodiscard]] Fn symbol(const char* name) const {
    static_assert(std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>,
                  "symbol<Fn>: Fn must be a function-pointer type");
    if (m_handle == nullptr) {
      return nullptr;
    }
    return reinterpret_cast<Fn>(::dlsym(m_handle, name));
  }

  // Gives up ownership without dlclose: for libraries whose unloading is riskier than leaking
  // them (the runtime, which may have loaded and initialised the driver).
  void release() { m_handle = nullptr; }

  // The absolute path the loader mapped for this handle (dlinfo RTLD_DI_LINKMAP), or empty.
  [[nodiscard]] std::string mapped_path() const;

private:
  void close() {
    if (m_handle != nullptr) {
      ::dlclose(m_handle);
      m_handle = nullptr;
    }
  }
  void* m_handle = nullptr;
  std::string m_error;
};

// The entry points a library lacks, by the name they were looked up under, in lookup order.
class MissingSymbols {
public:
  void add(std::string name) { m_names.push_back(std::move(name)); }
  void clear() { m_names.clear(); }
  [[nodiscard]] bool empty() const { return m_names.empty(); }
  // In the order they were recorded (duplicates kept).
  [[nodiscard]] const std::vector<std::string>& names() const { return m_names; }
  // Sorted, without duplicates.
  [[nodiscard]] std::vector<std::string> sorted() const {
    std::vector<std::string> names = m_names;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

private:
  std::vector<std::string> m_names;
};

// Resolves symbols from one handle with dlsym, recording every absent one in `missing`.
class SymbolResolver {
public:
  SymbolResolver(const DlHandle& handle, MissingSymbols& missing) : m_handle(handle), m_missing(missing) {}

  // The symbol, or nullptr (and `name` recorded as missing).
  template <class Fn> Fn require(const char* name) const {
    Fn fn = m_handle.template symbol<Fn>(name);
    if (fn == nullptr) {
      m_missing.add(name);
    }
    return fn;
  }

private:
  const DlHandle& m_handle;
  MissingSymbols& m_missing;
};

inline std::string DlHandle::mapped_path() const {
  if (m_handle == nullptr) {
    return {};
  }
  link_map* map = nullptr;
  if (::dlinfo(m_handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    return {};
  }
  const char* name = map->l_name;
  return name != nullptr ? std::string(name) : std::string();
}

// --- Checking a mirrored prototype against the real header (compile time, for the tests) ---

namespace detail {
template <class T>
concept complete_type = requires {
  sizeof(T);
};

template <class Mirror, class Real> consteval bool abi_compatible_value() {
  if constexpr (std::is_same_v<Mirror, Real>) {
    return true;
  } else if constexpr ((std::is_integral_v<Mirror> || std::is_enum_v<Mirror>)&&(std::is_integral_v<Real> ||
                                                                                std::is_enum_v<Real>)) {
    // An enum travels as its underlying integer: only its size matters to the calling convention.
    return sizeof(Mirror) == sizeof(Real) && alignof(Mirror) == alignof(Real);
  } else if constexpr (std::is_pointer_v<Mirror> && std::is_pointer_v<Real>) {
    using M = std::remove_pointer_t<Mirror>;
    using R = std::remove_pointer_t<Real>;
    if constexpr (std::is_const_v<M> != std::is_const_v<R>) {
      return false;
    } else if constexpr (std::is_class_v<M> && std::is_class_v<R>) {
      // Opaque handles (both incomplete) match; complete structs must agree in size and alignment
      // (their member offsets are checked separately).
      if constexpr (!complete_type<M> && !complete_type<R>) {
        return true;
      } else if constexpr (complete_type<M> && complete_type<R>) {
        return sizeof(M) == sizeof(R) && alignof(M) == alignof(R);
      } else {
        return false;
      }
    } else {
      return abi_compatible_value<std::remove_cv_t<M>, std::remove_cv_t<R>>();
    }
  } else {
    return false;
  }
}

template <class Mirror, class Real> struct AbiCompatible : std::false_type {};
template <class MR, class... MA, class RR, class... RA>
requires(sizeof...(MA) == sizeof...(RA)) struct AbiCompatible<MR (*)(MA...), RR (*)(RA...)>
    : std::bool_constant<abi_compatible_value<MR, RR>() && (abi_compatible_value<MA, RA>() && ...)> {
};
} // namespace detail

// Whether the function-pointer type `Mirror` (ours) can call a function declared as `Real` (the
// header's): same arity; each return and parameter type identical, or integers/enums of one size,
// or pointers to such, or pointers to opaque structs, or to complete structs of one size.
template <class Mirror, class Real> consteval bool abi_compatible() {
  return detail::AbiCompatible<Mirror, Real>::value;
}

} // namespace cudadiag::cuda_api
