"""The services' root: only what every wing reads (templates, evolution chains, one store's warm
state and the caches it holds)."""
