"""L0: clock, work queue and error types; no knowledge of any API kind."""
