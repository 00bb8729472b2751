"""L6: wires the API, controllers, scheduler and executor into one process; owns the clock."""
