"""Prompt-time recall: the few memories a prompt clearly touches, its judge, each model's scale, the
context block a prompt gets, and Korean read-ahead. Reads search, learning and the graph."""
