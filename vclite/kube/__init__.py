"""Speaking the Kubernetes REST API as a client: kubeconfig loading and an HTTP implementation of
the Client protocol, usable against `vcctl server` and against a real cluster alike."""
