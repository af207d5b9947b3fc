"""Thin PBS-style command-line clients for the batchd daemon."""
