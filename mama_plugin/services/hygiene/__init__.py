"""Keeping the store honest and small: forgetting that reaches backups, status, team conflicts, the
success metrics and gc. The top wing: it may read every other."""
