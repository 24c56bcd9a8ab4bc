"""What an outcome, time and git teach: confidence and its history, a memory's dated notes,
staleness, hubs, premises and lessons, the cited files checked. It reads only the root, so
search can rank by it and a save can judge through it."""
