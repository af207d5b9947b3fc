"""Compiled loops (numba) on int64 arrays, and the rules they share with the policies.

Nothing here imports a policy or the protocol: ``profile`` is the free-node
profile's loops, ``moldable``, ``fairshare`` and ``iterative`` the moldable
policies', ``whatif`` the what-if simulator's, ``sums`` those of dynP's plan
quality, and ``backfill`` EASY's rules in plain Python, which the policies run as
they are and ``whatif`` compiles.
"""
