"""L4: the in-process API: admission composed with the store behind one Client protocol."""
