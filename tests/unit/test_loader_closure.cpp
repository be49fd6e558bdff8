// The closure stage on synthetic trees (tests/unit/synthetic_elf.hpp): glibc's search order and
// the inputs that must neither crash nor hang it, and the load check's judgement of a link map.

#include "closure_fixtures.hpp"
#include "linkage/load_check.hpp"
#include "loader/closure.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using cudadiag::linkage::LinkMapFacts;
using cudadiag::linkage::MappedObject;
using cudadiag::loader::build_closure;
using cudadiag::loader::Closure;
using cudadiag::loader::ObjectStore;
using cudadiag::loader::Route;
using cudadiag::loader::SearchSetting;
using cudadiag::testing::library;
using cudadiag::testing::setting_in;
using cudadiag::testing::synthetic_shared_object;
using cudadiag::testing::SyntheticLibrary;
using cudadiag::testing::TempTree;

namespace {

// The closure of `root` opened by its path; its objects point into `store` (one per test: file
// identities are reused once a TempTree is gone).
Closure closure_of(ObjectStore& store, const std::string& root, const SearchSetting& setting,
                   const std::vector<std::string>& preloads = {}) {
  return build_closure(root, Route::root, root.substr(0, root.rfind('/')), preloads, setting, store);
}

// The object of `closure` whose path ends with `suffix`, or nullptr.
const cudadiag::loader::LoadedObject* object(const Closure& closure, const std::string& suffix) {
  for (const auto& item : closure.objects) {
    if (item.path.size() >= suffix.size() &&
        item.path.compare(item.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return &item;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("closure: RUNPATH with $ORIGIN, '..' chains and empty entries, searched in glibc's order") {
  TempTree tree;
  ObjectStore store;
  tree.mkdir("cwd");
  library(tree, "cwd/libincwd.so.1", {.soname = "libincwd.so.1"});
  library(tree, "pkg/deps/libdep.so.1", {.soname = "libdep.so.1"});
  const auto root = library(tree, "pkg/lib/libroot.so.1",
                            {.soname = "libroot.so.1",
                             .needed = {"libdep.so.1", "libincwd.so.1"},
                             .runpath = "$ORIGIN/../../pkg/lib/../deps::${ORIGIN}/nowhere"});
  const auto closure = closure_of(store, root, setting_in(tree));
  REQUIRE(closure.loads());
  const auto* dep = object(closure, "libdep.so.1");
  REQUIRE(dep != nullptr);
  CHECK(dep->route == Route::runpath);
  const auto* in_cwd = object(closure, "libincwd.so.1");
  REQUIRE(in_cwd != nullptr); // the empty RUNPATH entry is the current directory
  CHECK(in_cwd->route == Route::runpath);
  CHECK(in_cwd->search_dir == tree.path("cwd"));

  // A missing directory inside a '..' chain fails the open, as the kernel resolves it; an empty
  // DT_RUNPATH names no directory at all (glibc 2.36, measured), not the current one.
  const auto through_missing =
      library(tree, "pkg/lib/libx.so", {.needed = {"libdep.so.1"}, .runpath = "$ORIGIN/nothing/../../deps"});
  CHECK_FALSE(closure_of(store, through_missing, setting_in(tree)).loads());
  const auto empty = library(tree, "pkg/lib/libempty.so", {.needed = {"libincwd.so.1"}, .runpath = ""});
  CHECK_FALSE(closure_of(store, empty, setting_in(tree)).loads());
  const auto relative =
      library(tree, "pkg/lib/librel.so", {.needed = {"libincwd.so.1"}, .runpath = "../cwd"});
  CHECK(closure_of(store, relative, setting_in(tree)).loads()); // relative to the process's cwd
}

TEST_CASE("closure: a dependency cycle is loaded once each and ends") {
  TempTree tree;
  ObjectStore store;
  library(tree, "lib/liba.so.1", {.soname = "liba.so.1", .needed = {"libb.so.1"}, .runpath = "$ORIGIN"});
  library(tree, "lib/libb.so.1",
          {.soname = "libb.so.1", .needed = {"liba.so.1", "libb.so.1"}, .runpath = "$ORIGIN"});
  const auto closure = closure_of(store, tree.path("lib/liba.so.1"), setting_in(tree));
  CHECK(closure.loads());
  CHECK(closure.objects.size() == 2);
}

TEST_CASE("closure: a DT_NEEDED entry with a slash is opened as written, relative to the cwd") {
  TempTree tree;
  ObjectStore store;
  library(tree, "abs/libabs.so", {.soname = "libabs.so"});
  library(tree, "cwd/rel/librel.so", {.soname = "librel.so"});
  const auto root =
      library(tree, "lib/libroot.so", {.needed = {tree.path("abs/libabs.so"), "rel/librel.so"}});
  const auto closure = closure_of(store, root, setting_in(tree));
  REQUIRE(closure.loads());
  REQUIRE(object(closure, "libabs.so") != nullptr);
  CHECK(object(closure, "libabs.so")->route == Route::path_in_name);
  REQUIRE(object(closure, "librel.so") != nullptr);

  const auto gone = library(tree, "lib/libgone.so", {.needed = {tree.path("abs/nothing.so")}});
  const auto broken = closure_of(store, gone, setting_in(tree));
  CHECK_FALSE(broken.loads());
  REQUIRE(broken.missing.size() == 1);
  CHECK(broken.missing[0].name == tree.path("abs/nothing.so"));
}

TEST_CASE(
    "closure: DT_RPATH is inherited down the chain, DT_RUNPATH is not, LD_LIBRARY_PATH beats DT_RUNPATH") {
  TempTree tree;
  ObjectStore store;
  library(tree, "rp/libleaf.so.1", {.soname = "libleaf.so.1"});
  library(tree, "mid/libmid.so.1", {.soname = "libmid.so.1", .needed = {"libleaf.so.1"}});
  const auto with_rpath = library(
      tree, "a/libtop.so", {.needed = {"libmid.so.1"}, .rpath = tree.path("mid") + ":" + tree.path("rp")});
  const auto inherited = closure_of(store, with_rpath, setting_in(tree));
  REQUIRE(inherited.loads());
  CHECK(object(inherited, "libleaf.so.1")->route == Route::rpath);

  const auto with_runpath = library(
      tree, "b/libtop.so", {.needed = {"libmid.so.1"}, .runpath = tree.path("mid") + ":" + tree.path("rp")});
  const auto not_inherited = closure_of(store, with_runpath, setting_in(tree));
  CHECK_FALSE(not_inherited.loads());
  REQUIRE(not_inherited.missing.size() == 1);
  CHECK(not_inherited.missing[0].name == "libleaf.so.1");

  library(tree, "llp/libmid.so.1", {.soname = "libmid.so.1"});
  auto setting = setting_in(tree);
  setting.ld_library_path = {tree.path("llp")};
  const auto shadowed = closure_of(store, with_runpath, setting);
  REQUIRE(shadowed.loads());
  CHECK(object(shadowed, "llp/libmid.so.1")->route == Route::ld_library_path);
}

TEST_CASE("closure: an LD_LIBRARY_PATH of thousands of missing directories is searched in order, each asked "
          "about once") {
  // Every entry is looked in, in order: missing ones, a file where a directory should be, a link
  // to a directory; a missing dependency lists every place looked in, as glibc's search went.
  TempTree tree;
  ObjectStore store;
  library(tree, "good/libleaf.so.1", {.soname = "libleaf.so.1"});
  tree.write("not-a-dir", "x");
  tree.symlink("linked", tree.path("good"));
  const auto root = library(tree, "a/libtop.so", {.needed = {"libleaf.so.1", "libabsent.so.1"}});
  auto setting = setting_in(tree);
  for (int i = 0; i < 5000; ++i) {
    setting.ld_library_path.push_back(tree.path("missing/" + std::to_string(i)));
  }
  setting.ld_library_path.push_back(tree.path("not-a-dir"));
  setting.ld_library_path.push_back(tree.path("linked"));
  setting.ld_library_path.push_back(tree.path("good"));
  const auto closure = closure_of(store, root, setting);
  const auto* leaf = object(closure, "libleaf.so.1");
  REQUIRE(leaf != nullptr);
  CHECK(leaf->path == tree.path("linked") + "/libleaf.so.1"); // the first directory that holds it
  CHECK(leaf->route == Route::ld_library_path);
  REQUIRE(closure.missing.size() == 1);
  const auto& absent = closure.missing[0];
  CHECK(absent.name == "libabsent.so.1");
  REQUIRE(absent.searched.size() >= 5003);
  CHECK(absent.searched[0] == tree.path("missing/0"));
  CHECK(absent.searched[4999] == tree.path("missing/4999"));
  CHECK(absent.searched[5000] == tree.path("not-a-dir"));
  CHECK(absent.searched[5002] == tree.path("good"));
}

TEST_CASE("closure: another machine's file is passed over, DF_1_NODEFLIB skips the default directories") {
  TempTree tree;
  ObjectStore store;
  library(tree, "first/libdep.so.1", {.soname = "libdep.so.1", .machine = 183}); // aarch64
  library(tree, "second/libdep.so.1", {.soname = "libdep.so.1"});
  library(tree, "default/libsys.so.1", {.soname = "libsys.so.1"});
  const auto root =
      library(tree, "lib/libroot.so",
              {.needed = {"libdep.so.1"}, .runpath = tree.path("first") + ":" + tree.path("second")});
  const auto closure = closure_of(store, root, setting_in(tree));
  REQUIRE(closure.loads());
  CHECK(object(closure, "second/libdep.so.1") != nullptr);

  const auto plain = library(tree, "lib/libplain.so", {.needed = {"libsys.so.1"}});
  CHECK(closure_of(store, plain, setting_in(tree)).loads());
  const auto nodeflib =
      library(tree, "lib/libnodeflib.so", {.needed = {"libsys.so.1"}, .no_default_lib = true});
  CHECK_FALSE(closure_of(store, nodeflib, setting_in(tree)).loads());
}

TEST_CASE("closure: a preloaded object satisfies a need by its SONAME before any search") {
  TempTree tree;
  ObjectStore store;
  const auto preload = library(tree, "pre/libdep.so.1", {.soname = "libdep.so.1"});
  library(tree, "own/libdep.so.1", {.soname = "libdep.so.1"});
  const auto root = library(tree, "lib/libroot.so", {.needed = {"libdep.so.1"}, .runpath = tree.path("own")});
  const auto closure = closure_of(store, root, setting_in(tree), {preload});
  REQUIRE(closure.loads());
  CHECK(closure.objects.size() == 2);
  CHECK(object(closure, "pre/libdep.so.1")->route == Route::preloaded);
  CHECK(object(closure, "own/libdep.so.1") == nullptr);
}

TEST_CASE("closure: hostile inputs end with an answer: 10,000 DT_NEEDED, a directory, a truncated file") {
  TempTree tree;
  ObjectStore store;
  std::vector<std::string> many;
  for (int i = 0; i < 10000; ++i) {
    many.push_back("libn" + std::to_string(i) + ".so");
  }
  const auto huge = library(tree, "lib/libhuge.so", {.needed = many});
  const auto refused = closure_of(store, huge, setting_in(tree));
  CHECK_FALSE(refused.loads());
  REQUIRE(refused.root_error.has_value());
  CHECK(refused.root_error->find("DT_NEEDED") != std::string::npos);

  tree.mkdir("dirs/libdir.so.1");
  const auto full = synthetic_shared_object({.soname = "libcut.so.1"});
  tree.write("cut/libcut.so.1", full.substr(0, full.size() / 2));
  const auto root = library(
      tree, "lib/libroot.so",
      {.needed = {"libdir.so.1", "libcut.so.1"}, .runpath = tree.path("dirs") + ":" + tree.path("cut")});
  const auto closure = closure_of(store, root, setting_in(tree));
  CHECK_FALSE(closure.loads());
  CHECK(closure.broken.size() == 2);
}

TEST_CASE("load check: the prediction is judged against the link map") {
  TempTree tree;
  ObjectStore store;
  library(tree, "deps/libdep.so.1", {.soname = "libdep.so.1"});
  library(tree, "other/libdep.so.1", {.soname = "libdep.so.1"});
  const auto root =
      library(tree, "lib/libroot.so.1",
              {.soname = "libroot.so.1", .needed = {"libdep.so.1"}, .runpath = tree.path("deps")});
  const auto closure = closure_of(store, root, setting_in(tree));
  REQUIRE(closure.loads());
  LinkMapFacts real;
  real.before = {{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"}};
  real.after = real.before;
  real.after.push_back({root, root});
  real.after.push_back({tree.path("deps/libdep.so.1"), tree.path("deps/libdep.so.1")});

  SUBCASE("the same objects: agrees") {
    const auto check = cudadiag::linkage::judge(closure, root, real);
    CHECK(check.agrees());
    CHECK(check.also_loaded.empty());
  }
  SUBCASE("another copy bound: a difference naming both") {
    real.after.back() = {tree.path("other/libdep.so.1"), tree.path("other/libdep.so.1")};
    const auto check = cudadiag::linkage::judge(closure, root, real);
    CHECK_FALSE(check.agrees());
    REQUIRE(check.differences.size() == 1);
    CHECK(check.differences[0].find(tree.path("deps/libdep.so.1")) != std::string::npos);
    CHECK(check.differences[0].find("took " + tree.path("other/libdep.so.1")) != std::string::npos);
  }
  SUBCASE("the worker's own copy of a dependency is not a difference") {
    real.before.push_back({"/opt/libdep.so.1", "/opt/libdep.so.1"});
    real.after = real.before;
    real.after.push_back({root, root});
    const auto check = cudadiag::linkage::judge(closure, root, real);
    CHECK(check.agrees());
    CHECK(check.already_in_worker.size() == 1);
  }
  SUBCASE("an extra object (a constructor's dlopen) is listed, not a difference") {
    real.after.push_back({"/x/libplugin.so", "/x/libplugin.so"});
    const auto check = cudadiag::linkage::judge(closure, root, real);
    CHECK(check.agrees());
    CHECK(check.also_loaded == std::vector<std::string>{"/x/libplugin.so"});
  }
  SUBCASE("a failure where a load was predicted") {
    real.error = root + ": undefined symbol: foo";
    real.failed_at = root;
    const auto check = cudadiag::linkage::judge(closure, root, real);
    CHECK_FALSE(check.agrees());
    CHECK_FALSE(check.loads());
  }
  SUBCASE("a predicted failure: agrees when dlerror names the predicted cause") {
    const auto missing = library(tree, "lib/libneeds.so", {.needed = {"libabsent.so.7"}});
    const auto failing = closure_of(store, missing, setting_in(tree));
    REQUIRE_FALSE(failing.loads());
    LinkMapFacts failed;
    failed.error = "libabsent.so.7: cannot open shared object file: No such file or directory";
    CHECK(cudadiag::linkage::judge(failing, missing, failed).agrees());
    failed.error = "libother.so: cannot open shared object file: No such file or directory";
    CHECK_FALSE(cudadiag::linkage::judge(failing, missing, failed).agrees());
    CHECK_FALSE(cudadiag::linkage::judge(failing, missing, real).agrees()); // it loaded after all
  }
}

TEST_CASE("link map worker arguments: preloads travel joined by newlines") {
  const std::vector<std::string> paths = {"/a/liba.so", "/b c/libb.so"};
  CHECK(cudadiag::linkage::split_preloads(cudadiag::linkage::join_preloads(paths)) == paths);
  CHECK(cudadiag::linkage::split_preloads("").empty());
  LinkMapFacts facts;
  facts.error = "x";
  facts.after = {{"/l/libc.so.6", "/usr/l/libc.so.6"}};
  const auto back = cudadiag::linkage::decode_link_map(cudadiag::linkage::encode(facts));
  REQUIRE(back.has_value());
  CHECK(back->error == facts.error);
  CHECK(back->after.size() == 1);
  CHECK_FALSE(cudadiag::linkage::decode_link_map("{\"after\": 3}").has_value());
  CHECK_FALSE(cudadiag::linkage::decode_link_map("[").has_value());
}

TEST_CASE("object store: symbol tables released after the checks, and a file read later read as before") {
  // The elf fuzz target's seed: a small library with a GNU hash, versions and references.
  const std::string seed = std::string(CUDADIAG_SOURCE_DIR) + "/fuzz/corpus/elf/versioned-symbols";
  TempTree tree;
  const auto before = tree.copy_file(seed, "a/libseed.so.1");
  const auto after = tree.copy_file(seed, "b/libseed.so.1");
  ObjectStore store;
  const auto* read_before = store.open(before);
  REQUIRE(read_before != nullptr);
  REQUIRE(store.symbols(*read_before));
  CHECK(store.symbols(*read_before)->references().size() == 2);
  const auto* opened_only = store.open(after); // opened, its symbols never asked for
  REQUIRE(opened_only != nullptr);

  store.release_symbols();
  const auto& released = store.symbols(*read_before);
  REQUIRE_FALSE(released);
  CHECK(released.error().message == ObjectStore::k_symbols_released);
  CHECK(store.open(before) == read_before); // the file's facts stay
  CHECK(read_before->elf);
  const auto& read_after = store.symbols(*opened_only);
  REQUIRE(read_after);
  CHECK(read_after->references().size() == 2);
  CHECK(read_after->defines_version("DEP_2"));
}

TEST_CASE("object store: symbol tables of heap blocks from 128 KiB up are released like the others") {
  // release_symbols keeps such a table with the store instead of freeing it (freeing would unmap
  // it); what the store answers is the same: the released error, and a later store reads it as
  // before. 3,000 references make a block of more than 128 KiB (a framework's library has more).
  SyntheticLibrary many;
  many.soname = "libmany.so.1";
  for (int i = 0; i < 3000; ++i) {
    many.undefined_functions.push_back("needed_function_" + std::to_string(i));
  }
  const std::string seed = std::string(CUDADIAG_SOURCE_DIR) + "/fuzz/corpus/elf/versioned-symbols";
  TempTree tree;
  const auto large = tree.write("a/libmany.so.1", synthetic_shared_object(many));
  const auto small = tree.copy_file(seed, "a/libseed.so.1");
  ObjectStore store;
  const auto* large_file = store.open(large);
  const auto* small_file = store.open(small);
  REQUIRE(large_file != nullptr);
  REQUIRE(small_file != nullptr);
  REQUIRE(store.symbols(*large_file));
  REQUIRE(store.symbols(*small_file));
  CHECK(store.symbols(*large_file)->references().size() == 3000);
  CHECK(store.symbols(*large_file)->references()[2999].name == "needed_function_2999");
  CHECK(store.symbols(*large_file)->largest_heap_block() >= (std::size_t{128} << 10U));
  CHECK(store.symbols(*small_file)->largest_heap_block() < (std::size_t{128} << 10U));

  store.release_symbols();
  for (const auto* file : {large_file, small_file}) {
    const auto& released = store.symbols(*file);
    REQUIRE_FALSE(released);
    CHECK(released.error().message == ObjectStore::k_symbols_released);
  }
  ObjectStore fresh;
  const auto* again = fresh.open(large);
  REQUIRE(again != nullptr);
  REQUIRE(fresh.symbols(*again));
  CHECK(fresh.symbols(*again)->references().size() == 3000);
}
