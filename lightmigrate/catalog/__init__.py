"""Lightning 1.x -> 2.x knowledge as data: hooks, removed APIs, moved imports, Trainer arguments, and the spec's rows."""
