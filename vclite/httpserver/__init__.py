"""`vcctl server`'s HTTP side: the in-process API served as a Kubernetes-compatible REST API
(discovery, OpenAPI, CRUD, watch, Table, patch, apply, logs), with bearer-token auth, TLS,
limits, metrics and request logs. An L7 entry point beside `vclite.cli`; it drives nothing but
HTTP and never contains controller, scheduling or storage logic."""
