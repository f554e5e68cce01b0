"""An emulated Kubernetes API server with small Cluster API controllers.

No kube-apiserver can run where minicloud runs, so this package serves the subset
of the API that the official ``kubernetes`` client, ``kubernetes.core`` and CAPI
tooling use, with the same status codes and ``Status`` bodies. Layers, moto-style:

- :mod:`.resources`  the kinds served (group, versions, plural, scope, subresources)
- :mod:`.store`      objects with resourceVersion, generation, finalizers (pure, thread-safe)
- :mod:`.convert`    CAPI v1beta1 <-> v1beta2 views of one stored object (pure)
- :mod:`.app`        the HTTP layer (Flask)
- :mod:`.controllers` CAPI core and infrastructure-provider behaviour
- :mod:`.seed`       objects of a seeded CAPI cluster and of nodes (pure)
"""
