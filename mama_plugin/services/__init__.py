"""The services' root: what every wing shares (templates, evolution chains, one store's warm
state and its caches). The wings, bottom up: learning, graph, search, recall, saving, story,
hygiene; each reads the root and the wings below it. Uses storage, never writes SQL."""
