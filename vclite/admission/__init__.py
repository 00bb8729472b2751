"""L3: admission — pure functions from (operation, new, old, a read-only View) to a defaulted copy or
FieldErrors, per kind, with Volcano's messages. The entry point is `admit.admit`; nothing is
re-exported here. No I/O: the only reads go through the View the apiserver lends.
"""
