#pragma once
// The library's only way to say anything: messages go to the handler the application installed
// (set_log_handler / cudadiag_set_log_callback) and nowhere else. Without a handler nothing is
// formatted and nothing is printed; the core library itself never logs.

#include "cudadiag/types.hpp"

#include <string>

namespace cudadiag::api {

// Whether a message at `level` would reach a handler (cheap: one atomic load).
bool log_enabled(LogLevel level);
// Delivers `message` to the installed handler when `level` is at or above its minimum. Never throws:
// an exception from the handler is swallowed.
void log(LogLevel level, const std::string& message);

} // namespace cudadiag::api
