"""Fetching: URL rules, address policy, pinned connections, limits, decoding, visible text."""
