"""A small 1.x project whose Trainer arguments are built in other modules (issue 25, kind 2)."""
