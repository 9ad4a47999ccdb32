"""The real-time soak's parts (``benchmarks/realtime_soak.py`` is the command): statistics of
timing records, the paced control loop, and the fleets that run K robots."""
