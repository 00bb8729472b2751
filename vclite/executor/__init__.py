"""L5: the local executor, vclite's kubelet: runs each pod bound to one of its nodes as host processes.

`nodes` builds the Node objects the runtime registers (`--nodes`); `envvars` and `podstatus` are the
pure parts (environment resolution, `$(VAR)` expansion, phase and status rules); `runner` runs one
pod's processes; `executor` is the shell that watches pods and writes their status. This package
never imports the controllers or the scheduler: it talks to them only through API objects.
"""
