"""L1: API kinds, field-name constants, enums, quantities, manifest loading. No I/O beyond reading files
given by name; no knowledge of the store, admission or controllers.

Objects are plain JSON-shaped dicts (exactly what YAML/JSON/Kubernetes give), so every field a user
wrote survives a round trip; the modules here give names to the fields and values vclite uses.
"""
