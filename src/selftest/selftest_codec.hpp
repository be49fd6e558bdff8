#pragma once
// The self-test's wire codec: every byte the self-test's processes send each other goes through
// here, as JSON text, and nowhere else. The parent's one argument to a `selftest` worker (its
// WorkerConfig), each finished test's record line (a TestResult, typed facts and evidence alike),
// and the free-form messages and summaries of the worker kinds (`selftest`'s summary, `jit_lto`'s
// compile, `ipc_peer`'s socket messages and summary) as evidence records. Decoding is total: a
// field of the wrong type or missing is left at its default, never an exception; text that is not
// a JSON object decodes to nullopt. Encoding replaces bytes that are not UTF-8.

#include "core/evidence.hpp"
#include "selftest/selftest.hpp"
#include "selftest/test_context.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::selftest {

std::string encode_config(const WorkerConfig& config);
std::optional<WorkerConfig> decode_config(std::string_view text);

std::string encode_result(const TestResult& result);
// A record that is not a JSON object decodes to a result with status "error" and nothing else.
TestResult decode_result(std::string_view text);

// An evidence record as one JSON object, and back.
std::string encode_evidence(const Evidence& evidence);
std::optional<Evidence> decode_evidence(std::string_view text);

} // namespace cudadiag::selftest
