"""`python -m cudadiag ARGS`: runs the `cudadiag` executable installed with this package, in place
of this interpreter (execv), with the same arguments."""

import os
import sys

from cudadiag._find import find_cudadiag_bin


def _run():
    try:
        executable = find_cudadiag_bin()
    except FileNotFoundError as error:
        print("cudadiag: " + str(error), file=sys.stderr)
        return 2
    os.execv(executable, [executable, *sys.argv[1:]])
    return 2  # execv returns only by raising


if __name__ == "__main__":
    sys.exit(_run())
