#include "core/environment.hpp"

#include <doctest/doctest.h>

using cudadiag::Environment;
using cudadiag::split_search_path;

TEST_CASE("environment: empty values are set but not non_empty, unset is nullopt") {
  Environment env;
  env.set("CUDA_PATH", "");
  CHECK(env.get("CUDA_PATH") == std::optional<std::string>(""));
  CHECK_FALSE(env.non_empty("CUDA_PATH").has_value());
  CHECK_FALSE(env.get("CUDA_HOME").has_value());
  env.set("CUDA_HOME", "/opt/cuda");
  CHECK(env.non_empty("CUDA_HOME") == std::optional<std::string>("/opt/cuda"));
  env.unset("CUDA_HOME");
  CHECK_FALSE(env.get("CUDA_HOME").has_value());
}

TEST_CASE("environment: capture reads this process once, home falls back to the passwd entry") {
  const auto env = Environment::capture();
  CHECK_FALSE(env.cwd.empty());
  Environment copy = env;
  copy.unset("HOME");
  CHECK(copy.home() == cudadiag::home_from_passwd(env.uid));
  copy.passwd_home = "/home/recorded";
  CHECK(copy.home() == "/home/recorded");
}

TEST_CASE("environment: split_search_path keeps empty entries") {
  CHECK(split_search_path("a:b") == std::vector<std::string>{"a", "b"});
  CHECK(split_search_path(":a::") == std::vector<std::string>{"", "a", "", ""});
  CHECK(split_search_path("") == std::vector<std::string>{""});
}
