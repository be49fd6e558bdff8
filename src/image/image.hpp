#pragma once
// A container image as a root file system (--image REF): an OCI image layout directory (oci-layout,
// index.json, blobs/), a `docker save` / `podman save` archive (.tar, .tar.gz: manifest.json, else
// its OCI index.json), or an unpacked root file system (a directory without oci-layout). The layers
// are applied in order into a fresh temporary directory as the OCI image spec's layer.md says:
// `.wh.NAME` removes NAME of the lower layers, `.wh..wh..opq` every entry of its directory from the
// lower layers; whiteouts are not materialised. The tree is left read-only for the run and removed
// with the Image.
//
// Every archive is treated as hostile: an absolute member name, a ".." component, a hard link whose
// target leaves the root, a symbolic link whose relative target climbs above it, a name or pax
// header longer than the limits, a member larger than what is left of the archive, or more bytes or
// members than the limits allow is an Error naming the layer and the member ("layer 2
// (sha256:ab12…): member ../etc/passwd: a '..' component"); nothing is written outside the tree.
// Members are written through paths resolved inside the tree (core/system_root.hpp), so a link a
// lower layer made never carries a later member out of it.

#include "core/expected.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cudadiag::image {

struct Limits {
  std::uint64_t max_bytes = std::uint64_t{32} << 30U; // written into the tree, all layers together
  std::size_t max_members = 2'000'000;                // all layers together
  std::size_t max_name = 4096;                        // a member's name or link target
  std::size_t max_pax_header = std::size_t{1} << 20U; // one pax or GNU long-name record
  std::chrono::seconds max_time{600};                 // to read and apply every layer
};

struct Layer {
  std::string
      digest; // "sha256:…" as the manifest names it; for a docker-archive without one, its member name
  std::string source; // the blob's path in the layout or archive
};

// The image's config (OCI image-spec config.md, `config`), as far as the run uses it.
struct Config {
  std::vector<std::string> env; // "NAME=VALUE", in order
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::string working_dir;
  std::string user;
  std::map<std::string, std::string> labels;
};

// What the report says of an image: where it came from and its config (no files).
struct ImageInfo {
  std::string reference;       // as given
  std::string format;          // "oci-layout" | "docker-archive" | "rootfs"
  std::string manifest_digest; // "sha256:…" of the manifest (OCI); "" when there is none
  std::string config_digest;   // "sha256:…" (docker-archive: from the config's name); "" for a rootfs
  bool has_config = false;     // a config was read (not a rootfs)
  Config config;
  std::vector<Layer> layers; // lowest first
  std::uint64_t bytes_written = 0;
  std::size_t members = 0;
};

class Image {
public:
  Image() = default;
  Image(Image&& other) noexcept;
  Image& operator=(Image&& other) noexcept;
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  ~Image(); // removes the materialised tree (never an unpacked rootfs)

  ImageInfo info;
  std::string root; // the directory the run reads (a real path)
  // The layer that last wrote each regular file and symbolic link (the root's name for it,
  // "/usr/local/cuda/compat/libcuda.so.1" -> its index in info.layers): findings name the layer.
  std::map<std::string, std::size_t> origin;

  // The layer that put `path` (the root's name) into the image; nullptr when unknown.
  [[nodiscard]] const Layer* layer_of(const std::string& path) const;

private:
  friend Expected<Image> open_image(const std::string& reference, const std::string& work_dir,
                                    const Limits& limits);
  std::string m_owned_tree; // removed by the destructor
};

// Opens `reference` (see above) and materialises it under a fresh directory in `work_dir` ($TMPDIR
// or /tmp when empty). Errors name the reference, the layer and the member.
Expected<Image> open_image(const std::string& reference, const std::string& work_dir,
                           const Limits& limits = {});

} // namespace cudadiag::image
