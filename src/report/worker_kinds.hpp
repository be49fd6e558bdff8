#pragma once
// `cudadiag __worker KIND ARGUMENTS...`: the isolated child process of verification and the
// self-test (see worker/process.hpp for the protocol, worker_kinds.cpp for the kinds).

namespace cudadiag::report {

// Runs the worker kind argv[2] (argv[1] is "__worker") and ends the process; see worker::serve.
int worker_main(int argc, char** argv);

} // namespace cudadiag::report
