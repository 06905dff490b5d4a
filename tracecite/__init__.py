"""TraceCite: prove that every cited quote appears word for word in its source."""

__version__ = "0.1.0"
