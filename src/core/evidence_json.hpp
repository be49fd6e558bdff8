#pragma once
// Evidence (core/evidence.hpp) as JSON and back, for the edges only: the report's renderers and
// the self-test's wire codec. A record becomes an object (keys in name order, as nlohmann's
// objects keep them), a list an array; integers keep their signedness.

#include "core/evidence.hpp"

#include <nlohmann/json.hpp>

namespace cudadiag {

nlohmann::json evidence_to_json(const Evidence& evidence);
nlohmann::json evidence_value_to_json(const EvidenceValue& value);

// The JSON object `object` as evidence; anything but an object gives an empty record. Binary
// values (which no wire JSON holds) become null.
Evidence evidence_from_json(const nlohmann::json& object);
EvidenceValue evidence_value_from_json(const nlohmann::json& value);

} // namespace cudadiag
