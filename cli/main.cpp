#include "cli_app.hpp"

int main(int argc, char** argv) {
  return cudadiag::cli::run(argc, argv);
}
