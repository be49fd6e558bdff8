#include "cli_app.hpp"
namespace cudadiag::cli {
int run(int, char**) { return 3; }
}
