#pragma once

namespace cudadiag::cli {
// Parses arguments, runs the requested command through the core library and renders the result.
// Returns the process exit code (see README "Exit codes"); never calls exit() itself.
int run(int argc, char** argv);
} // namespace cudadiag::cli
