"""L7: the `vcctl` command line."""
