"""Prompt-time recall on top of search: the candidates, the judge's tiers, each model's scale, the
context a prompt gets and Korean read-ahead."""
