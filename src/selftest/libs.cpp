#include "selftest/libs.hpp"

#include "probes/catalog.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

namespace cudadiag::selftest::libs {
namespace {

void add_in_load_order(std::string_view name, std::vector<std::string>& order, int depth) {
  if (depth > 8 || std::find(order.begin(), order.end(), name) != order.end()) {
    return;
  }
  if (const auto* spec = probes::find_component(name, probes::ComponentKind::dynamic_lib)) {
    for (const auto dependency : spec->dependencies) {
      add_in_load_order(dependency, order, depth + 1);
    }
  }
  order.emplace_back(name);
}

} // namespace

std::vector<std::string> load_order(std::string_view library) {
  std::vector<std::string> order;
  add_in_load_order(library, order, 0);
  return order;
}

std::vector<std::string> components_needed() {
  std::vector<std::string> names;
  for (const auto library : k_libraries) {
    for (auto& name : load_order(library)) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
    }
  }
  return names;
}

std::string_view to_string(LibraryStatus status) {
  switch (status) {
  case LibraryStatus::ok: return "ok";
  case LibraryStatus::skip: return "skip";
  case LibraryStatus::fail: return "fail";
  }
  return "fail";
}

std::optional<LibraryStatus> parse_library_status(std::string_view text) {
  for (const auto status : {LibraryStatus::ok, LibraryStatus::skip, LibraryStatus::fail}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

Verdict verdict(const std::vector<Outcome>& outcomes) {
  std::string failures;
  std::string skips;
  bool ran = false;
  for (const auto& outcome : outcomes) {
    if (outcome.status == LibraryStatus::fail) {
      failures += (failures.empty() ? "" : "; ") + outcome.library + ": " + outcome.reason;
    } else if (outcome.status == LibraryStatus::skip) {
      skips += (skips.empty() ? "" : "; ") + outcome.library + ": " + outcome.reason;
    } else {
      ran = true;
    }
  }
  if (!failures.empty()) {
    return {TestStatus::fail, failures};
  }
  if (ran) {
    return {TestStatus::pass, ""};
  }
  return {TestStatus::skip,
          skips.empty() ? std::string("no math library to call") : "no math library ran (" + skips + ")"};
}

std::uint16_t bf16_from_float(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value)) {
    return static_cast<std::uint16_t>((bits >> 16U) | 0x40U);
  }
  const std::uint32_t rounding = 0x7FFFU + ((bits >> 16U) & 1U);
  return static_cast<std::uint16_t>((bits + rounding) >> 16U);
}

float float_from_bf16(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16U;
  float value = 0;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

std::vector<float> uniform_values(std::size_t count, std::uint64_t seed) {
  std::vector<float> values(count);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& value : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // The top 24 bits: a multiple of 2^-23 in [-1, 1), exact in float.
    value = static_cast<float>(static_cast<double>(state >> 40U) / 8388608.0 - 1.0);
  }
  return values;
}

std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                                   int k, std::vector<double>* bound) {
  const auto mm = static_cast<std::size_t>(m);
  const auto kk = static_cast<std::size_t>(k);
  std::vector<double> c(mm * static_cast<std::size_t>(n), 0.0);
  if (bound != nullptr) {
    bound->assign(c.size(), 0.0);
  }
  for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
    for (std::size_t p = 0; p < kk; ++p) {
      const double bv = b[p + j * kk];
      for (std::size_t i = 0; i < mm; ++i) {
        const double av = a[i + p * mm];
        c[i + j * mm] += av * bv;
        if (bound != nullptr) {
          (*bound)[i + j * mm] += std::fabs(av * bv);
        }
      }
    }
  }
  return c;
}

std::vector<double> cholesky_lower(const std::vector<double>& a, int n) {
  const auto nn = static_cast<std::size_t>(n);
  std::vector<double> l(nn * nn, 0.0);
  for (std::size_t j = 0; j < nn; ++j) {
    double diagonal = a[j + j * nn];
    for (std::size_t p = 0; p < j; ++p) {
      diagonal -= l[j + p * nn] * l[j + p * nn];
    }
    if (!(diagonal > 0.0)) {
      return {};
    }
    l[j + j * nn] = std::sqrt(diagonal);
    for (std::size_t i = j + 1; i < nn; ++i) {
      double sum = a[i + j * nn];
      for (std::size_t p = 0; p < j; ++p) {
        sum -= l[i + p * nn] * l[j + p * nn];
      }
      l[i + j * nn] = sum / l[j + j * nn];
    }
  }
  return l;
}

std::vector<double> cross_correlation(const std::vector<float>& image, int h, int w,
                                      const std::vector<float>& filter, int r, int s) {
  const int oh = h - r + 1;
  const int ow = w - s + 1;
  if (oh <= 0 || ow <= 0) {
    return {};
  }
  std::vector<double> out(static_cast<std::size_t>(oh) * static_cast<std::size_t>(ow), 0.0);
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      double sum = 0;
      for (int i = 0; i < r; ++i) {
        for (int j = 0; j < s; ++j) {
          sum += static_cast<double>(image[static_cast<std::size_t>((y + i) * w + x + j)]) *
                 static_cast<double>(filter[static_cast<std::size_t>(i * s + j)]);
        }
      }
      out[static_cast<std::size_t>(y * ow + x)] = sum;
    }
  }
  return out;
}

std::array<double, 2> dft_bin(const std::vector<float>& data, std::size_t k) {
  const std::size_t n = data.size() / 2;
  double re = 0;
  double im = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const double angle = -2.0 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
    const double c = std::cos(angle);
    const double s = std::sin(angle);
    const auto x = static_cast<double>(data[2 * t]);
    const auto y = static_cast<double>(data[2 * t + 1]);
    re += x * c - y * s;
    im += x * s + y * c;
  }
  return {re, im};
}

int bf16_dense_flops_per_clock_per_sm(int cc_major, int cc_minor) {
  // Dense (not 2:4 sparse) BF16 with FP32 accumulation, from NVIDIA's datasheets and SM counts:
  //   A100 SXM:  312 TFLOP/s = 108 SMs x 1410 MHz x 2048
  //   H100/H200 SXM: 989 TFLOP/s (H200 datasheet; 1,979 with sparsity) = 132 SMs x 1830 MHz x 4096
  //   B200:  2.25 PFLOP/s (4.5 with sparsity) ~ 148 SMs x 1855 MHz x 8192
  // The self-test multiplies by the device's SMs and its max SM clock (NVML), which on the H200
  // (1980 MHz) makes 1070 TFLOP/s: the datasheet figure is stated at a lower clock.
  if (cc_major == 8 && cc_minor == 0) {
    return 2048;
  }
  if (cc_major == 9 && cc_minor == 0) {
    return 4096;
  }
  if (cc_major == 10 && cc_minor == 0) {
    return 8192;
  }
  return 0;
}

} // namespace cudadiag::selftest::libs
