"""Front ends: produce `.skm` machines from other material (skill documents, traces)."""
