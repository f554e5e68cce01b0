"""The emulated Octavia provider.

A real provider driver (:mod:`.driver`) hands each change to an emulator
(:mod:`.emulator`) that plans status transitions (:mod:`.planner`) from a
snapshot of the load balancer (:mod:`.tree`) and the current behaviour mode
(:mod:`.modes`), and reports them through Octavia's driver agent.
"""
