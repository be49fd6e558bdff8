// Requirement specs (--require, policy files): part 1 is the spec; parts 2 and 3 are an observed
// and a wanted version for version_satisfies with each operator.
#include "policy/requirement.hpp"

#include "targets.hpp"

namespace cudadiag::fuzz {

int requirement(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 3);
  static_cast<void>(policy::parse_requirement(parts[0]));
  for (const auto op :
       {policy::Op::eq, policy::Op::ne, policy::Op::lt, policy::Op::le, policy::Op::gt, policy::Op::ge}) {
    static_cast<void>(policy::version_satisfies(parts[1], op, parts[2]));
  }
  static_cast<void>(policy::same_unit(parts[1], parts[2]));
  return 0;
}

} // namespace cudadiag::fuzz
