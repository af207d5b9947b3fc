"""The site: machines, queues, server settings and roles, read from a TOML file.

Both ``batchd replay`` and the daemon read the same site file, so the same file
gives the same schedule in both.
"""
