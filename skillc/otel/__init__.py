"""Runs as OpenTelemetry spans (modules are imported where used; the SDK only when spans are sent)."""
