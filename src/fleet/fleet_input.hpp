#pragma once
// Reading the fleet's inputs into a FleetBuilder: report files (one report, or many as JSON lines
// or one document after another), support bundles (.tar.gz from `cudadiag bundle`), directories
// (searched recursively for *.json, *.jsonl, *.ndjson, *.log, *.txt, *.tar.gz and *.tgz, in name
// order) and "-" for standard input (srun, kubectl logs; see json_stream.hpp). Streams are read in
// chunks and documents parsed in batches across threads, so memory stays bounded by the batch, not
// by the input; a directory's files (up to 64 MiB each) are read, split and parsed a window at a
// time on those threads, each file whole. A file that cannot be read or parsed, stray text and documents that
// are not reports become InputProblems; only a path that does not exist is an Error (a usage error).

#include "core/expected.hpp"
#include "fleet/fleet_summary.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::fleet {

struct InputOptions {
  unsigned threads = 0;                             // parser threads; 0 = one per CPU (at most 16)
  std::size_t batch_bytes = std::size_t{64} << 20U; // documents parsed together, at most this much text
};

// Reads every input in order. `standard_input` is used for "-".
Expected<void> read_inputs(const std::vector<std::string>& inputs, std::FILE* standard_input,
                           FleetBuilder& builder, const InputOptions& options = {});

} // namespace cudadiag::fleet
