"""The event core (``engine.core``) and its clocks (``engine.clock``).

Import the module you need: a replay uses the core alone, without asyncio.
"""
