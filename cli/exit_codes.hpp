#pragma once
// The CLI's exit codes (README "Exit codes"), shared by its commands.

namespace cudadiag::cli {

inline constexpr int k_exit_not_found = 1; // find: not found; inspect: the process cannot be read
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_internal = 3;

} // namespace cudadiag::cli
