"""The web page with the Gantt chart of running and planned jobs (docs/ui.md).

Plain HTML, CSS and JavaScript in ``static/``, shipped as package data: ``batchd
serve`` serves them at ``/ui`` (``batchd.server.pages``), and ``batchd replay
--gantt`` embeds them with a finished replay's jobs in one file (``standalone``).
This part imports nothing of batchd but the model.
"""
