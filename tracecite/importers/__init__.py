"""Importers: vendor transcripts turned into TraceCite traces (SPEC §10)."""
