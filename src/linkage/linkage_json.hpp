#pragma once
// The report's "linkage" section (docs/schema/report.schema.json): per found library, each
// answer's predicted closure as a list of objects in load order (indexes link needs to objects)
// and what would stop the load.

#include "linkage/linkage.hpp"

#include <nlohmann/json.hpp>

namespace cudadiag::linkage {

nlohmann::json linkage_to_json(const Linkage& linkage);

// The copies that would provide an unresolved symbol: [{"path", "found_via", "version"}].
nlohmann::json providers_to_json(const std::vector<Provider>& providers);

} // namespace cudadiag::linkage
