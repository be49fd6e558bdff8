"""Where the `cudadiag` executable of this installation is: the wheel puts it in the scripts
directory of the environment it is installed into. The search follows ruff's `_find_ruff`."""

import os
import sys
import sysconfig

_NAME = "cudadiag" + (sysconfig.get_config_var("EXE") or "")


def _candidates():
    # The scripts directory of this interpreter's environment (a venv, conda, the system).
    yield os.path.join(sysconfig.get_path("scripts"), _NAME)
    # The base interpreter's, for a venv created with --system-site-packages.
    if sys.base_prefix != sys.prefix:
        yield os.path.join(sysconfig.get_path("scripts", vars={"base": sys.base_prefix}), _NAME)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # <prefix>/lib/pythonX.Y/site-packages/cudadiag -> <prefix>/bin (pip install --prefix,
    # uv run --with, Debian's dist-packages).
    parts = package_root.split(os.sep)
    if len(parts) >= 3 and parts[-1] in ("site-packages", "dist-packages") and parts[-3] == "lib":
        yield os.path.join(os.sep.join(parts[:-3]), "bin", _NAME)
    # pip install --target DIR puts the scripts in DIR/bin.
    yield os.path.join(package_root, "bin", _NAME)
    # pip install --user.
    if sys.version_info >= (3, 10):
        user_scheme = sysconfig.get_preferred_scheme("user")
    else:
        user_scheme = "posix_user"
    yield os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), _NAME)


def find_cudadiag_bin():
    """The path of the `cudadiag` executable installed with this package.

    Raises FileNotFoundError, naming the places searched, when there is none."""
    searched = []
    for candidate in _candidates():
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        searched.append(candidate)
    raise FileNotFoundError("the cudadiag executable is not installed with this package (searched: " +
                            ", ".join(searched) + ")")
