"""`skillc export`: checked machines as graphs of other systems (modules are imported where used)."""
