"""Background tasks: enqueueing (queue) and the worker that runs them (worker)."""
