"""Helpers shared by the trainers: checkpoint IO, run logging, plots."""
