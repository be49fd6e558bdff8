// PEP 440/508 and the framework METADATA reader: part 1 is a version, part 2 a specifier set,
// part 3 a marker, part 4 a METADATA file whose Requires-Dist lines are parsed and checked against
// it. Properties: a version that parses normalises to a text that parses to the same version, and
// a version equals itself.
#include "python/distributions.hpp"
#include "python/framework_requirements.hpp"
#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int python_requirements(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 4);
  if (const auto version = python::parse_version(parts[0])) {
    const auto again = python::parse_version(version->to_string());
    check(again.has_value() && python::compare(*again, *version) == 0,
          "a normalised version that reads back differently");
  }
  if (const auto specifiers = python::parse_specifiers(parts[1])) {
    static_cast<void>(python::satisfies(parts[0], *specifiers));
  }
  const python::MarkerEnvironment markers = {{"python_version", "3.12"},
                                             {"sys_platform", "linux"},
                                             {"platform_system", "Linux"},
                                             {"platform_machine", "x86_64"},
                                             {"extra", "cuda"}};
  static_cast<void>(python::evaluate_marker(parts[2], markers));
  const auto root = fresh_dir("python_requirements");
  write_file(root + "/torch-2.11.0.dist-info/METADATA", parts[3]);
  const auto installed = python::installed_distributions({root});
  for (const auto& distribution : installed) {
    for (const auto& text : distribution.requires_dist) {
      static_cast<void>(python::parse_requirement(text));
    }
  }
  static_cast<void>(python::unmet_framework_requirements(installed, markers));
  return 0;
}

} // namespace cudadiag::fuzz
