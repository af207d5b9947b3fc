"""batchd: an emulated cluster batch system."""

__version__ = "0.1.0"
