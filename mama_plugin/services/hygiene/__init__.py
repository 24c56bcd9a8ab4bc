"""Hygiene: forgetting that reaches backups, the store's status, team conflicts, the success
metrics and the store's garbage collection. The top wing: it may read every other."""
