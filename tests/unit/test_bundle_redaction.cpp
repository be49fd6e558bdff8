// Redaction: which names look secret, URL credentials, secret values wherever they appear (raw,
// as JSON text, with invalid UTF-8), and --redact-paths' home directory and user name.
#include "bundle/redaction.hpp"

#include <doctest/doctest.h>

using cudadiag::Environment;
using cudadiag::bundle::looks_secret;
using cudadiag::bundle::RedactionCounts;
using cudadiag::bundle::Redactor;
using cudadiag::bundle::strip_url_credentials;

TEST_CASE("redaction: secret-looking variable names") {
  for (const char* name :
       {"HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "api_key", "DB_PASSWORD", "PGPASS", "GOOGLE_CREDENTIALS",
        "NGC_AUTH", "SSH_PRIVATE", "SESSION_COOKIE", "X_SIGNATURE"}) {
    CHECK_MESSAGE(looks_secret(name), name);
  }
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "PWD", "HOME", "VIRTUAL_ENV"}) {
    CHECK_FALSE_MESSAGE(looks_secret(name), name);
  }
}

TEST_CASE("redaction: credentials in URLs are removed, the rest of the URL is kept") {
  int replaced = 0;
  CHECK(strip_url_credentials("pip from https://alice:s3cret@pypi.example.com/simple ok", replaced) ==
        "pip from https://<redacted>@pypi.example.com/simple ok");
  CHECK(strip_url_credentials("git+https://ghp_abcdef@github.com/x.git", replaced) ==
        "git+https://<redacted>@github.com/x.git");
  CHECK(replaced == 2);
  // Not credentials: an '@' after the host, no scheme, or nothing before the '@'.
  CHECK(strip_url_credentials("https://host/path?mail=a@b.c", replaced) == "https://host/path?mail=a@b.c");
  CHECK(strip_url_credentials("user@host:/path", replaced) == "user@host:/path");
  CHECK(strip_url_credentials("://@x", replaced) == "://@x");
  CHECK(replaced == 2);
  // Idempotent.
  CHECK(strip_url_credentials("https://<redacted>@h/", replaced) == "https://<redacted>@h/");
  CHECK(replaced == 2);
}

TEST_CASE("redaction: secret values are replaced wherever they appear, in every form") {
  Environment env;
  env.set("MY_API_TOKEN", "tok-123456789");
  env.set("WEIRD_SECRET", std::string("line1\nli\xffne2"));
  env.set("SHORT_KEY", "abc");
  env.set("LD_LIBRARY_PATH", "/opt/tok-123456789/lib");
  const Redactor redactor(env, {});
  RedactionCounts counts;
  CHECK(redactor.apply("dir /opt/tok-123456789/lib", counts) == "dir /opt/<redacted:MY_API_TOKEN>/lib");
  // As a JSON document carries it: invalid bytes as \xNN text, the newline escaped.
  CHECK(redactor.apply("\"line1\\nli\\\\xffne2\"", counts) == "\"<redacted:WEIRD_SECRET>\"");
  CHECK(redactor.apply(std::string("raw line1\nli\xffne2 end"), counts) == "raw <redacted:WEIRD_SECRET> end");
  // Too short to scrub everywhere: "abc" stays in prose (but is withheld where the variable is listed).
  CHECK(redactor.apply("abcdef", counts) == "abcdef");
  CHECK(redactor.shown_value("SHORT_KEY", "abc", counts) == "<redacted>");
  CHECK(counts.secret_values == 4);
  CHECK(redactor.secret_variables() == std::vector<std::string>{"MY_API_TOKEN", "SHORT_KEY", "WEIRD_SECRET"});
}

TEST_CASE("redaction: JSON values and keys are redacted, structure and other types are kept") {
  Environment env;
  env.set("GITHUB_TOKEN", "ghp_0123456789");
  const Redactor redactor(env, {});
  RedactionCounts counts;
  const nlohmann::json document = {
      {"path", "/x/ghp_0123456789"}, {"list", {"https://u:p@h/", 3, true, nullptr}}, {"ghp_0123456789", 1}};
  const auto out = redactor.apply_json(document, counts);
  CHECK(out["path"] == "/x/<redacted:GITHUB_TOKEN>");
  CHECK(out["list"][0] == "https://<redacted>@h/");
  CHECK(out["list"][1] == 3);
  CHECK(out["list"][2] == true);
  CHECK(out["list"][3].is_null());
  CHECK(out.contains("<redacted:GITHUB_TOKEN>"));
  CHECK(counts.secret_values == 2);
  CHECK(counts.url_credentials == 1);
}

TEST_CASE("redaction: --redact-paths replaces the home directory and the user name as whole words") {
  Environment env;
  env.set("HOME", "/home/alice");
  env.set("USER", "alice");
  env.passwd_home = "/home/alice";
  const Redactor plain(env, {});
  RedactionCounts counts;
  CHECK(plain.apply("/home/alice/venv", counts) == "/home/alice/venv");

  const Redactor redactor(env, {true});
  CHECK(redactor.apply("/home/alice/venv/lib", counts) == "<home>/venv/lib");
  CHECK(redactor.apply("/home/alicex/venv", counts) == "/home/alicex/venv"); // another user's home
  CHECK(redactor.apply("/scratch/alice-build/x", counts) == "/scratch/<user>-build/x");
  CHECK(redactor.apply("malice", counts) == "malice"); // not a word of its own
  CHECK(counts.home_dir == 1);
  CHECK(counts.user_name == 1);

  Environment root;
  root.set("HOME", "/root");
  root.set("USER", "root");
  const Redactor root_redactor(root, {true});
  CHECK(root_redactor.apply("/root/venv and rootfs and root", counts) == "<home>/venv and rootfs and root");
}
