"""The scheduling policies, each built by name through ``batchd.sched.registry``.

In order (``inorder``), EASY (``easy``, ``reordered``, ``utility_easy``),
conservative (``conservative``), dynP (``dynp`` with ``decider``, ``quality``,
``standing``), the moldable ones (``moldable_*``), and the gates that hold jobs
to time windows (``gate``, ``primetime``, ``queues``); ``reserved`` is the queue
of an advance reservation.
"""
