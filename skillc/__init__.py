"""skillc: compile agent skills into checked, executable state machines."""

__version__ = "0.1.0"
