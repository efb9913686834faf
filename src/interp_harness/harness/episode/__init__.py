"""One episode: the loop that drives an agent through its turns (`runner`) and the task and
system prompts it sends (`prompts`)."""
