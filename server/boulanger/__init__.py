"""boulanger: a Baker's Game race server."""

__version__ = "0.1.0"
