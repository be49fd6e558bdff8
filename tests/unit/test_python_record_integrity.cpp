// RECORD integrity: library files of the CUDA distributions against their dist-info RECORDs — two
// claimants of one file, a size or digest that differs, a missing file, and what is not checked.
#include "core/sha256.hpp"
#include "python/distributions.hpp"
#include "python/record_integrity.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::python::check_records;
using cudadiag::python::installed_distributions;
using cudadiag::python::is_library_file_name;
using cudadiag::python::record_checked;

namespace {

// A dist-info with METADATA and a RECORD of `lines` under `site`.
void record_dist(const cudadiag::testing::TempTree& tree, const std::string& stem, const std::string& name,
                 const std::string& version, const std::string& lines) {
  tree.write("site/" + stem + "-" + version + ".dist-info/METADATA",
             "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
  tree.write("site/" + stem + "-" + version + ".dist-info/RECORD", lines);
}

std::string record_of(const std::string& relative, const std::string& content) {
  return relative + ",sha256=" + cudadiag::sha256_record(cudadiag::sha256(content)) + "," +
         std::to_string(content.size()) + "\n";
}

} // namespace

TEST_CASE("record integrity: which files and distributions are checked") {
  CHECK(is_library_file_name("libnccl.so.2"));
  CHECK(is_library_file_name("libcudart.so"));
  CHECK(is_library_file_name("libnvrtc-builtins.so.13.0"));
  CHECK(is_library_file_name("_C.cpython-311-x86_64-linux-gnu.so"));
  CHECK_FALSE(is_library_file_name("nccl.h"));
  CHECK_FALSE(is_library_file_name("libfoo.so.py"));
  CHECK_FALSE(is_library_file_name("x.socket"));
  CHECK_FALSE(is_library_file_name(".so"));
  CHECK(record_checked("nvidia-nccl-cu12"));
  CHECK(record_checked("cuda-toolkit"));
  CHECK(record_checked("torch"));
  CHECK_FALSE(record_checked("numpy"));
}

TEST_CASE("record integrity: two distributions claiming one file, the one on disk matching one of them") {
  cudadiag::testing::TempTree tree;
  const std::string cu11 = "nccl 2.14.3";
  tree.write("site/nvidia/nccl/lib/libnccl.so.2", cu11);
  record_dist(tree, "nvidia_nccl_cu11", "nvidia-nccl-cu11", "2.14.3",
              record_of("nvidia/nccl/lib/libnccl.so.2", cu11) + "nvidia/nccl/include/nccl.h,sha256=x,10\n" +
                  "nvidia_nccl_cu11-2.14.3.dist-info/RECORD,,\n");
  record_dist(tree, "nvidia_nccl_cu12", "nvidia-nccl-cu12", "2.27.3",
              "nvidia/nccl/lib/libnccl.so.2,sha256=H8Nu68hPSxCSPu4hU47Y-iVyVkfQb0hAvA_jmabtm8Q,429634192\n");
  record_dist(tree, "numpy", "numpy", "2.3.0", "numpy/core/_multiarray.cpython-311-x86_64-linux-gnu.so,,5\n");
  const auto installed = installed_distributions({tree.path("site")});

  const auto sizes = check_records(installed, false);
  CHECK(sizes.distributions == 2); // numpy's RECORD is not read
  CHECK(sizes.files == 1);         // the header is not a library
  REQUIRE(sizes.shared.size() == 1);
  CHECK(sizes.differing.empty());
  const auto& file = sizes.shared.front();
  CHECK(file.relative == "nvidia/nccl/lib/libnccl.so.2");
  CHECK(file.path == tree.path("site/nvidia/nccl/lib/libnccl.so.2"));
  REQUIRE(file.claims.size() == 2);
  CHECK(file.claims[0].distribution == "nvidia-nccl-cu11");
  CHECK(file.claims[0].matches());
  CHECK_FALSE(file.claims[0].hash_matches.has_value()); // not hashed by default
  CHECK(file.claims[1].distribution == "nvidia-nccl-cu12");
  CHECK_FALSE(file.claims[1].matches());
  CHECK(file.sha256.empty());

  const auto hashed = check_records(installed, true);
  REQUIRE(hashed.shared.size() == 1);
  CHECK(hashed.shared.front().claims[0].hash_matches == std::optional<bool>(true));
  CHECK(hashed.shared.front().claims[1].hash_matches == std::optional<bool>(false));
}

TEST_CASE("record integrity: one claimant's file of another size, of another content, or missing") {
  cudadiag::testing::TempTree tree;
  tree.write("site/nvidia/cu13/lib/libnvrtc.so.13", "a hand-copied build");
  tree.write("site/nvidia/cu13/lib/libnvJitLink.so.13", "same size X");
  record_dist(tree, "nvidia_cuda_nvrtc", "nvidia-cuda-nvrtc", "13.0.88",
              record_of("nvidia/cu13/lib/libnvrtc.so.13", "the wheel's own file") +
                  record_of("nvidia/cu13/lib/libnvrtc-builtins.so.13.0", "builtins"));
  record_dist(tree, "nvidia_nvjitlink", "nvidia-nvjitlink", "13.0.88",
              record_of("nvidia/cu13/lib/libnvJitLink.so.13", "same size Y"));
  record_dist(tree, "nvidia_cuda_cccl", "nvidia-cuda-cccl", "13.0.85", "nvidia/cu13/lib/libcccl.so.13,,\n");
  const auto installed = installed_distributions({tree.path("site")});

  // Sizes only: the nvrtc file is another size and the builtins are missing; the nvJitLink file of
  // the same size passes; a RECORD line without size or digest says nothing of an existing file.
  const auto sizes = check_records(installed, false);
  CHECK(sizes.shared.empty());
  REQUIRE(sizes.differing.size() == 3);
  CHECK(sizes.differing[0].relative == "nvidia/cu13/lib/libcccl.so.13"); // listed, and missing
  CHECK_FALSE(sizes.differing[0].size.has_value());
  CHECK(sizes.differing[1].relative == "nvidia/cu13/lib/libnvrtc.so.13");
  CHECK(sizes.differing[1].size == std::optional<std::uint64_t>(19));
  CHECK(sizes.differing[2].relative == "nvidia/cu13/lib/libnvrtc-builtins.so.13.0");
  CHECK_FALSE(sizes.differing[2].size.has_value());

  // With digests, the same-size file of other content differs too.
  const auto hashed = check_records(installed, true);
  REQUIRE(hashed.differing.size() == 4);
  CHECK(hashed.differing[3].relative == "nvidia/cu13/lib/libnvJitLink.so.13");
  CHECK(hashed.differing[3].claims.front().size_matches);
  CHECK(hashed.differing[3].claims.front().hash_matches == std::optional<bool>(false));

  // Unless conda installed it: conda rewrites its prefix inside binaries (same size, other digest).
  tree.write("site/nvidia_nvjitlink-13.0.88.dist-info/INSTALLER", "conda\n");
  const auto conda = check_records(installed_distributions({tree.path("site")}), true);
  REQUIRE(conda.differing.size() == 3);
  CHECK(conda.differing.back().relative == "nvidia/cu13/lib/libnvrtc-builtins.so.13.0");
}
