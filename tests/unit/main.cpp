// The doctest main of the unit and API test binaries, with honest skips (skip.hpp): a run whose
// every executed test case called CUDADIAG_SKIP exits 77, ctest's SKIP_RETURN_CODE; a run that
// executes no test case exits 1.
#define DOCTEST_CONFIG_IMPLEMENT
#include "skip.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int k_exit_skipped = 77;

struct SkipLedger {
  std::string current_case;
  bool current_skipped = false;
  std::string current_reason;
  std::vector<std::pair<std::string, std::string>> skipped; // (test case, why)
  unsigned cases_run = 0;
  bool run_ended = false;
};

SkipLedger& ledger() {
  static SkipLedger instance;
  return instance;
}

// Follows each test case to learn which ones skipped and how many ran; prints nothing itself.
struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions& /*options*/) {}

  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    ledger().cases_run = stats.numTestCasesPassingFilters;
    ledger().run_ended = true;
  }
  void test_case_start(const doctest::TestCaseData& data) override {
    ledger().current_case = data.m_name;
    ledger().current_skipped = false;
    ledger().current_reason.clear();
  }
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {
    if (ledger().current_skipped) {
      ledger().skipped.emplace_back(ledger().current_case, ledger().current_reason);
    }
  }
  void test_case_exception(const doctest::TestCaseException& /*exception*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("cudadiag_skips", 1, SkipListener);

} // namespace

namespace cudadiag::testing {

void skip_current_case(const std::string& why, const char* file, int line) {
  ADD_MESSAGE_AT(file, line, "SKIPPED: " << why);
  ledger().current_skipped = true;
  ledger().current_reason = why;
}

} // namespace cudadiag::testing

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || !ledger().run_ended) {
    return result;
  }
  if (ledger().cases_run == 0) {
    // The usual cause under ctest: a test case name with ';', which CMake splits into two entries.
    std::printf(
        "[cudadiag] no test case matches the filters given (is there a ';' in the test case's name?)\n");
    return 1;
  }
  if (ledger().skipped.empty()) {
    return result;
  }
  const auto& skipped = ledger().skipped;
  std::printf("[cudadiag] %zu of %u test cases skipped (their precondition is missing here):\n",
              skipped.size(), ledger().cases_run);
  for (const auto& [name, why] : skipped) {
    std::printf("[cudadiag]   %s: %s\n", name.c_str(), why.c_str());
  }
  std::fflush(stdout);
  return result == 0 && skipped.size() == ledger().cases_run ? k_exit_skipped : result;
}
