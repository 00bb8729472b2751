"""The vcjob controller (Volcano's `pkg/controllers/job`).

Pure core: `state` (the lifecycle table), `policies` (lifecycle-policy resolution and delayed
actions), `podgroup`, `pods` (pods and the env/svc plugins), `status` (counting pods), `commands`
(the annotation through which clients issue actions). Shell: `actions` (the KillJob / KillTarget /
SyncJob primitives through the Client) and `controller` (watch handlers, requests, sync, TTL).
"""
