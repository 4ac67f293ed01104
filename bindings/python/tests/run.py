"""ctest's entry point for the Python binding's tests: runs pytest on this directory, or
skips (exit 77) with a clear message when pytest is not installed."""

import os
import sys

try:
    import pytest
except ImportError:
    print("SKIPPED: pytest is not installed (Debian: apt-get install python3-pytest); "
          "the Python binding's tests need it", file=sys.stderr)
    sys.exit(77)

os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
sys.dont_write_bytecode = True
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))] + sys.argv[1:]))
