"""pytest configuration for the CLI tests: shared helpers live in cudadiag_harness.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cudadiag_harness  # noqa: E402


def pytest_configure(config):
    cudadiag_harness.register_plugins(config)
