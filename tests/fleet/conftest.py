"""pytest configuration for the fleet tests; the helpers are shared with tests/cli."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cudadiag_harness  # noqa: E402


def pytest_configure(config):
    cudadiag_harness.register_plugins(config)
