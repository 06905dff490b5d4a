"""Checks: evidence (captured content), live web pages, local files, and trace comparison."""
