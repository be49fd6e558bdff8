// Capturing a command's output for the bundle: exit status, stderr, and the kill at the deadline.
#include "core/command_capture.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <chrono>

using cudadiag::capture_command;
using cudadiag::Environment;
using cudadiag::find_on_path;

TEST_CASE("command capture: stdout, stderr and the exit status") {
  Environment env;
  env.set("GREETING", "hello");
  const auto capture = capture_command(env, {"/bin/sh", "-c", "echo $GREETING; echo oops >&2; exit 3"},
                                       std::chrono::seconds(10));
  REQUIRE(capture);
  CHECK(capture->out == "hello\n");
  CHECK(capture->err == "oops\n");
  CHECK(capture->exit_code == 3);
  CHECK_FALSE(capture->timed_out);
  CHECK(capture->outcome(std::chrono::seconds(10)) == "exit 3");
}

TEST_CASE("command capture: a command that hangs is killed at the deadline, with its children") {
  Environment env;
  const auto start = std::chrono::steady_clock::now();
  const auto capture = capture_command(env, {"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"},
                                       std::chrono::milliseconds(300));
  REQUIRE(capture);
  CHECK(capture->timed_out);
  CHECK(capture->out == "started\n");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(capture->outcome(std::chrono::milliseconds(300)) == "timed out after 0.3 s (killed)");
}

TEST_CASE("command capture: a missing executable is an error, PATH lookup uses the snapshot") {
  Environment env;
  CHECK_FALSE(capture_command(env, {"/no/such/tool", "-q"}, std::chrono::seconds(1)));
  cudadiag::testing::TempTree tree;
  tree.write("bin/nvidia-smi", "#!/bin/sh\n", 0755);
  tree.write("other/nvidia-smi", "not executable", 0644);
  env.set("PATH", tree.path("other") + "::" + tree.path("bin"));
  CHECK(find_on_path(env, "nvidia-smi") == tree.path("bin/nvidia-smi"));
  env.set("PATH", tree.path("other"));
  CHECK_FALSE(find_on_path(env, "nvidia-smi"));
}
