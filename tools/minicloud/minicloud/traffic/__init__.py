"""What happens to each HTTP request on its way to a real service.

- :mod:`.faults`             fault rules: what they match, the error answers they produce (pure)
- :mod:`.hidden_extensions`  an older API: API extensions answered as if not loaded (pure)
- :mod:`.store`              the shared sqlite store of rules, held requests, counts, hidden extensions
- :mod:`.middleware`         the WSGI middleware in each service process: counts, faults, gates, hiding
"""
