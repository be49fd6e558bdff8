#pragma once
// Discovery's names for the candidate value types, which live below the search strategies in
// probes/candidate.hpp (so that probes/ never depends on discovery/).

#include "probes/candidate.hpp"

namespace cudadiag::discovery {

using probes::Candidate;
using probes::Choice;
using probes::LoaderStep;
using probes::LoadOutcome;
using probes::pathfinder_found_via;
using probes::PathfinderStep;
using probes::Sighting;

} // namespace cudadiag::discovery
