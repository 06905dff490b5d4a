"""Importers: vendor transcripts turned into TraceCite traces (docs/guides/importers.md)."""
