"""The daemon: HTTP API, persistence and configuration loading."""
