"""L2: versioned objects with Kubernetes semantics (uid, resourceVersion, generation, watch,
selectors, ownerReference garbage collection, finalizers). Knows nothing of admission or kinds'
meanings beyond scope and status subresource."""
