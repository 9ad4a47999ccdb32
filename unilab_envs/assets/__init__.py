"""Robot models (MJCF) and their facts, one folder per robot."""
