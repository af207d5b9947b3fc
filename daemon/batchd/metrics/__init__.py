"""Schedule metrics (offline) and, later, the Prometheus exporter."""
