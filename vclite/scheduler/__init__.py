"""The batch scheduler (Volcano's model): a session over a snapshot, actions in configured order,
plugins in tiers, and a Statement that commits or discards a gang as one transaction.

`framework/` holds the session machinery (pure), `actions/` and `plugins/` the policies,
`conf.py` the configuration, `registry.py` the name -> class tables and `scheduler.py` the thin
shell that reads the API, runs one session and writes the results. Nothing here imports the
controllers or the executor.
"""
