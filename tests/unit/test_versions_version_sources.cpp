#include "core/filesystem.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"
#include "versions/version_sources.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using cudadiag::testing::TempTree;
using namespace cudadiag::versions;
using namespace std::string_view_literals;
namespace fs = cudadiag::fs;

namespace {

std::string metadata(std::string_view name, std::string_view version) {
  return "Metadata-Version: 2.4\nName: " + std::string(name) + "\nVersion: " + std::string(version) +
         "\nSummary: test\n\nLong description\nVersion: 99.9\n";
}

// Writes <dir>/<dist_info>/METADATA declaring `version`.
void write_dist_info(const TempTree& tree, std::string_view dir, std::string_view dist_info,
                     std::string_view name, std::string_view version) {
  tree.write(std::string(dir) + "/" + std::string(dist_info) + "/METADATA", metadata(name, version));
}

std::string conda_record(std::string_view name, std::string_view version) {
  return R"({"build": "h4bc722e_0", "files": ["lib/x.so"], "name": ")" + std::string(name) +
         R"(", "version": ")" + std::string(version) + R"("})";
}

} // namespace

TEST_CASE("version source names are the JSON spellings") {
  CHECK(to_string(VersionSource::file_name) == "file_name");
  CHECK(to_string(VersionSource::wheel_metadata) == "wheel_metadata");
  CHECK(to_string(VersionSource::toolkit_version_json) == "toolkit_version_json");
  CHECK(to_string(VersionSource::conda_meta) == "conda_meta");
  CHECK(to_string(VersionSource::header_macro) == "header_macro");
  CHECK(to_string(VersionSource::toolkit_dist_info) == "toolkit_dist_info");
}

TEST_CASE("version_from_file_name reads the suffix beyond the SONAME") {
  CHECK(version_from_file_name("libnvrtc.so.13.0.88", "libnvrtc.so.13") == "13.0.88");
  CHECK(version_from_file_name("libcuda.so.580.95.05", "libcuda.so.1") == "580.95.05");
  CHECK(version_from_file_name("libnvJitLink.so.12.4.127", "libnvJitLink.so.12") == "12.4.127");
  CHECK(version_from_file_name("/usr/lib/libcuda.so.580.95.05", "libcuda.so.1") == "580.95.05");
  CHECK(version_from_file_name("libnvrtc.so.13.0.88", "libnvrtc.so") == "13.0.88");

  SUBCASE("nothing beyond the SONAME") {
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13.0"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.", "libnvrtc.so.13"));
  }
  SUBCASE("another library or not a version") {
    CHECK_FALSE(version_from_file_name("libnvJitLink.so.13.0.88", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.alt.so.13.0.88", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtcx.so.13.0.88", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0.88.bak", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13..0", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0.", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0.88\xff", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0-88", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("", "libnvrtc.so.13"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0.88", "libnvrtc"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13.0.88", ".so"));
    CHECK_FALSE(version_from_file_name("libnvrtc.so." + std::string(100, '1'), "libnvrtc.so.13"));
  }
  SUBCASE("without a SONAME the file's own stem is used, and a lone major is not a version") {
    CHECK(version_from_file_name("libnvrtc.so.13.0.88", "") == "13.0.88");
    CHECK(version_from_file_name("libnvrtc-builtins.so.13.0", "") == "13.0");
    CHECK_FALSE(version_from_file_name("libnvrtc.so.13", ""));
    CHECK_FALSE(version_from_file_name("libnvrtc.so", ""));
    CHECK_FALSE(version_from_file_name("libnvrtc.a", ""));
    CHECK_FALSE(version_from_file_name("", ""));
  }
}

TEST_CASE("version_from_dist_info reads METADATA of the first matching distribution") {
  TempTree tree;
  const auto site = tree.mkdir("site-packages");
  write_dist_info(tree, "site-packages", "nvidia_cuda_nvrtc-13.0.88.dist-info", "nvidia-cuda-nvrtc",
                  "13.0.88");
  write_dist_info(tree, "site-packages", "nvidia_cuda_nvrtc_cu12-12.9.86.dist-info", "nvidia-cuda-nvrtc-cu12",
                  "12.9.86");
  write_dist_info(tree, "site-packages", "nvidia_nvjitlink-13.0.88.dist-info", "nvidia-nvjitlink", "13.0.88");

  SUBCASE("PEP 503 normalisation") {
    for (const std::string_view name : {"nvidia-cuda-nvrtc", "nvidia_cuda_nvrtc", "NVIDIA_CUDA_NVRTC",
                                        "Nvidia.Cuda--Nvrtc", "nvidia-cuda_nvrtc"}) {
      CAPTURE(name);
      const std::string_view names[] = {name};
      const auto found = version_from_dist_info(site, names);
      REQUIRE(found);
      CHECK(found->version == "13.0.88");
      CHECK(found->source == VersionSource::wheel_metadata);
      CHECK(found->evidence == fs::join(site, "nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA"));
    }
  }
  SUBCASE("cu12 names are distinct distributions") {
    const std::string_view cu12[] = {"nvidia-cuda-nvrtc-cu12"};
    const auto found = version_from_dist_info(site, cu12);
    REQUIRE(found);
    CHECK(found->version == "12.9.86");
    const std::string_view prefix_only[] = {"nvidia-cuda"};
    CHECK_FALSE(version_from_dist_info(site, prefix_only));
  }
  SUBCASE("the first name present wins, whatever the directory order") {
    const std::string_view cu13_first[] = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"};
    CHECK(version_from_dist_info(site, cu13_first)->version == "13.0.88");
    const std::string_view cu12_first[] = {"nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc"};
    CHECK(version_from_dist_info(site, cu12_first)->version == "12.9.86");
    const std::string_view absent_first[] = {"nvidia-cuda-nvrtc-cu11", "", "nvidia-nvjitlink"};
    CHECK(version_from_dist_info(site, absent_first)->version == "13.0.88");
  }
  SUBCASE("a folder named dist-info is a toolkit's") {
    write_dist_info(tree, "cuda/dist-info", "nvidia_cuda_nvrtc-13.0.88.dist-info", "nvidia-cuda-nvrtc",
                    "13.0.88");
    const std::string_view names[] = {"nvidia-cuda-nvrtc"};
    const auto found = version_from_dist_info(tree.path("cuda/dist-info"), names);
    REQUIRE(found);
    CHECK(found->source == VersionSource::toolkit_dist_info);
  }
  SUBCASE("nothing to find") {
    const std::string_view names[] = {"nvidia-cublas"};
    CHECK_FALSE(version_from_dist_info(site, names));
    CHECK_FALSE(version_from_dist_info(site, {}));
    CHECK_FALSE(version_from_dist_info(tree.path("missing"), names));
    CHECK_FALSE(version_from_dist_info(tree.write("a-file", "x"), names));
  }
}

TEST_CASE("version_from_dist_info falls back to the directory name's version") {
  TempTree tree;
  const auto site = tree.mkdir("site");
  const std::string_view names[] = {"nvidia-cuda-nvrtc"};
  const auto fallback = [&](std::string_view dist_info) {
    const auto found = version_from_dist_info(site, names);
    REQUIRE(found);
    CHECK(found->version == "13.0.88");
    CHECK(found->evidence.starts_with(fs::join(site, dist_info)));
    CHECK(found->evidence.find("directory name") != std::string::npos);
  };

  SUBCASE("METADATA missing") {
    tree.mkdir("site/nvidia_cuda_nvrtc-13.0.88.dist-info");
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("METADATA unreadable (a directory)") {
    tree.mkdir("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA");
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("METADATA without Version") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA", "Metadata-Version: 2.4\nName: x\n");
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("Version only after the headers end") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA", "Name: x\n\nVersion: 1.0\n");
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("METADATA of binary garbage") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA",
               "\x00\xff\xfe\nVersion: \xc3\x28\x80\n"sv);
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("Version beyond the first 64 KiB") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA",
               "Name: x\nSummary: " + std::string(70 * 1024, 'a') + "\nVersion: 1.0\n");
    fallback("nvidia_cuda_nvrtc-13.0.88.dist-info");
  }
  SUBCASE("no version anywhere") {
    tree.mkdir("site/nvidia_cuda_nvrtc-.dist-info");
    tree.mkdir("site/nvidia_cuda_nvrtc.dist-info");
    tree.mkdir("site/nvidia_cuda_nvrtc-garbage\xff.dist-info");
    CHECK_FALSE(version_from_dist_info(site, names));
  }
  SUBCASE("a dist-info name without a version still has its METADATA read") {
    write_dist_info(tree, "site", "nvidia_cuda_nvrtc-.dist-info", "nvidia-cuda-nvrtc", "13.0.88");
    const auto found = version_from_dist_info(site, names);
    REQUIRE(found);
    CHECK(found->version == "13.0.88");
    CHECK(found->evidence == fs::join(site, "nvidia_cuda_nvrtc-.dist-info/METADATA"));
  }
}

TEST_CASE("version_from_dist_info METADATA parsing details") {
  TempTree tree;
  const auto site = tree.mkdir("site");
  const std::string_view names[] = {"nvidia-cuda-nvrtc"};

  SUBCASE("CRLF line ends and a lower-case header") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA", "Name: x\r\nversion:  13.0.88 \r\n\r\n");
    CHECK(version_from_dist_info(site, names)->version == "13.0.88");
  }
  SUBCASE("METADATA wins over the directory name") {
    write_dist_info(tree, "site", "nvidia_cuda_nvrtc-13.0.88.dist-info", "nvidia-cuda-nvrtc",
                    "13.0.88.post1");
    CHECK(version_from_dist_info(site, names)->version == "13.0.88.post1");
  }
  SUBCASE("two dist-info directories for one name: the newest") {
    write_dist_info(tree, "site", "nvidia_cuda_nvrtc-13.0.9.dist-info", "nvidia-cuda-nvrtc", "13.0.9");
    write_dist_info(tree, "site", "nvidia_cuda_nvrtc-13.0.88.dist-info", "nvidia-cuda-nvrtc", "13.0.88");
    write_dist_info(tree, "site", "nvidia_cuda_nvrtc-12.0.140.dist-info", "nvidia-cuda-nvrtc", "12.0.140");
    CHECK(version_from_dist_info(site, names)->version == "13.0.88");
  }
  SUBCASE("a legacy name with dashes") {
    write_dist_info(tree, "site", "nvidia-cuda-nvrtc-13.0.88.dist-info", "nvidia-cuda-nvrtc", "13.0.88");
    CHECK(version_from_dist_info(site, names)->version == "13.0.88");
  }
  SUBCASE("a file named like a dist-info directory is ignored") {
    tree.write("site/nvidia_cuda_nvrtc-13.0.88.dist-info", "Version: 13.0.88\n");
    CHECK_FALSE(version_from_dist_info(site, names));
  }
}

TEST_CASE("version_from_toolkit_json reads version.json") {
  TempTree tree;
  const auto root = tree.mkdir("cuda-13.0");
  const std::string good = R"({
    "cuda": {"name": "CUDA SDK", "version": "13.0.2"},
    "cuda_nvrtc": {"name": "CUDA NVRTC", "version": "13.0.88"},
    "libnvjitlink": {"name": "JIT LINKER LIBRARY", "version": "13.0.88"},
    "cuda_cccl": {"name": "CUDA C++ Core Compute Libraries", "version": "13.0.85"},
    "nvidia_driver": {"name": "NVIDIA Linux Driver", "version": "580.95.05"}
  })";

  SUBCASE("first key present") {
    tree.write("cuda-13.0/version.json", good);
    const std::string_view nvrtc[] = {"cuda_nvrtc"};
    const auto found = version_from_toolkit_json(root, nvrtc);
    REQUIRE(found);
    CHECK(found->version == "13.0.88");
    CHECK(found->source == VersionSource::toolkit_version_json);
    CHECK(found->evidence == fs::join(root, "version.json"));
    const std::string_view keys[] = {"libnvjitlink_missing", "nvidia_driver", "cuda"};
    CHECK(version_from_toolkit_json(root, keys)->version == "580.95.05");
    const std::string_view absent[] = {"libcublas"};
    CHECK_FALSE(version_from_toolkit_json(root, absent));
    CHECK_FALSE(version_from_toolkit_json(root, {}));
  }
  SUBCASE("entries of the wrong shape are skipped") {
    tree.write(
        "cuda-13.0/version.json",
        R"({"a": "13.0", "b": {"version": 13}, "c": {"version": "\u00ff"}, "d": {"version": "12.9.41"}})");
    const std::string_view keys[] = {"a", "b", "c", "d"};
    CHECK(version_from_toolkit_json(root, keys)->version == "12.9.41");
  }
  const std::string_view keys[] = {"cuda_nvrtc"};
  SUBCASE("missing") {
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("truncated") {
    tree.write("cuda-13.0/version.json", good.substr(0, good.size() / 2));
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("not UTF-8") {
    tree.write("cuda-13.0/version.json",
               "{\"cuda_nvrtc\": {\"version\": \"13.0.88\", \"name\": \"\xff\xfe\"}}");
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("not an object") {
    tree.write("cuda-13.0/version.json", "[\"cuda_nvrtc\"]");
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("empty or binary") {
    tree.write("cuda-13.0/version.json", "\0\0\0"sv);
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("over 1 MiB") {
    tree.write("cuda-13.0/version.json",
               good.substr(0, good.size() - 1) + ", \"pad\": \"" + std::string(1024 * 1024, 'x') + "\"}");
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
  SUBCASE("a directory named version.json") {
    tree.mkdir("cuda-13.0/version.json");
    CHECK_FALSE(version_from_toolkit_json(root, keys));
  }
}

TEST_CASE("toolkit_version prefers version.json, then dist-info, then cuda_runtime_api.h") {
  TempTree tree;
  const auto root = tree.mkdir("cuda");
  tree.write("cuda/include/cuda_runtime_api.h", "#define CUDART_VERSION  13000\n");
  write_dist_info(tree, "cuda/dist-info", "nvidia_cuda_runtime-13.0.96.dist-info", "nvidia-cuda-runtime",
                  "13.0.96");

  SUBCASE("a version.json without \"cuda\" falls through to dist-info") {
    tree.write("cuda/version.json", R"({"cuda_nvrtc": {"version": "13.0.88"}})");
    const auto found = toolkit_version(tree.path("cuda"));
    REQUIRE(found);
    CHECK(found->version == "13.0.96");
    CHECK(found->source == VersionSource::toolkit_dist_info);
  }
  SUBCASE("the meta-package beats the runtime wheel") {
    write_dist_info(tree, "cuda/dist-info", "cuda_toolkit-13.0.2.dist-info", "cuda-toolkit", "13.0.2");
    CHECK(toolkit_version(root)->version == "13.0.2");
  }
  SUBCASE("a CUDA 12 runtime wheel") {
    write_dist_info(tree, "other/dist-info", "nvidia_cuda_runtime_cu12-12.9.79.dist-info", "x", "12.9.79");
    CHECK(toolkit_version(tree.path("other"))->version == "12.9.79");
  }
  SUBCASE("version.json first") {
    tree.write("cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})");
    const auto found = toolkit_version(root);
    REQUIRE(found);
    CHECK(found->version == "13.0.2");
    CHECK(found->source == VersionSource::toolkit_version_json);
  }
  SUBCASE("the header last") {
    TempTree bare;
    bare.write("include/cuda_runtime_api.h", "#define CUDART_VERSION 12040\n");
    const auto found = toolkit_version(bare.root());
    REQUIRE(found);
    CHECK(found->version == "12.4");
    CHECK(found->source == VersionSource::header_macro);
  }
  SUBCASE("nothing") {
    CHECK_FALSE(toolkit_version(tree.path("nowhere")));
    CHECK_FALSE(toolkit_version(tree.mkdir("empty")));
  }
}

TEST_CASE("version_from_conda_meta matches record file names first") {
  TempTree tree;
  const auto prefix = tree.mkdir("env");
  tree.write("env/conda-meta/cuda-nvrtc-13.0.88-h4bc722e_0.json", conda_record("cuda-nvrtc", "13.0.88"));
  tree.write("env/conda-meta/cuda-nvrtc-dev-13.0.88-h4bc722e_0.json",
             conda_record("cuda-nvrtc-dev", "13.0.88"));
  tree.write("env/conda-meta/libnvjitlink-13.0.88-h4bc722e_0.json", conda_record("libnvjitlink", "13.0.88"));
  tree.write("env/conda-meta/cuda-cccl_linux-64-13.0.85-ha770c72_0.json",
             conda_record("cuda-cccl_linux-64", "13.0.85"));
  tree.write("env/conda-meta/history", "==> 2025-10-15 <==\n");

  SUBCASE("a plain name") {
    const std::string_view names[] = {"cuda-nvrtc"};
    const auto found = version_from_conda_meta(prefix, names);
    REQUIRE(found);
    CHECK(found->version == "13.0.88");
    CHECK(found->source == VersionSource::conda_meta);
    CHECK(found->evidence == fs::join(prefix, "conda-meta/cuda-nvrtc-13.0.88-h4bc722e_0.json"));
  }
  SUBCASE("names with dashes, and no prefix matches") {
    const std::string_view cccl[] = {"cuda-cccl_linux-64"};
    CHECK(version_from_conda_meta(prefix, cccl)->version == "13.0.85");
    const std::string_view dev[] = {"cuda-nvrtc-dev"};
    CHECK(version_from_conda_meta(prefix, dev)->evidence.find("cuda-nvrtc-dev-13.0.88") != std::string::npos);
    const std::string_view partial[] = {"cuda", "cuda-cccl", "nvrtc"};
    CHECK_FALSE(version_from_conda_meta(prefix, partial));
  }
  SUBCASE("priority") {
    const std::string_view names[] = {"libnvjitlink-dev", "libnvjitlink", "cuda-nvrtc"};
    CHECK(version_from_conda_meta(prefix, names)->evidence.find("libnvjitlink-13.0.88") != std::string::npos);
  }
  SUBCASE("the record's JSON is checked") {
    tree.write("env/conda-meta/libcublas-13.1.0.3-h_0.json", conda_record("libcublas", "13.1.0.3.post1"));
    const std::string_view cublas[] = {"libcublas"};
    CHECK(version_from_conda_meta(prefix, cublas)->version == "13.1.0.3.post1");
    tree.write("env/conda-meta/libcufft-12.0.0.61-h_0.json", conda_record("libcurand", "10.4.0.35"));
    const std::string_view cufft[] = {"libcufft"};
    CHECK_FALSE(version_from_conda_meta(prefix, cufft));
  }
  SUBCASE("a garbled record is trusted by its file name") {
    tree.write("env/conda-meta/cuda-cudart-13.0.96-h_0.json", "{\"name\": \"cuda-cudart\", \"vers\xff");
    const std::string_view names[] = {"cuda-cudart"};
    const auto found = version_from_conda_meta(prefix, names);
    REQUIRE(found);
    CHECK(found->version == "13.0.96");
    CHECK(found->evidence.find("file name") != std::string::npos);
  }
  SUBCASE("file names that are not records") {
    tree.write("env/conda-meta/libcurand-10.4.0.35.json", conda_record("libcurand", "10.4.0.35"));
    tree.write("env/conda-meta/libcusparse-garbage\xff-h_0.json", conda_record("libcusparse", "12.6.3.3"));
    tree.mkdir("env/conda-meta/libcusolver-12.0.4.66-h_0.json");
    const std::string_view names[] = {"libcurand", "libcusparse", "libcusolver", "libcurand-10.4.0.35"};
    CHECK_FALSE(version_from_conda_meta(prefix, names));
  }
  SUBCASE("no conda-meta") {
    const std::string_view names[] = {"cuda-nvrtc"};
    CHECK_FALSE(version_from_conda_meta(tree.path("nowhere"), names));
    CHECK_FALSE(version_from_conda_meta(tree.mkdir("empty"), names));
    CHECK_FALSE(version_from_conda_meta(prefix, {}));
  }
}

TEST_CASE("version_from_conda_meta in a prefix with thousands of records") {
  TempTree tree;
  const auto prefix = tree.mkdir("env");
  for (int i = 0; i < 3000; ++i) {
    tree.write("env/conda-meta/package" + std::to_string(i) + "-1.0-0.json", "{not json");
  }
  tree.write("env/conda-meta/libnvjitlink-13.0.88-h_0.json", conda_record("libnvjitlink", "13.0.88"));
  const std::string_view names[] = {"libnvjitlink"};
  const auto found = version_from_conda_meta(prefix, names);
  REQUIRE(found);
  CHECK(found->version == "13.0.88");
}

TEST_CASE("cccl_version_from_headers decodes CCCL, Thrust and CUB version macros") {
  TempTree tree;
  const auto include = tree.mkdir("include");

  SUBCASE("CCCL_VERSION in the generated header") {
    tree.write("include/cuda/version", "#ifndef _CUDA_VERSION\n#include <cuda/std/version>\n#endif\n");
    tree.write("include/cuda/std/__cccl/version.h", "#define CCCL_VERSION 3000001\n"
                                                    "#define CCCL_MAJOR_VERSION (CCCL_VERSION / 1000000)\n");
    tree.write("include/thrust/version.h", "#define THRUST_VERSION 200802\n");
    const auto found = cccl_version_from_headers(include);
    REQUIRE(found);
    CHECK(found->version == "3.0.1");
    CHECK(found->source == VersionSource::header_macro);
    CHECK(found->evidence == fs::join(include, "cuda/std/__cccl/version.h"));
  }
  SUBCASE("CCCL_VERSION in <cuda/version>") {
    tree.write("include/cuda/version", "#  define CCCL_VERSION 2008002 /* 2.8.2 */\n");
    CHECK(cccl_version_from_headers(include)->version == "2.8.2");
  }
  SUBCASE("literal component macros") {
    tree.write("include/cuda/std/version", "#define CCCL_MAJOR_VERSION 3\n#define CCCL_MINOR_VERSION 1\n"
                                           "#define CCCL_PATCH_VERSION 4\n");
    CHECK(cccl_version_from_headers(include)->version == "3.1.4");
  }
  SUBCASE("CCCL_VERSION wins wherever it is in the file; a zero gives way to the component macros") {
    tree.write("include/cuda/std/version", "#define CCCL_MAJOR_VERSION 2\n#define CCCL_MINOR_VERSION 7\n"
                                           "#define CCCL_PATCH_VERSION 1\n#define CCCL_VERSION 2008000\n");
    CHECK(cccl_version_from_headers(include)->version == "2.8.0");
    tree.write("include/cuda/std/version", "#define CCCL_MAJOR_VERSION 2\n#define CCCL_VERSION 0\n"
                                           "#define CCCL_MINOR_VERSION 7\n#define CCCL_PATCH_VERSION 1\n"
                                           "#define CCCL_VERSION 2008000\n");
    CHECK(cccl_version_from_headers(include)->version == "2.7.1"); // the first definition of each counts
  }
  SUBCASE("THRUST_VERSION is major*100000 + minor*100 + subminor") {
    tree.write("include/cuda/std/__cccl/version.h", "#define CCCL_VERSION (garbage)\n");
    tree.write("include/thrust/version.h",
               "#define THRUST_VERSION 101702 // macro expansion with ## requires this to be a single value\n"
               "#define THRUST_MAJOR_VERSION (THRUST_VERSION / 100000)\n");
    tree.write("include/cub/version.cuh", "#define CUB_VERSION 200000\n");
    const auto found = cccl_version_from_headers(include);
    REQUIRE(found);
    CHECK(found->version == "1.17.2");
    CHECK(found->evidence == fs::join(include, "thrust/version.h"));
  }
  SUBCASE("CUB_VERSION last") {
    tree.write("include/cub/version.cuh", "#define CUB_VERSION_X 1\n#define CUB_VERSION 300500 // x\n");
    CHECK(cccl_version_from_headers(include)->version == "3.5.0");
  }
  SUBCASE("only #define lines count") {
    tree.write("include/cuda/std/__cccl/version.h", "// #define CCCL_VERSION 3000001\n"
                                                    "int CCCL_VERSION = 3000001;\n"
                                                    "#define CCCL_VERSION 3000001 + 1\n"
                                                    "#define CCCL_VERSION(x) 3000001\n"
                                                    "#define CCCL_VERSION 0x2dc6c1\n");
    CHECK_FALSE(cccl_version_from_headers(include));
  }
  SUBCASE("garbage and nothing") {
    CHECK_FALSE(cccl_version_from_headers(include));
    CHECK_FALSE(cccl_version_from_headers(tree.path("missing")));
    tree.write("include/thrust/version.h", "\xff\xfe\0#define THRUST_VERSION 99999999999999999999999\n"sv);
    tree.mkdir("include/cub/version.cuh");
    CHECK_FALSE(cccl_version_from_headers(include));
  }
}

TEST_CASE("cuda_version_from_header decodes CUDA_VERSION and CUDART_VERSION") {
  TempTree tree;
  const auto include = tree.mkdir("include");
  tree.write("include/cuda.h", "#ifndef __cuda_cuda_h__\n/**\n * CUDA API version number\n */\n"
                               "#define CUDA_VERSION_MAJOR_X 1\n#define CUDA_VERSION 13000\n");
  tree.write("include/cuda_runtime_api.h", "#define CUDART_VERSION  12080\r\n");

  const auto cuda = cuda_version_from_header(include, "cuda.h", "CUDA_VERSION");
  REQUIRE(cuda);
  CHECK(cuda->version == "13.0");
  CHECK(cuda->source == VersionSource::header_macro);
  CHECK(cuda->evidence == fs::join(include, "cuda.h"));
  CHECK(cuda_version_from_header(include, "cuda_runtime_api.h", "CUDART_VERSION")->version == "12.8");

  CHECK_FALSE(cuda_version_from_header(include, "cuda.h", "CUDART_VERSION"));
  CHECK_FALSE(cuda_version_from_header(include, "cuda.h", ""));
  CHECK_FALSE(cuda_version_from_header(include, "nvrtc.h", "NVRTC_VERSION"));
  tree.write("include/tiny.h", "#define CUDA_VERSION 999\n");
  CHECK_FALSE(cuda_version_from_header(include, "tiny.h", "CUDA_VERSION"));
  tree.write("include/binary.h", "\x7f"
                                 "ELF\0\0\xff#define CUDA_VERSION\0 13000\n"sv);
  CHECK_FALSE(cuda_version_from_header(include, "binary.h", "CUDA_VERSION"));
}

TEST_CASE(
    "header macros are found wherever they lie in the first 512 KiB, a line across the first read included") {
  // The first read takes the head of the file (16 KiB); the rest is read only when the macros are
  // not all there. Each offset puts the macros before, across and after that boundary.
  TempTree tree;
  const auto include = tree.mkdir("include");
  const auto header_with_macros_at = [&](std::size_t offset) {
    const std::string macros = "#define LIB_VER_MAJOR 12\n#define LIB_VER_MINOR 4\n#define LIB_VER_PATCH 1\n";
    std::string text;
    while (text.size() + 40 < offset) {
      text += "/* padding padding padding padding */\n";
    }
    text.append(offset - text.size(), ' ');
    text += macros + "/* tail */\n";
    return text;
  };
  for (const std::size_t offset :
       {std::size_t{0}, std::size_t{16 * 1024 - 30}, std::size_t{16 * 1024 - 1}, std::size_t{16 * 1024},
        std::size_t{64 * 1024 - 20}, std::size_t{300 * 1024}, std::size_t{512 * 1024 - 100}}) {
    CAPTURE(offset);
    tree.write("include/lib.h", header_with_macros_at(offset));
    const auto found =
        version_from_macros(include, "lib.h", "LIB_VER_MAJOR", "LIB_VER_MINOR", "LIB_VER_PATCH");
    REQUIRE(found);
    CHECK(found->version == "12.4.1");
  }
  // Past the first 512 KiB a header's macros are not looked for.
  tree.write("include/lib.h", header_with_macros_at(600 * 1024));
  CHECK_FALSE(version_from_macros(include, "lib.h", "LIB_VER_MAJOR", "LIB_VER_MINOR", "LIB_VER_PATCH"));
}

TEST_CASE("compare_versions orders dotted numbers") {
  CHECK(compare_versions("13.0.88", "13.0.9") > 0);
  CHECK(compare_versions("13.0.9", "13.0.88") < 0);
  CHECK(compare_versions("12.4", "12.4.0") == 0);
  CHECK(compare_versions("12.4.0.0", "12.4") == 0);
  CHECK(compare_versions("13.0", "12.9.86") > 0);
  CHECK(compare_versions("580.95.05", "580.95.5") == 0);
  CHECK(compare_versions("1.0", "1.0.1") < 0);
  CHECK(compare_versions("", "") == 0);
  CHECK(compare_versions("", "0") == 0);
  CHECK(compare_versions("13.0.0rc1", "13.0.0") < 0);
  CHECK(compare_versions("99999999999999999999999.1", "99999999999999999999998.9") > 0);
  CHECK(compare_versions("13.3.5.0.6", "13.3.4.3.1") > 0);
}

TEST_CASE("major_minor of a version") {
  CHECK(major_minor("13.0.88") == std::pair{13, 0});
  CHECK(major_minor("12.9") == std::pair{12, 9});
  CHECK(major_minor("580.95.05") == std::pair{580, 95});
  CHECK_FALSE(major_minor("13"));
  CHECK_FALSE(major_minor(""));
  CHECK_FALSE(major_minor("x.1"));
  CHECK_FALSE(major_minor("13.x"));
  CHECK_FALSE(major_minor("13.0rc1"));
  CHECK_FALSE(major_minor("-1.0"));
  CHECK_FALSE(major_minor("99999999999.0"));
}

// The CPU host's /usr/local/cuda is assembled from CUDA 13.0 wheels: no version.json, a dist-info/
// folder, CCCL under include/cccl. Other machines check the same relations on whatever they have.
TEST_CASE("versions of the real toolkit at /usr/local/cuda") {
  const std::string root = "/usr/local/cuda";
  const auto cuda_h = cuda_version_from_header(fs::join(root, "include"), "cuda.h", "CUDA_VERSION");
  if (!cuda_h) {
    CUDADIAG_SKIP("no /usr/local/cuda/include/cuda.h");
  }
  const auto cuda_mm = major_minor(cuda_h->version);
  REQUIRE(cuda_mm);
  const auto runtime_h =
      cuda_version_from_header(fs::join(root, "include"), "cuda_runtime_api.h", "CUDART_VERSION");
  REQUIRE(runtime_h);
  CHECK(runtime_h->version == cuda_h->version);

  const auto toolkit = toolkit_version(root);
  REQUIRE(toolkit);
  CHECK(major_minor(toolkit->version) == cuda_mm);

  const std::string include_cccl = fs::exists(fs::join(root, "include/cccl/cuda/std/version"))
                                       ? fs::join(root, "include/cccl")
                                       : fs::join(root, "include");
  const auto cccl = cccl_version_from_headers(include_cccl);
  if (cccl) {
    // CUDA 12.x ships CCCL 2.x, CUDA 13.x ships CCCL 3.x (and CUDA 11.x Thrust 1.x).
    const auto cccl_mm = major_minor(cccl->version);
    REQUIRE(cccl_mm);
    CHECK(cccl_mm->first == cuda_mm->first - 10);
  }

  const auto dist_info = fs::join(root, "dist-info");
  if (!fs::is_directory(dist_info)) {
    CUDADIAG_SKIP("/usr/local/cuda has no dist-info folder");
  }
  const std::string_view nvrtc_names[] = {"nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12"};
  const auto nvrtc = version_from_dist_info(dist_info, nvrtc_names);
  REQUIRE(nvrtc);
  CHECK(nvrtc->source == VersionSource::toolkit_dist_info);
  CHECK(major_minor(nvrtc->version) == cuda_mm);
  const std::string_view cccl_names[] = {"nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12"};
  const auto cccl_wheel = version_from_dist_info(dist_info, cccl_names);
  if (cccl && cccl_wheel) {
    // The toolkit's CCCL wheel is numbered like the toolkit (13.0.85 carries CCCL 3.0.1); later
    // standalone wheels embed the CCCL version instead (13.3.5.0.6 carries CCCL 3.5.0).
    const auto wheel_mm = major_minor(cccl_wheel->version);
    REQUIRE(wheel_mm);
    CHECK(wheel_mm->first == cuda_mm->first);
  }

  if (!fs::is_directory(fs::join(dist_info, "nvidia_cuda_nvrtc-13.0.88.dist-info"))) {
    CUDADIAG_SKIP("not the CUDA 13.0 wheel-assembled toolkit: the exact checks are not made");
  }
  CHECK(cuda_h->version == "13.0");
  CHECK(nvrtc->version == "13.0.88");
  CHECK(nvrtc->evidence == fs::join(dist_info, "nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA"));
  CHECK(toolkit->version == "13.0.96"); // nvidia_cuda_runtime-13.0.96: there is no version.json
  CHECK(toolkit->source == VersionSource::toolkit_dist_info);
  REQUIRE(cccl);
  CHECK(cccl->version == "3.0.1");
  CHECK(cccl->evidence == fs::join(root, "include/cccl/cuda/std/__cccl/version.h"));
  REQUIRE(cccl_wheel);
  CHECK(cccl_wheel->version == "13.0.85");
  const std::string_view jitlink_names[] = {"nvidia-nvjitlink"};
  CHECK(version_from_dist_info(dist_info, jitlink_names)->version == "13.0.88");
  // Wheel-installed libraries are named only by SONAME: the file name says nothing more.
  CHECK_FALSE(version_from_file_name("libnvrtc.so.13", "libnvrtc.so.13"));
}
