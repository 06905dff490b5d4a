"""Inputs: reading notes files and agent traces into records and format findings."""
