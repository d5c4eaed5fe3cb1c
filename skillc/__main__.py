"""`python -m skillc` runs the command-line interface."""

from skillc.cli import main

if __name__ == "__main__":
    main()
