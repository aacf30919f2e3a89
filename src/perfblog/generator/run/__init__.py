"""Stage 2, running: the engine decides what runs, executors (this machine, a Ray cluster) run jobs, the
runner executes one snippet in a fresh Jupyter kernel, the workspace check refuses undeclared writes."""
