"""`skillc conform`: native transcripts judged by a machine's rules (modules are imported where used)."""
