"""Front ends: material → `.skm` machines (skill documents, traces, Step Functions and LangGraph graphs)."""
