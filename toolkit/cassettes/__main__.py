"""`python -m toolkit.cassettes record|check-stable`: the same as `toolkit cassettes ...`."""
import sys

from toolkit.cli import main

if __name__ == "__main__":
    sys.exit(main(["cassettes", *sys.argv[1:]]))
