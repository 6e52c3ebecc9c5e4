"""What operators look at: ``GET /healthz`` (``health``), ``GET /metrics`` (``metrics``), and the
logs, never with the token (``logs``)."""
