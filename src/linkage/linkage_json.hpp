#pragma once
// The report's "linkage" section (docs/schema/report.schema.json): per found library, each
// answer's predicted closure as a list of objects in load order (indexes link needs to objects)
// and what would stop the load. Written straight from the closures (a third of a report's bytes,
// most of it in a torch environment), not through a tree.

#include "core/json_text.hpp"
#include "linkage/linkage.hpp"

namespace cudadiag::linkage {

// The section's object, written where `out` stands.
void write_linkage(JsonStream& out, const Linkage& linkage);

} // namespace cudadiag::linkage
