"""The session machinery: snapshot, node columns, extension-point table, statement, session.

Pure: nothing in this package performs I/O or reads the clock; time comes in as an argument.
"""
