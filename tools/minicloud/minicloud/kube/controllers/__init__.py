"""Small controllers acting on the store the way CAPI's controllers act on a real cluster.

They run in the API server's process, poll the store (no watch needed), and write
through it, so every reaction is a real write with a new resourceVersion.
"""
