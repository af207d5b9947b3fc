"""The policy protocol and what every policy plans with.

``policy`` is the protocol (what a policy sees, answers and can do); ``order`` the
queue orders; ``profile`` free nodes over time; ``plans`` full plans of a queue on
it; ``forecast`` the planned starts of policies that keep no plan; ``whatif`` a
schedule simulated ahead. Nothing here imports a policy, the registry or a grid.
"""
