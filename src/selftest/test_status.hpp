#pragma once
// A self-test's status as the rules, the score and the renderers compare it; its names are spelled
// only by the self-test's wire codec (selftest_codec.cpp), which defines these functions.

#include <optional>
#include <string_view>

namespace cudadiag::selftest {

// A test's result. pass; fail: the GPU, the driver or a library gave a wrong answer or broke;
// skip: it could not run here (the reason says why); error: the test itself broke (its worker
// crashed or hung, an internal error).
enum class TestStatus { pass, fail, skip, error };
// The name the report and the self-test's wire codec spell it with: "pass", "fail", "skip", "error".
std::string_view to_string(TestStatus status);
// The status `text` names; nullopt for any other text.
std::optional<TestStatus> parse_test_status(std::string_view text);

} // namespace cudadiag::selftest
